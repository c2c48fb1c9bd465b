"""Lint of the prompt text we ship: system_context/*.md and system_context/skills/*/SKILL.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from comfyui_assistant.core.knowledge.context_files import (
    SYSTEM_CONTEXT_DIR,
    load_system_context,
    skills_index,
)
from comfyui_assistant.core.knowledge.skills import (
    MAX_SKILL_CHARS,
    SKILL_FILE,
    SYSTEM_SKILLS_DIR,
    SkillDirectory,
    check_slug,
    parse_skill,
)

SKILL_DIRS = sorted(p for p in SYSTEM_SKILLS_DIR.iterdir() if p.is_dir())
TOP_FILES = sorted(p for p in SYSTEM_CONTEXT_DIR.glob("*.md") if p.name != "README.md")
REQUIRED = {"txt2img", "img2img", "upscale", "inpaint", "model-loading"}
MAX_TOP_LEVEL_CHARS = 6000


def test_every_skill_folder_is_loaded() -> None:
    slugs = [s.slug for s in SkillDirectory(SYSTEM_SKILLS_DIR, writable=False).list()]
    assert slugs == [p.name for p in SKILL_DIRS]
    assert REQUIRED.issubset(slugs)
    assert len([s for s in slugs if "model_" in s]) >= 4


@pytest.mark.parametrize("folder", SKILL_DIRS, ids=lambda p: p.name)
def test_skill_file(folder: Path) -> None:
    assert check_slug(folder.name) == folder.name
    assert [p.name for p in folder.iterdir()] == [SKILL_FILE]
    raw = (folder / SKILL_FILE).read_bytes()
    assert b"\r" not in raw and not raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8")
    skill = parse_skill(text, folder.name, folder / SKILL_FILE)
    assert skill.size == len(text) <= MAX_SKILL_CHARS
    assert skill.is_model == ("model_" in folder.name)
    # Front matter: exactly the name and a one-line description, written on their own lines.
    head = text.split("\n---\n", 1)[0].split("\n")
    assert head == ["---", f"name: {skill.name}", f"description: {skill.description}"]
    assert 20 <= len(skill.description) <= 200
    assert len(skill.name) <= 40
    assert skill.body.strip(), "a skill needs a body"


@pytest.mark.parametrize("path", TOP_FILES, ids=lambda p: p.name)
def test_top_level_file_is_sections(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "\r" not in text
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("## ")), None)
    assert first is not None, f"{path.name} has no '## ' section"
    before = [line for line in lines[:first] if line.strip()]
    assert len(before) <= 1 and all(re.match(r"# \S", line) for line in before), (
        f"{path.name}: only an optional '# Title' line may come before the first '## '"
    )


def test_top_level_budget() -> None:
    total = sum(len(p.read_text(encoding="utf-8")) for p in TOP_FILES)
    assert 0 < total < MAX_TOP_LEVEL_CHARS


def test_model_skills_stay_out_of_the_prompt() -> None:
    skills = SkillDirectory(SYSTEM_SKILLS_DIR, writable=False).list()
    models = [s for s in skills if s.is_model]
    context = load_system_context(SYSTEM_CONTEXT_DIR, 100_000).text
    index = skills_index(skills, [])
    prompt = f"{context}\n\n{index}"
    for skill in models:
        assert skill.description not in prompt
        assert skill.body[:200] not in prompt
        assert not any(line.startswith(f"- {skill.slug}") for line in prompt.splitlines())
        assert skill.slug in index  # named, by slug only
    for skill in skills:
        if not skill.is_model:
            assert f"- {skill.slug}: {skill.description}" in index.splitlines()
