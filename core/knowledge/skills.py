"""Skills as files: a folder `<slug>/SKILL.md` with YAML front matter and a markdown body.

System skills ship read-only in `system_context/skills/`; user skills live in
`<data_dir>/skills/`, edited by hand or by the assistant's tools. Everything here is small,
synchronous file work: async callers run it with `asyncio.to_thread`.
"""

from __future__ import annotations

import builtins
import contextlib
import difflib
import hashlib
import logging
import os
import re
import stat
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..base import RequestError, write_atomic

log = logging.getLogger("comfyui_assistant")

SYSTEM_SKILLS_DIR = Path(__file__).resolve().parents[2] / "system_context" / "skills"
SKILL_FILE = "SKILL.md"
SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
SLUG_RULE = (
    "a slug is 1-64 characters: lowercase ASCII letters, digits, '-' and '_', "
    "starting with a letter or digit"
)
MAX_SKILL_CHARS = 8000
MAX_READ_BYTES = 1_000_000  # hand-edited files above this are refused, never read
_Loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
_Signature = tuple[tuple[str, int, int, int], ...]  # (slug, mtime_ns, size, inode) per skill


def user_skills_dir(data_dir: Path) -> Path:
    return data_dir / "skills"


class SkillError(RequestError):
    """A skill could not be read, parsed or written; the message is fit to show the model (a
    route answers it with its `status`: 400)."""


class SkillNotFound(SkillError):
    """No skill with that slug (404); `suggestions` holds the closest slugs."""

    status = 404

    def __init__(self, slug: str, suggestions: builtins.list[str], note: str = "") -> None:
        self.slug, self.suggestions = slug, suggestions
        hint = f"Closest: {', '.join(suggestions)}." if suggestions else "No similar skills."
        super().__init__(f"No skill {slug!r}{note}. {hint}")


def check_slug(slug: str) -> str:
    """The slug itself if valid, else SkillError. `fullmatch`: no '$' newline loophole."""
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        raise SkillError(f"invalid skill slug {slug!r}: {SLUG_RULE}")
    return slug


