from __future__ import annotations

import os
from pathlib import Path

import pytest
from comfyui_assistant.core.knowledge.skills import (
    MAX_SKILL_CHARS,
    Skill,
    SkillDirectory,
    SkillError,
    SkillNotFound,
    check_slug,
    closest,
    format_skill,
    parse_skill,
    slugify,
)

BODY = "# Steps\n\n1. Load the checkpoint.\n2. Queue.\n"


def snapshot(root: Path) -> dict[str, tuple[bool, bytes, int]]:
    """Every path under root: (is a dir, content, mtime_ns), without following symlinks."""
    out: dict[str, tuple[bool, bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            data = p.read_bytes() if p.is_file() and not p.is_symlink() else b""
            out[str(p.relative_to(root))] = (p.is_dir(), data, st.st_mtime_ns)
    return out


def write_skill(root: Path, slug: str, text: str) -> Path:
    (root / slug).mkdir(parents=True, exist_ok=True)
    path = root / slug / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


# --- parse / format ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("Text to image", "Build a txt2img workflow."),
        ("Ratio: 16:9", "Uses key: value text and a # hash"),
        ('Say "hi"', "it's a back\\slash"),
        ("yes", "123"),
        ("- dash", "'quoted'"),
        ("Ünïcode ✓", "ends with colon:"),
    ],
)
def test_format_parse_round_trip(name: str, description: str) -> None:
    text = format_skill(name, description, BODY)
    skill = parse_skill(text, "demo", Path("demo/SKILL.md"))
    assert (skill.name, skill.description, skill.body) == (name, description, BODY.rstrip())
    assert skill.size == len(text)
    assert format_skill(skill.name, skill.description, skill.body) == text


def test_format_makes_single_lines_and_parse_normalises_crlf() -> None:
    text = format_skill("A\nname", "first line\n  second line", "body\r\nline 2")
    assert text == "---\nname: A name\ndescription: first line second line\n---\n\nbody\nline 2\n"
    crlf = text.replace("\n", "\r\n")
    skill = parse_skill(crlf, "a", "a/SKILL.md")
    assert (skill.name, skill.description, skill.body) == (
        "A name",
        "first line second line",
        "body\nline 2",
    )
    assert skill.size == len(text)


def test_parse_quotes_comments_and_folded_values() -> None:
    text = (
        "\ufeff---\n# a comment\nname: 'It''s'\ndescription: >\n  folded over\n  two lines\n"
        "extra: ignored\n---\nBody"
    )
    skill = parse_skill(text, "model_x", Path("x"))
    assert (skill.name, skill.description, skill.body) == ("It's", "folded over two lines", "Body")
    assert skill.is_model
    assert not parse_skill(format_skill("n", "d", ""), "modelx", "p").is_model


@pytest.mark.parametrize(
    ("front", "name", "description"),
    [  # where a hand-written subset disagreed with YAML: comments, escapes, colons, blocks
        ("name: a # a comment\ndescription: b", "a", "b"),
        ('name: "tab\\there \\u00e9"\ndescription: b', "tab here é", "b"),
        ("name: 'a: b'\ndescription: x:y and a #comment", "a: b", "x:y and a"),
        ("name: a\ndescription: |\n  kept\n  lines", "a", "kept lines"),
        ("name: yes\ndescription: 1e3", "yes", "1e3"),
    ],
)
def test_front_matter_is_read_as_yaml(front: str, name: str, description: str) -> None:
    skill = parse_skill(f"---\n{front}\n---\nbody", "a", "a/SKILL.md")
    assert (skill.name, skill.description) == (name, description)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no front matter"),
        ("name: a\ndescription: b\n", "no front matter"),
        ("# Title\n---\nname: a\n---\n", "no front matter"),
        ("---\nname: a\ndescription: b\n", "front matter is not closed"),
        ("---\ndescription: b\n---\nbody", "missing name"),
        ("---\nname: a\n---\nbody", "missing description"),
        ("---\nname: ''\ndescription:\n---\n", "missing name and description"),
        ("---\n---\n", "missing name and description"),
        ("---\nname: a\njust text\ndescription: b\n---\n", "(line 3): while scanning a simple"),
        ('---\nname: "a\ndescription: b\n---\n', "(line 2): while scanning a quoted scalar"),
        ("---\nname: a\ndescription: 'b\n---\n", "(line 3): while scanning a quoted scalar"),
        ("---\nname: a\ndescription: a: b\n---\n", "mapping values are not allowed"),
        ("---\n- a\n- b\n---\n", "must be 'key: value' lines"),
        ("---\nname: [a, b]\ndescription: b\n---\n", "'name' must be text"),
    ],
)
def test_malformed_front_matter(text: str, message: str) -> None:
    with pytest.raises(SkillError) as err:
        parse_skill(text, "broken", Path("/skills/broken/SKILL.md"))
    assert str(err.value).startswith("/skills/broken/SKILL.md: ")
    assert message in str(err.value)


# --- slugs ------------------------------------------------------------------------------------

