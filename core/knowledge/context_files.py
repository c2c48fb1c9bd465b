"""Loaders for the system message: the shipped context, capped by whole sections, and the index
of skills the model can load on demand.

Called on every chat request, so results are cached by file stats (path, mtime_ns, size): an
unchanged request costs a directory listing and a few stats, an edited file is re-read on the
next request. Output is deterministic, so the system message stays byte-identical (prompt caches).
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..base import env_int
from .skills import Skill

log = logging.getLogger("comfyui_assistant")

SYSTEM_CONTEXT_DIR = Path(__file__).resolve().parents[2] / "system_context"
MAX_CHARS_ENV = "LLM_SYSTEM_CONTEXT_MAX_CHARS"
DEFAULT_MAX_CHARS = 12000
ROLE_FILE = "01_role.md"
COMPACT_DIR = "compact"  # the compact profiles' guidance, inside the system context folder
SEPARATOR = " › "
OMITTED_NOTE = "Sections not loaded to save space (read them with readSystemContext): "
INDEX_DESCRIPTION_CHARS = 200
INDEX_MAX_USER_SKILLS = 50

_Signature = tuple[tuple[str, int, int], ...]  # (path, mtime_ns, size) per top-level file


def max_chars_from_env(environ: Mapping[str, str]) -> int:
    return env_int(environ, MAX_CHARS_ENV, DEFAULT_MAX_CHARS)


@dataclass(frozen=True)
class Section:
    id: str  # "<File title> › <section heading>", or the file title for a file without `## `
    text: str


@dataclass(frozen=True)
class SystemContext:
    text: str
    included: list[str]
    omitted: list[str]
    sections: tuple[Section, ...] = field(default=(), repr=False)

    def section(self, name: str) -> str | None:
        """A section's text by id ("Tools › Common errors"); also accepts '>' for '›', any
        case, or the bare heading when only one section has it."""
        want = _key(name)
        exact = [s for s in self.sections if _key(s.id) == want]
        if exact:
            return exact[0].text
        by_heading = [s for s in self.sections if _key(s.id).rpartition(">")[2] == want]
        return by_heading[0].text if len(by_heading) == 1 else None


def _key(name: str) -> str:
    return re.sub(r"\s*[›>]\s*", ">", " ".join(name.lower().split())).strip()


def _file_title(path: Path) -> str:
    """ "02_tools.md" -> "Tools": the title for a file without a `# ` line."""
    words = re.sub(r"^\d+[_\-\s]*", "", path.stem).replace("_", " ").replace("-", " ").strip()
    words = words or path.stem
    return words[:1].upper() + words[1:]


def split_sections(text: str, title: str) -> tuple[str, list[tuple[str | None, str]]]:
    """(file title, [(heading, exact section text)]). Splits at `## ` lines outside code fences;
    anything before the first one (normally just the `# Title` line) joins the first section."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    chunks: list[tuple[str | None, list[str]]] = [(None, [])]
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if line.startswith("## ") and not fenced:
            chunks.append((line[3:].strip(), [line]))
        else:
            chunks[-1][1].append(line)
    preamble = chunks[0][1]
    first = next((line for line in preamble if line.strip()), "")
    if first.startswith("# "):
        title = first[2:].strip() or title
    if len(chunks) > 1:
        chunks = [(chunks[1][0], preamble + chunks[1][1]), *chunks[2:]]
    sections = [(heading, "\n".join(lines).strip()) for heading, lines in chunks]
    return title, [(heading, body) for heading, body in sections if body]


