from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from comfyui_assistant.core.base.env_values import env_int
from comfyui_assistant.core.knowledge.context_files import (
    DEFAULT_MAX_CHARS,
    MAX_CHARS_ENV,
    SYSTEM_CONTEXT_DIR,
    load_system_context,
    skills_index,
    split_sections,
)
from comfyui_assistant.core.knowledge.skills import Skill

ONE = "# Alpha\n\n## One\nFirst section."
TWO = "## Two\n" + " ".join(["The second section is the longest one."] * 5)
THREE = "## Three\nThird."
NOTE = "Sections not loaded to save space (read them with readSystemContext): "


@pytest.fixture
def ctx_dir(tmp_path: Path) -> Path:
    (tmp_path / "01_alpha.md").write_text(f"{ONE}\n\n{TWO}\n", encoding="utf-8")
    (tmp_path / "02_beta-notes.md").write_text(f"\n{THREE}\n\n\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# Not sent\n\n## Ever\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("## Not markdown\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "00_nested.md").write_text("## Nested\n", encoding="utf-8")
    return tmp_path


def test_everything_fits(ctx_dir: Path) -> None:
    ctx = load_system_context(ctx_dir, 10_000)
    assert ctx.text == f"{ONE}\n\n{TWO}\n\n{THREE}"
    assert ctx.included == ["Alpha › One", "Alpha › Two", "Beta notes › Three"]
    assert ctx.omitted == []


def test_cap_keeps_whole_sections_and_names_the_rest(ctx_dir: Path) -> None:
    ctx = load_system_context(ctx_dir, 131)  # exactly the length of the result
    assert ctx.text == (
        "# Alpha\n\n## One\nFirst section.\n\n## Three\nThird.\n\n"
        "Sections not loaded to save space (read them with readSystemContext): Alpha › Two."
    )
    assert len(ctx.text) == 131
    assert ctx.included == ["Alpha › One", "Beta notes › Three"]
    assert ctx.omitted == ["Alpha › Two"]
    assert load_system_context(ctx_dir, 160) == ctx
    # One character less: Three goes, and then One cannot carry the longer note either.
    assert load_system_context(ctx_dir, 130).text == ""


def test_note_counts_against_the_cap(ctx_dir: Path) -> None:
    # One + Two fit, not with the note for Three: Two goes too.
    fits_without_note = len(ONE) + 2 + len(TWO)
    ctx = load_system_context(ctx_dir, fits_without_note + 2)
    assert ctx.included == ["Alpha › One"]
    assert ctx.text == f"{ONE}\n\n{NOTE}Alpha › Two, Beta notes › Three."
    assert len(ctx.text) <= fits_without_note + 2


@pytest.mark.parametrize("cap", [0, 10, len(ONE)])
def test_nothing_fits_gives_empty_text(ctx_dir: Path, cap: int) -> None:
    ctx = load_system_context(ctx_dir, cap)  # len(ONE): One fits, but not with the note
    assert ctx.text == "" and ctx.included == []
    assert ctx.omitted == ["Alpha › One", "Alpha › Two", "Beta notes › Three"]
    assert ctx.section("Alpha › Two") == TWO


def test_section_lookup(ctx_dir: Path) -> None:
    ctx = load_system_context(ctx_dir, 160)
    assert ctx.section("Alpha › Two") == TWO
    assert ctx.section("alpha > two") == TWO
    assert ctx.section("  Two ") == TWO
    assert ctx.section("Alpha › One") == ONE
    assert ctx.section("Alpha") is None
    assert ctx.section("Four") is None


def test_missing_or_empty_directory(tmp_path: Path) -> None:
    assert load_system_context(tmp_path / "nope", 1000).text == ""
    (tmp_path / "01_empty.md").write_text("\n\n", encoding="utf-8")
    ctx = load_system_context(tmp_path, 1000)
    assert (ctx.text, ctx.included, ctx.omitted) == ("", [], [])


def test_split_sections_keeps_text_exactly() -> None:
    text = (
        "\ufeff# Title\r\nIntro that breaks the rule.\r\n\r\n## A\r\n  indented  line\r\n"
        "```\r\n## not a heading\r\n```\r\n### sub\r\n##no space\r\n## B\r\n"
    )
    title, sections = split_sections(text, "Fallback")
    assert title == "Title"
    assert sections == [
        ("A", "# Title\nIntro that breaks the rule.\n\n## A\n  indented  line\n"
         "```\n## not a heading\n```\n### sub\n##no space"),
        ("B", "## B"),
    ]  # fmt: skip
    assert split_sections("Just text.\n", "Fallback") == ("Fallback", [(None, "Just text.")])


def test_file_without_sections_is_one_section(tmp_path: Path) -> None:
    (tmp_path / "10_extra_rules.md").write_text("Be nice.\n", encoding="utf-8")
    ctx = load_system_context(tmp_path, 1000)
    assert (ctx.text, ctx.included) == ("Be nice.", ["Extra rules"])


def test_duplicate_ids_are_numbered(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# T\n## X\none\n## X\ntwo\n", encoding="utf-8")
    ctx = load_system_context(tmp_path, 1000)
    assert ctx.included == ["T › X", "T › X (2)"]
    assert ctx.section("T › X (2)") == "## X\ntwo"


def test_shipped_context_loads_whole_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MAX_CHARS_ENV, raising=False)
    ctx = load_system_context()
    assert ctx.omitted == []
    assert len(ctx.included) >= 10
    assert 3000 < len(ctx.text) <= DEFAULT_MAX_CHARS
    # Byte-identical to the files stripped and joined, as before sectioning, while all fit.
    files = sorted(p for p in SYSTEM_CONTEXT_DIR.glob("*.md") if p.name != "README.md")
    assert ctx.text == "\n\n".join(p.read_text(encoding="utf-8").strip() for p in files)


def test_cap_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_CHARS_ENV, "2000")
    ctx = load_system_context()
    assert ctx.omitted and len(ctx.text) <= 2000
    assert ctx.text.endswith(NOTE + ", ".join(ctx.omitted) + ".")
    for sid in ctx.omitted:
        text = ctx.section(sid)
        assert text is not None and text.startswith(("## ", "# ")) and text not in ctx.text