def slugify(name: str) -> str:
    """A valid slug for a human name ("Hi-res Fix (SDXL)" -> "hi-res-fix-sdxl")."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9_]+", "-", ascii_name.lower()).strip("-_")[:64].rstrip("-_")
    if not slug:  # nothing ASCII in the name (e.g. Japanese): a stable, still unique slug
        slug = "skill-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return check_slug(slug)


@dataclass(frozen=True)
class Skill:
    slug: str
    name: str
    description: str
    body: str
    path: Path
    size: int  # characters of the whole file (line endings normalised)
    is_model: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_model", "model_" in self.slug)


def _front_matter(lines: builtins.list[str], where: str) -> dict[str, str]:
    """The front matter as YAML says (PyYAML, which ComfyUI installs): every scalar kept as the
    text it is (`BaseLoader`: `yes` stays "yes", `123` stays "123"); other keys are ignored."""
    try:
        meta = yaml.load("\n".join(lines), Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 2})" if mark is not None else ""  # the file's line number
        said = [getattr(exc, "context", None), getattr(exc, "problem", None)]
        problem = ", ".join(str(part) for part in said if part) or "it cannot be read"
        raise SkillError(f"{where}: the front matter is not valid YAML{at}: {problem}") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise SkillError(f"{where}: the front matter must be 'key: value' lines")
    for key in ("name", "description"):
        if not isinstance(meta.get(key, ""), str):
            raise SkillError(f"{where}: the front matter's {key!r} must be text")
    return meta


def parse_skill(text: str, slug: str, path: Path | str) -> Skill:
    """Parse a SKILL.md; SkillError names the file and what is wrong."""
    where = str(path)
    text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[0].strip() != "---":
        raise SkillError(
            f"{where}: no front matter; the file must start with a '---' line, "
            "then 'name: ...' and 'description: ...' lines, then '---'"
        )
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise SkillError(f"{where}: the front matter is not closed; add a '---' line after it")
    meta = _front_matter(lines[1:end], where)
    missing = [k for k in ("name", "description") if not meta.get(k, "").strip()]
    if missing:
        raise SkillError(f"{where}: the front matter is missing {' and '.join(missing)}")
    body = "\n".join(lines[end + 1 :]).lstrip("\n").rstrip()
    return Skill(
        slug=check_slug(slug),
        name=" ".join(meta["name"].split()),
        description=" ".join(meta["description"].split()),
        body=body,
        path=Path(path),
        size=len(text),
    )


def format_skill(name: str, description: str, body: str) -> str:
    """The SKILL.md text (inverse of parse_skill; name and description become one line each)."""
    body = body.replace("\r\n", "\n").replace("\r", "\n").lstrip("\n").rstrip()
    fields = {"name": " ".join(name.split()), "description": " ".join(description.split())}
    head = "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1 << 30)
    head += "---\n"
    return head + (f"\n{body}\n" if body else "")


def closest(slug_or_name: str, skills: Iterable[Skill], n: int = 3) -> builtins.list[str]:
    """Slugs of the skills most like `slug_or_name` (by slug or by name, case-insensitive)."""
    query = " ".join(slug_or_name.lower().split())
    scored: builtins.list[tuple[float, str]] = []
    for skill in skills:
        keys = (skill.slug, skill.name.lower())
        score = max(difflib.SequenceMatcher(None, query, k).ratio() for k in keys)
        if len(query) >= 3 and any(query in k for k in keys):
            score = max(score, 0.8)
        if score >= 0.6:
            scored.append((-score, skill.slug))
    return [slug for _, slug in sorted(scored)[:n]]


class SkillDirectory:
    """The skills in one folder. `list()` is cached by file stats; writes need `writable`."""

    def __init__(self, root: Path, writable: bool) -> None:
        self.root, self.writable = root, writable
        self._lock = threading.Lock()
        self._cache: tuple[_Signature, tuple[Skill, ...]] | None = None

    def _file(self, slug: str) -> Path:
        """The SKILL.md path of a checked slug, refused if it resolves outside the root."""
        root = self.root.resolve()
        path = root / check_slug(slug) / SKILL_FILE
        if not path.resolve().is_relative_to(root):
            raise SkillError(f"skill {slug!r} points outside {root} (symlink); refusing it")
        return path

    def _read(self, slug: str) -> Skill:
        path = self._file(slug)
        try:
            if path.stat().st_size > MAX_READ_BYTES:
                raise SkillError(f"{path}: larger than {MAX_READ_BYTES} bytes; not read")
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SkillNotFound(slug, closest(slug, self.list())) from None
        except UnicodeDecodeError as e:
            raise SkillError(f"{path}: not valid UTF-8 ({e.reason})") from None
        except OSError as e:
            raise SkillError(f"{path}: cannot be read ({e.strerror or e})") from None
        return parse_skill(text, slug, path)

    def _signature(self) -> _Signature:
        try:  # asked on every chat: plain strings, not Path objects
            found = sorted(
                (e.name, e.path) for e in os.scandir(self.root) if SLUG.fullmatch(e.name)
            )
        except (FileNotFoundError, NotADirectoryError):
            return ()
        sig: builtins.list[tuple[str, int, int, int]] = []
        for name, path in found:
            try:
                st = os.stat(os.path.join(path, SKILL_FILE))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                sig.append((name, st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(sig)

    def list(self) -> builtins.list[Skill]:
        """Every readable skill, sorted by slug; malformed ones are logged and skipped."""
        sig = self._signature()
        cache = self._cache
        if cache is not None and cache[0] == sig:
            return builtins.list(cache[1])
        skills: builtins.list[Skill] = []
        for slug, *_ in sig:
            try:
                skills.append(self._read(slug))
            except (SkillError, OSError) as e:
                log.warning("skipping skill %r: %s", slug, e)
        self._cache = (sig, tuple(skills))
        return skills

    def get(self, slug: str) -> Skill:
        """The skill; SkillNotFound (with the closest slugs) if there is none by that slug."""
        if not isinstance(slug, str) or not SLUG.fullmatch(slug):
            note = f" (not a valid slug: {SLUG_RULE})"
            raise SkillNotFound(str(slug), closest(str(slug), self.list()), note)
        return self._read(slug)

    def _check_writable(self) -> None:
        if not self.writable:
            raise SkillError("system skills are read-only; create or edit a user skill instead")

    def _write(self, slug: str, name: str, description: str, body: str) -> Skill:
        _check_fields(name, description)
        text = format_skill(name, description, body)
        if len(text) > MAX_SKILL_CHARS:
            raise SkillError(
                f"skill {slug!r} would be {len(text)} characters; the limit is "
                f"{MAX_SKILL_CHARS}. Shorten it by {len(text) - MAX_SKILL_CHARS} or more "
                "characters, or split it into two skills."
            )
        path = self._file(slug)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
        self._cache = None
        return parse_skill(text, slug, path)

    def create(self, name: str, description: str, body: str, slug: str | None = None) -> Skill:
        """A new skill (slug from the name unless given); refuses an existing slug."""
        self._check_writable()
        _check_fields(name, description)
        slug = slugify(name) if slug is None else check_slug(slug)
        with self._lock:
            if self._file(slug).exists():
                raise SkillError(f"a skill {slug!r} already exists; update it or pick another slug")
            return self._write(slug, name, description, body)

    def update(
        self,
        slug: str,
        *,
        name: str | None = None,
        description: str | None = None,
        body: str | None = None,
    ) -> Skill:
        """Change some fields of an existing skill (other front-matter keys are not kept)."""
        self._check_writable()
        with self._lock:
            old = self.get(slug)
            return self._write(
                slug,
                old.name if name is None else name,
                old.description if description is None else description,
                old.body if body is None else body,
            )

    def delete(self, slug: str) -> None:
        """Remove the skill's SKILL.md, and its folder if nothing else is in it."""
        self._check_writable()
        with self._lock:
            self.get(slug)  # SkillNotFound / symlink refusal before touching anything
            path = self._file(slug)
            path.unlink()
            self._cache = None
            with contextlib.suppress(OSError):  # the user keeps other files there
                path.parent.rmdir()


def _check_fields(name: str, description: str) -> None:
    if not name.strip() or not description.strip():
        raise SkillError("a skill needs a non-empty name and a one-line description")


def list_skills(directory: Any) -> list[Skill]:
    """The skills of a directory: a few stats when nothing changed (SkillDirectory caches)."""
    try:
        return list(directory.list())
    except SkillError:
        return []