@lru_cache(maxsize=64)
def _file_sections(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, str], ...]:
    """One file's sections as (id, text); re-read only when its stats change."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        log.warning("system context file %s cannot be read: %s", file, e)
        return ()
    title, sections = split_sections(text, _file_title(file))
    return tuple((f"{title}{SEPARATOR}{h}" if h else title, body) for h, body in sections)


def _signature(directory: Path) -> _Signature:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return ()
    sig: list[tuple[str, int, int]] = []
    for entry in entries:
        if not entry.name.endswith(".md") or entry.name.lower() == "readme.md":
            continue
        try:
            st = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            sig.append((entry.path, st.st_mtime_ns, st.st_size))
    return tuple(sig)


def _render(sections: tuple[Section, ...], chosen: list[int]) -> str:
    """The chosen sections, then one note naming the others (none if nothing is chosen)."""
    omitted = [s.id for i, s in enumerate(sections) if i not in set(chosen)]
    parts = [sections[i].text for i in chosen]
    if omitted and parts:
        parts.append(OMITTED_NOTE + ", ".join(omitted) + ".")
    return "\n\n".join(parts)


@lru_cache(maxsize=16)
def _load(signature: _Signature, max_chars: int) -> tuple[str, tuple[Section, ...], frozenset[int]]:
    """(text, all sections, indexes of the included ones)."""
    sections: list[Section] = []
    seen: dict[str, int] = {}
    for path, mtime_ns, size in signature:
        for sid, body in _file_sections(path, mtime_ns, size):
            seen[sid] = seen.get(sid, 0) + 1
            sections.append(Section(sid if seen[sid] == 1 else f"{sid} ({seen[sid]})", body))
    frozen = tuple(sections)
    chosen: list[int] = []
    used = 0
    for i, s in enumerate(frozen):  # whole sections, in order, skipping those that do not fit
        cost = len(s.text) + (2 if chosen else 0)
        if used + cost <= max_chars:
            chosen.append(i)
            used += cost
    text = _render(frozen, chosen)
    while chosen and len(text) > max_chars:  # make room for the note itself
        chosen.pop()
        text = _render(frozen, chosen)
    return text, frozen, frozenset(chosen)


def load_system_context(
    directory: Path = SYSTEM_CONTEXT_DIR,
    max_chars: int | None = None,
    skip_files: tuple[str, ...] = (),
) -> SystemContext:
    """The top-level `*.md` files of `directory` (not README.md, not `skip_files`) in filename
    order, cut to `max_chars` by whole `## ` sections; left-out sections are named in one
    closing note. `max_chars` defaults to $LLM_SYSTEM_CONTEXT_MAX_CHARS (12000). Text is "" if
    nothing fits. The user's own system prompt replaces the role file (ROLE_FILE)."""
    limit = max_chars_from_env(os.environ) if max_chars is None else max_chars
    signature = tuple(e for e in _signature(directory) if Path(e[0]).name not in skip_files)
    text, sections, chosen = _load(signature, limit)
    return SystemContext(
        text=text,
        included=[s.id for i, s in enumerate(sections) if i in chosen],
        omitted=[s.id for i, s in enumerate(sections) if i not in chosen],
        sections=sections,
    )


def _one_line(text: str, limit: int = INDEX_DESCRIPTION_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:.-") + "…"


def skills_index(
    system: Iterable[Skill], user: Iterable[Skill], max_user: int = INDEX_MAX_USER_SKILLS
) -> str:
    """The skill index block for the system prompt. Model-family skills appear by slug only."""
    system_sorted = sorted(system, key=lambda s: s.slug)
    user_sorted = sorted(user, key=lambda s: s.slug)
    lines = [
        "## Skill index",
        "Load a skill before a task it covers: getSystemSkill(slug) for system skills, "
        "getUserSkill(slug) for user skills. listSystemSkills and listUserSkills list them.",
        "If the user writes /skill <name>, load that skill and follow it.",
        "System skills:",
    ]
    lines += [f"- {s.slug}: {_one_line(s.description)}" for s in system_sorted if not s.is_model]
    models = [s.slug for s in system_sorted if s.is_model]
    if models:
        lines.append(f"Model-family skills (load when that model is used): {', '.join(models)}.")
    if not user_sorted:
        lines.append("User skills: none yet.")
        return "\n".join(lines)
    lines.append("User skills:")
    lines += [f"- {s.slug}: {_one_line(s.description)}" for s in user_sorted[:max_user]]
    if len(user_sorted) > max_user:
        lines.append(f"- ...and {len(user_sorted) - max_user} more (listUserSkills).")
    return "\n".join(lines)


def skill_names_line(system: Iterable[Skill], user: Iterable[Skill]) -> str:
    """The skill index of the compact profiles: the slugs only, in one line or two."""
    procedures = sorted(s.slug for s in system if not s.is_model)
    models = sorted(s.slug for s in system if s.is_model)
    lines = [f"Skills (getSystemSkill): {', '.join(procedures) or 'none'}."]
    if models:
        lines[0] += f" Model notes: {', '.join(models)}."
    users = sorted(s.slug for s in user)
    if users:
        shown = users[:INDEX_MAX_USER_SKILLS]
        more = f" and {len(users) - len(shown)} more" if len(users) > len(shown) else ""
        lines.append(f"User skills (getUserSkill): {', '.join(shown)}{more}.")
    return "\n".join(lines)


def load_context(
    directory: Path, environ: Mapping[str, str], replace_role: bool, compact: bool = False
) -> SystemContext:
    """The shipped guidance, capped; without the role file when something replaces it.
    `compact`: the compact profiles' guidance, from `compact/` in that directory (the shipped
    one when a directory of the user's own has none)."""
    if compact:
        own = directory / COMPACT_DIR
        directory = own if own.is_dir() else SYSTEM_CONTEXT_DIR / COMPACT_DIR
    skip = (ROLE_FILE,) if replace_role else ()
    return load_system_context(directory, max_chars_from_env(environ), skip_files=skip)