BAD_SLUGS = [
    "",
    "..",
    ".",
    "a/b",
    "a\\b",
    "a\x00b",
    "ａ",  # fullwidth a
    "аbc",  # Cyrillic а
    "a\n",
    "a b",
    " a",
    "A",
    "Abc",
    "-a",
    "_a",
    "a" * 65,
    "../etc",
    "/abs",
    "a.md",
]


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_check_slug_refuses(slug: str) -> None:
    with pytest.raises(SkillError, match="lowercase ASCII letters"):
        check_slug(slug)


@pytest.mark.parametrize("slug", ["a", "txt2img", "model_sdxl", "model-loading", "0", "a" * 64])
def test_check_slug_accepts(slug: str) -> None:
    assert check_slug(slug) == slug


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_bad_slugs_touch_nothing(tmp_path: Path, slug: str) -> None:
    root = tmp_path / "skills"
    write_skill(root, "keep", format_skill("Keep", "Keep me", "body"))
    (tmp_path / "outside.md").write_text("outside", encoding="utf-8")
    (tmp_path / "SKILL.md").write_text("outside skill", encoding="utf-8")
    before = snapshot(tmp_path)
    skills = SkillDirectory(root, writable=True)
    with pytest.raises(SkillError):
        skills.create("Name", "Description", "body", slug=slug)
    with pytest.raises(SkillError):
        skills.get(slug)
    with pytest.raises(SkillError):
        skills.update(slug, body="x")
    with pytest.raises(SkillError):
        skills.delete(slug)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Text to image", "text-to-image"),
        ("Hi-res Fix (SDXL) — Ünïcode!", "hi-res-fix-sdxl-unicode"),
        ("  my_skill  ", "my_skill"),
        ("../../etc/passwd", "etc-passwd"),
        ("ＦＵＬＬ width", "full-width"),
        ("x" * 100, "x" * 64),
    ],
)
def test_slugify(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_slugify_without_ascii_is_stable_and_valid() -> None:
    slug = slugify("日本語のスキル")
    assert slug == slugify("日本語のスキル") != slugify("別のスキル")
    assert check_slug(slug).startswith("skill-")


# --- directories ------------------------------------------------------------------------------


def test_create_get_update_delete(tmp_path: Path) -> None:
    root = tmp_path / "data" / "skills"  # created on first write
    skills = SkillDirectory(root, writable=True)
    assert skills.list() == []
    made = skills.create("My LoRA recipe", "Add my style LoRA at 0.8.", BODY)
    assert made.slug == "my-lora-recipe"
    assert made.path == (root / "my-lora-recipe" / "SKILL.md").resolve()
    assert made.path.read_text(encoding="utf-8") == format_skill(
        "My LoRA recipe", "Add my style LoRA at 0.8.", BODY
    )
    assert skills.get("my-lora-recipe") == made
    assert skills.list() == [made]

    with pytest.raises(SkillError, match="already exists"):
        skills.create("My LoRA recipe", "again", "x")
    other = skills.create("Other", "Something else.", "", slug="a-first")
    assert [s.slug for s in skills.list()] == ["a-first", "my-lora-recipe"]

    changed = skills.update("my-lora-recipe", description="Add my style LoRA at 0.6.")
    assert (changed.name, changed.description, changed.body) == (
        "My LoRA recipe",
        "Add my style LoRA at 0.6.",
        BODY.rstrip(),
    )
    assert skills.get("my-lora-recipe") == changed
    assert skills.list() == [other, changed]
    assert not [p for p in root.rglob("*") if p.name.endswith(".tmp")]

    skills.delete("my-lora-recipe")
    assert not (root / "my-lora-recipe").exists()
    assert skills.list() == [other]
    with pytest.raises(SkillNotFound):
        skills.delete("my-lora-recipe")
    with pytest.raises(SkillNotFound):
        skills.update("my-lora-recipe", body="x")


def test_create_refuses_empty_fields(tmp_path: Path) -> None:
    skills = SkillDirectory(tmp_path, writable=True)
    with pytest.raises(SkillError, match="non-empty name"):
        skills.create("  ", "desc", "body")
    with pytest.raises(SkillError, match="non-empty name"):
        skills.create("Name", "", "body")
    assert list(tmp_path.iterdir()) == []


def test_delete_keeps_folder_with_other_files(tmp_path: Path) -> None:
    skills = SkillDirectory(tmp_path, writable=True)
    skills.create("Keep notes", "d", "b")
    (tmp_path / "keep-notes" / "notes.txt").write_text("mine", encoding="utf-8")
    skills.delete("keep-notes")
    assert [p.name for p in (tmp_path / "keep-notes").iterdir()] == ["notes.txt"]


def test_hand_edits_are_seen_and_malformed_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    skills = SkillDirectory(tmp_path, writable=False)
    good = write_skill(tmp_path, "good", format_skill("Good", "Fine.", "v1"))
    write_skill(tmp_path, "bad", "no front matter here")
    write_skill(tmp_path, "Bad Name", format_skill("X", "Y", "z"))  # invalid folder name
    (tmp_path / "loose.md").write_text("not a skill", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    assert [s.body for s in skills.list()] == ["v1"]
    assert "skipping skill 'bad'" in caplog.text and "no front matter" in caplog.text

    good.write_text(format_skill("Good", "Fine.", "version 2"), encoding="utf-8")
    assert [s.body for s in skills.list()] == ["version 2"]
    with pytest.raises(SkillError, match="no front matter"):
        skills.get("bad")


def test_list_is_cached_by_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skills = SkillDirectory(tmp_path, writable=True)
    skills.create("One", "d", "b")
    reads: list[Path] = []
    original = Path.read_text

    def counting(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting)
    first = skills.list()
    assert skills.list() == first
    assert len(reads) == 1
    skills.update("one", body="changed")
    assert skills.list()[0].body == "changed"


def test_read_only_directory_refuses_writes(tmp_path: Path) -> None:
    write_skill(tmp_path, "txt2img", format_skill("Text to image", "d", "b"))
    before = snapshot(tmp_path)
    system = SkillDirectory(tmp_path, writable=False)
    for call in (
        lambda: system.create("New", "d", "b"),
        lambda: system.update("txt2img", body="x"),
        lambda: system.delete("txt2img"),
    ):
        with pytest.raises(SkillError, match="system skills are read-only"):
            call()
    assert snapshot(tmp_path) == before


def test_not_found_lists_closest(tmp_path: Path) -> None:
    skills = SkillDirectory(tmp_path, writable=True)
    for name, slug in [("Text to image", "txt2img"), ("Image to image", "img2img")]:
        skills.create(name, "d", "b", slug=slug)
    skills.create("SDXL", "d", "b", slug="model_sdxl")
    with pytest.raises(SkillNotFound) as err:
        skills.get("txt2im")
    assert err.value.suggestions[0] == "txt2img"
    assert str(err.value).startswith("No skill 'txt2im'. Closest: txt2img")
    with pytest.raises(SkillNotFound, match="Closest: model_sdxl") as err:
        skills.get("sdxl")
    with pytest.raises(SkillNotFound, match="not a valid slug") as err:
        skills.get("Text to Image")
    assert err.value.suggestions[0] == "txt2img"
    with pytest.raises(SkillNotFound, match="No similar skills"):
        skills.get("zzzzzz")


def test_closest_matches_slug_and_name() -> None:
    def skill(slug: str, name: str) -> Skill:
        return Skill(slug, name, "d", "", Path(slug), 0)

    pool = [skill("txt2img", "Text to image"), skill("upscale", "Upscale"), skill("x1", "Flux")]
    assert closest("TEXT TO IMAGE", pool) == ["txt2img"]
    assert closest("upscal", pool) == ["upscale"]
    assert closest("flux", pool) == ["x1"]
    assert closest("nothing alike", pool) == []


def test_symlink_escaping_root_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "skills", tmp_path / "outside"
    write_skill(outside, "secret", format_skill("Secret", "Outside the root.", "private"))
    write_skill(root, "fine", format_skill("Fine", "Inside.", "ok"))
    (root / "evil").symlink_to(outside / "secret", target_is_directory=True)
    (root / "sneaky").mkdir()
    (root / "sneaky" / "SKILL.md").symlink_to(outside / "secret" / "SKILL.md")
    before = snapshot(tmp_path)
    skills = SkillDirectory(root, writable=True)
    assert [s.slug for s in skills.list()] == ["fine"]
    for slug in ("evil", "sneaky"):
        with pytest.raises(SkillError, match="outside"):
            skills.get(slug)
        with pytest.raises(SkillError, match="outside"):
            skills.update(slug, body="overwritten")
        with pytest.raises(SkillError, match="outside"):
            skills.delete(slug)
        with pytest.raises(SkillError, match="outside"):
            skills.create("Evil", "d", "b", slug=slug)
    assert snapshot(tmp_path) == before


def test_symlink_inside_root_is_allowed(tmp_path: Path) -> None:
    write_skill(tmp_path, "real", format_skill("Real", "d", "b"))
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert SkillDirectory(tmp_path, writable=False).get("alias").name == "Real"


def test_size_budget(tmp_path: Path) -> None:
    skills = SkillDirectory(tmp_path, writable=True)
    overhead = len(format_skill("Big", "d", "x")) - 1
    fits = skills.create("Big", "d", "x" * (MAX_SKILL_CHARS - overhead))
    assert fits.size == MAX_SKILL_CHARS
    with pytest.raises(SkillError, match=r"8001 characters; the limit is 8000.*by 1 or more"):
        skills.update("big", body="x" * (MAX_SKILL_CHARS - overhead + 1))
    with pytest.raises(SkillError, match="the limit is 8000"):
        skills.create("Huge", "d", "y" * 10_000)
    assert skills.get("big") == fits
    assert not (tmp_path / "huge").exists()