@pytest.mark.parametrize(
    ("raw", "value", "warns"),
    [
        (None, 7, False),
        ("", 7, False),
        (" 123 ", 123, False),
        ("0", 0, False),
        ("12k", 7, True),
        ("-5", 7, True),
        ("1.5", 7, True),
    ],
)
def test_env_int(
    raw: str | None, value: int, warns: bool, caplog: pytest.LogCaptureFixture
) -> None:
    environ = {} if raw is None else {"X": raw}
    with caplog.at_level(logging.WARNING, logger="comfyui_assistant"):
        assert env_int(environ, "X", 7) == value
    assert ("X=" in caplog.text) == warns


def test_cache_reads_only_changed_files(ctx_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    original = Path.read_text

    def counting(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self.name)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting)
    first = load_system_context(ctx_dir, 5000)
    assert sorted(reads) == ["01_alpha.md", "02_beta-notes.md"]
    reads.clear()
    assert load_system_context(ctx_dir, 5000) == first
    assert load_system_context(ctx_dir, 160).omitted == ["Alpha › Two"]  # other cap: no reads
    assert reads == []

    edited = ctx_dir / "02_beta-notes.md"
    edited.write_text("## Three\nThird, edited.\n", encoding="utf-8")
    st = edited.stat()
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    ctx = load_system_context(ctx_dir, 5000)
    assert reads == ["02_beta-notes.md"]
    assert ctx.text.endswith("## Three\nThird, edited.")

    (ctx_dir / "02_beta-notes.md").unlink()
    assert load_system_context(ctx_dir, 5000).text == f"{ONE}\n\n{TWO}"


def test_returned_lists_are_fresh(ctx_dir: Path) -> None:
    load_system_context(ctx_dir, 160).omitted.append("junk")
    assert load_system_context(ctx_dir, 160).omitted == ["Alpha › Two"]


def skill(slug: str, description: str, name: str = "Name") -> Skill:
    return Skill(slug, name, description, "body", Path(slug) / "SKILL.md", 100)


def test_skills_index_exact() -> None:
    system = [
        skill("upscale", "Make an image larger."),
        skill("model_sdxl", "SECRET model notes"),
        skill("txt2img", "Build a text-to-image workflow."),
        skill("model_flux", "SECRET flux notes"),
    ]
    user = [skill("zeta", "Last one."), skill("my-lora", "Add my style LoRA.\nTwo lines.")]
    assert skills_index(system, user) == (
        "## Skill index\n"
        "Load a skill before a task it covers: getSystemSkill(slug) for system skills, "
        "getUserSkill(slug) for user skills. listSystemSkills and listUserSkills list them.\n"
        "If the user writes /skill <name>, load that skill and follow it.\n"
        "System skills:\n"
        "- txt2img: Build a text-to-image workflow.\n"
        "- upscale: Make an image larger.\n"
        "Model-family skills (load when that model is used): model_flux, model_sdxl.\n"
        "User skills:\n"
        "- my-lora: Add my style LoRA. Two lines.\n"
        "- zeta: Last one."
    )
    assert skills_index(reversed(system), reversed(user)) == skills_index(system, user)


def test_skills_index_without_user_skills_and_limits() -> None:
    assert skills_index([], []).endswith("System skills:\nUser skills: none yet.")
    long = skills_index([], [skill("long", "word " * 100)])
    line = long.splitlines()[-1]
    assert line.startswith("- long: word word") and line.endswith("word…")
    assert len(line) <= len("- long: ") + 201
    many = skills_index([], [skill(f"s{i:03d}", "d") for i in range(60)], max_user=50)
    assert many.count("\n- s") == 50
    assert many.endswith("- s049: d\n- ...and 10 more (listUserSkills).")
