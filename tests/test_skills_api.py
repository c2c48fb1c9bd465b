"""Skills over HTTP: user skills round trip with the files on disk, the shipped system skills
read-only, and no slug — encoded, look-alike or otherwise — reaching outside the skills folder."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from comfyui_assistant.core.knowledge.skills import SLUG_RULE, SYSTEM_SKILLS_DIR

from .conftest import start_app

USER = "/api/assistant/user-context/skills"
SYSTEM = "/api/assistant/system-context/skills"
SHIPPED = [
    "img2img",
    "inpaint",
    "model-loading",
    "model_flux",
    "model_sd15",
    "model_sdxl",
    "model_wan_video",
    "txt2img",
    "upscale",
]
SECRET = "BAIT-FILE-OUTSIDE-THE-SKILLS-FOLDER"
BAIT = f"---\nname: bait\ndescription: must never be served\n---\n\n{SECRET}\n"


async def call(app, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    kwargs = {} if body is None else {"json": body}
    async with app.session.request(method, app.base + path, **kwargs) as resp:
        return resp.status, await resp.json()


async def raw_request(app, method: str, target: str, body: Any = None) -> tuple[int, str]:
    """Send the request line byte for byte: no client-side normalization of '..' or escapes."""
    host, port = app.base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    data = b"" if body is None else json.dumps(body).encode()
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    writer.write(head.encode("ascii") + data)
    await writer.drain()
    response = await reader.read()
    writer.close()
    await writer.wait_closed()
    head_bytes, _, payload = response.partition(b"\r\n\r\n")
    return int(head_bytes.split()[1]), payload.decode("utf-8", "replace")


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every file and folder under root with its content and modification time."""
    tree: dict[str, tuple[bytes, int] | None] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        tree[rel] = (path.read_bytes(), path.stat().st_mtime_ns) if path.is_file() else None
    return tree


def skill_file(data_dir: Path, slug: str) -> Path:
    return data_dir / "skills" / slug / "SKILL.md"


async def test_a_user_skill_round_trip_with_its_file_on_disk(assistant, tmp_path):
    data_dir = tmp_path / "data"
    assert await call(assistant, "GET", USER) == (200, {"skills": []})

    body = "1. Render at 1024 px.\n2. Upscale 1.5x and sample again at denoise 0.4."
    created = {"name": "Hi-res Fix (SDXL)", "description": "Two-pass upscale.", "body": body}
    text = f"---\nname: Hi-res Fix (SDXL)\ndescription: Two-pass upscale.\n---\n\n{body}\n"
    full = {
        "slug": "hi-res-fix-sdxl",
        "name": "Hi-res Fix (SDXL)",
        "description": "Two-pass upscale.",
        "modelFamily": False,
        "size": len(text),
        "body": body,
    }
    assert await call(assistant, "POST", USER, created) == (201, full)
    assert skill_file(data_dir, "hi-res-fix-sdxl").read_text(encoding="utf-8") == text
    summary = {k: v for k, v in full.items() if k != "body"}
    assert await call(assistant, "GET", USER) == (200, {"skills": [summary]})
    assert await call(assistant, "GET", f"{USER}/hi-res-fix-sdxl") == (200, full)

    # an explicit slug; "model_" marks a model-family skill
    mine = {
        "name": "My Flux",
        "description": "Flux tweaks: cfg 1",
        "body": "Use cfg 1.",
        "slug": "model_mine",
    }
    status, answer = await call(assistant, "POST", USER, mine)
    assert (status, answer["slug"], answer["modelFamily"]) == (201, "model_mine", True)
    assert skill_file(data_dir, "model_mine").read_text(encoding="utf-8") == (
        "---\nname: My Flux\ndescription: 'Flux tweaks: cfg 1'\n---\n\nUse cfg 1.\n"
    )

    new_text = "---\nname: Hi-res Fix (SDXL)\ndescription: Two passes.\n---\n\nShorter.\n"
    updated = {**full, "description": "Two passes.", "body": "Shorter.", "size": len(new_text)}
    assert await call(
        assistant,
        "PUT",
        f"{USER}/hi-res-fix-sdxl",
        {"description": "Two passes.", "body": "Shorter."},
    ) == (200, updated)
    assert skill_file(data_dir, "hi-res-fix-sdxl").read_text(encoding="utf-8") == new_text
    assert await call(assistant, "GET", f"{USER}/hi-res-fix-sdxl") == (200, updated)

    # a file edited by hand is what the API serves next
    skill_file(data_dir, "model_mine").write_text(
        "---\nname: My Flux\ndescription: edited\n---\n\nBy hand.\n", encoding="utf-8"
    )
    status, answer = await call(assistant, "GET", f"{USER}/model_mine")
    assert (status, answer["description"], answer["body"]) == (200, "edited", "By hand.")

    assert await call(assistant, "DELETE", f"{USER}/hi-res-fix-sdxl") == (
        200,
        {"deleted": "hi-res-fix-sdxl"},
    )
    assert not (data_dir / "skills" / "hi-res-fix-sdxl").exists()
    assert [s["slug"] for s in (await call(assistant, "GET", USER))[1]["skills"]] == ["model_mine"]
    gone = {"error": "No skill 'hi-res-fix-sdxl'. No similar skills."}
    assert await call(assistant, "GET", f"{USER}/hi-res-fix-sdxl") == (404, gone)
    assert await call(assistant, "DELETE", f"{USER}/hi-res-fix-sdxl") == (404, gone)
    assert await call(assistant, "PUT", f"{USER}/hi-res-fix-sdxl", {"body": "x"}) == (404, gone)
    assert sorted(p.name for p in (data_dir / "skills").iterdir()) == ["model_mine"]


async def test_deleting_keeps_the_users_other_files(assistant, tmp_path):
    data_dir = tmp_path / "data"
    created = {"name": "Notes", "description": "d", "body": "b"}
    assert (await call(assistant, "POST", USER, created))[0] == 201
    (data_dir / "skills" / "notes" / "example.png").write_bytes(b"\x89PNG")
    assert await call(assistant, "DELETE", f"{USER}/notes") == (200, {"deleted": "notes"})
    assert sorted(p.name for p in (data_dir / "skills" / "notes").iterdir()) == ["example.png"]


async def test_a_duplicate_and_bad_fields_are_refused(assistant, tmp_path):
    skill = {"name": "Upscale", "description": "Mine", "body": "x", "slug": "upscale"}
    assert (await call(assistant, "POST", USER, skill))[0] == 201  # a system slug is fine
    before = snapshot(tmp_path)
    assert await call(assistant, "POST", USER, skill) == (
        400,
        {"error": "a skill 'upscale' already exists; update it or pick another slug"},
    )
    no_slug = {k: v for k, v in skill.items() if k != "slug"}  # slug from the name: the same
    assert (await call(assistant, "POST", USER, no_slug))[0] == 400
    for body, message in [
        ({"name": "A", "description": "B"}, "'body' is required"),
        ({"description": "B", "body": "C"}, "'name' is required"),
        (
            {"name": "A", "description": "  ", "body": "C"},
            "'description' must be a non-empty string",
        ),
        ({"name": "A", "description": "B", "body": 5}, "'body' must be a non-empty string"),
        ({"name": "A", "description": "B", "body": "C", "slug": 5}, "'slug' must be a string"),
        (["A"], "send an object with name, description and body"),
    ]:
        assert await call(assistant, "POST", USER, body) == (400, {"error": message})
    assert await call(assistant, "PUT", f"{USER}/upscale", {}) == (
        400,
        {"error": "send one or more of name, description, body"},
    )
    assert await call(assistant, "PUT", f"{USER}/upscale", {"name": ""}) == (
        400,
        {"error": "'name' must be a non-empty string"},
    )
    assert snapshot(tmp_path) == before


def sized_body(total: int) -> str:
    """A body that makes the skill file `total` characters long."""
    head = "---\nname: Big\ndescription: Long.\n---\n\n"
    return "x" * (total - len(head) - 1)  # the file ends with one newline


async def test_the_size_limit_is_8000_characters(assistant, tmp_path):
    data_dir = tmp_path / "data"
    body = sized_body(8000)
    status, answer = await call(
        assistant, "POST", USER, {"name": "Big", "description": "Long.", "body": body}
    )
    assert (status, answer["size"]) == (201, 8000)
    assert len(skill_file(data_dir, "big").read_text(encoding="utf-8")) == 8000

    longer = sized_body(8001)
    before = snapshot(tmp_path)
    limit_error = {
        "error": "skill 'big' would be 8001 characters; the limit is 8000. Shorten it by 1 or "
        "more characters, or split it into two skills."
    }
    assert await call(assistant, "PUT", f"{USER}/big", {"body": longer}) == (400, limit_error)
    new = {"name": "Big", "description": "Long.", "body": longer, "slug": "big2"}
    assert await call(assistant, "POST", USER, new) == (
        400,
        {"error": limit_error["error"].replace("'big'", "'big2'")},
    )
    assert snapshot(tmp_path) == before
    assert not (data_dir / "skills" / "big2").exists()


async def test_system_skills_are_listed_and_read(assistant):
    status, listed = await call(assistant, "GET", SYSTEM)
    assert status == 200
    assert [s["slug"] for s in listed["skills"]] == SHIPPED
    for skill in listed["skills"]:
        assert set(skill) == {"slug", "name", "description", "modelFamily", "size"}
        assert skill["modelFamily"] == skill["slug"].startswith("model_")
        assert skill["name"] and skill["description"]

    status, txt2img = await call(assistant, "GET", f"{SYSTEM}/txt2img")
    assert status == 200
    text = (SYSTEM_SKILLS_DIR / "txt2img" / "SKILL.md").read_text(encoding="utf-8")
    assert txt2img["body"].startswith("# Text to image with core nodes\n")
    assert text.rstrip().endswith(txt2img["body"])
    listed_txt2img = next(s for s in listed["skills"] if s["slug"] == "txt2img")
    assert {k: v for k, v in txt2img.items() if k != "body"} == listed_txt2img
    assert listed_txt2img["name"] == "Text to image"

    assert await call(assistant, "GET", f"{SYSTEM}/txt2imgg") == (
        404,
        {"error": "No skill 'txt2imgg'. Closest: txt2img."},
    )
    # system skills are not user skills
    assert await call(assistant, "GET", f"{USER}/txt2img") == (
        404,
        {"error": "No skill 'txt2img'. No similar skills."},
    )


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "PATCH"])
async def test_system_skills_cannot_be_written(assistant, tmp_path, method):
    shipped = {p: p.read_bytes() for p in SYSTEM_SKILLS_DIR.rglob("*") if p.is_file()}
    async with assistant.session.request(
        method, assistant.base + f"{SYSTEM}/txt2img", json={"body": "overwritten"}
    ) as resp:
        assert resp.status == 405
    async with assistant.session.request(
        method, assistant.base + SYSTEM, json={"name": "n", "description": "d", "body": "b"}
    ) as resp:
        assert resp.status == 405
    assert {p: p.read_bytes() for p in SYSTEM_SKILLS_DIR.rglob("*") if p.is_file()} == shipped
    assert not (tmp_path / "data" / "skills").exists()


@pytest.mark.parametrize(("method", "path"), [("POST", USER), ("PUT", f"{USER}/anything")])
async def test_form_posts_get_415(assistant, tmp_path, method, path):
    async with assistant.session.request(
        method,
        assistant.base + path,
        data=b"name=a&description=b&body=c",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    ) as resp:
        assert (resp.status, await resp.json()) == (
            415,
            {"error": "send the body as JSON with 'Content-Type: application/json'"},
        )
    assert not (tmp_path / "data" / "skills").exists()


# Path segments as sent on the wire. Each must be refused, and must never reach a file outside
# the skills folder (nor, for look-alikes, the real skill it imitates).
REFUSED_BY_THE_HANDLER = [
    "..",
    ".",
    "%2e%2e",
    "%2E%2E",
    ".%2e",
    "%2e",
    "a%2Fb",
    "..%2F..%2FSKILL",
    "%2e%2e%2f%2e%2e%2fdata",
    "..%5C..%5Cdata",
    "a%00b",
    "txt2img%00",
    "txt2img%0A",
    "txt2img%0D%0A",
    "txt2img%20",
    "%20txt2img",
    "txt2img%09",
    "TXT2IMG",
    "Txt2img",
    quote("ｔｘｔ２ｉｍｇ", safe=""),  # fullwidth
    quote("tхt2img", safe=""),  # Cyrillic х
    quote("іmg2img", safe=""),  # Ukrainian і
    quote("upscаle", safe=""),  # Cyrillic а
    quote("txt2img\u200b", safe=""),  # zero-width space
    quote("txt2ımg", safe=""),  # dotless ı
    "-txt2img",
    "_x",
    "a" * 65,
    "%7E",
    "%24HOME",
]
REFUSED_BY_THE_ROUTER = [
    "../SKILL.md",
    "../../SKILL.md",
    "%2e%2e/%2e%2e/SKILL.md",
    "txt2img/",
    "txt2img/..",
    "..%2F../SKILL",
]


@pytest.fixture
async def baited(provider, tmp_path):
    """An app whose user and system skill folders sit next to bait files."""
    data_dir = tmp_path / "data"
    system_dir = tmp_path / "system" / "skills"
    shutil.copytree(SYSTEM_SKILLS_DIR / "txt2img", system_dir / "txt2img")
    for folder in (tmp_path, data_dir, data_dir / "skills", tmp_path / "system", system_dir):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(BAIT, encoding="utf-8")
    (tmp_path / "SKILL").mkdir()  # what "../../SKILL" would point at
    (tmp_path / "SKILL" / "SKILL.md").write_text(BAIT, encoding="utf-8")
    user_txt2img = skill_file(data_dir, "txt2img")
    user_txt2img.parent.mkdir(parents=True)
    user_txt2img.write_text(
        "---\nname: mine\ndescription: the user's txt2img\n---\n\nUSER-TXT2IMG\n", encoding="utf-8"
    )
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(data_dir, env, system_skills_dir=system_dir)
    yield app
    await app.close()


async def assert_refused(app, tmp_path, segment: str, statuses: set[int]) -> None:
    before = snapshot(tmp_path)
    requests = [
        ("GET", f"{USER}/{segment}", None),
        ("PUT", f"{USER}/{segment}", {"name": "pwned", "description": "x", "body": SECRET}),
        ("DELETE", f"{USER}/{segment}", None),
        ("GET", f"{SYSTEM}/{segment}", None),
    ]
    for method, target, body in requests:
        status, payload = await raw_request(app, method, target, body)
        assert status in statuses, (method, target, status, payload)
        assert SECRET not in payload and "USER-TXT2IMG" not in payload, (method, target)
        if status == 400:
            decoded = unquote(segment)
            assert json.loads(payload) == {
                "error": f"invalid skill slug {decoded!r}: {SLUG_RULE}"
            }, (method, target)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("segment", REFUSED_BY_THE_HANDLER)
async def test_bad_slugs_in_the_path_are_refused(baited, tmp_path, segment):
    await assert_refused(baited, tmp_path, segment, {400})


@pytest.mark.parametrize("segment", REFUSED_BY_THE_ROUTER)
async def test_paths_the_router_refuses_touch_nothing(baited, tmp_path, segment):
    await assert_refused(baited, tmp_path, segment, {400, 404})


async def test_the_baited_app_still_serves_the_real_skills(baited):
    """The control for the two tests above: the same app answers valid slugs."""
    status, payload = await raw_request(baited, "GET", f"{USER}/txt2img")
    assert (status, json.loads(payload)["body"]) == (200, "USER-TXT2IMG")
    status, payload = await raw_request(baited, "GET", f"{SYSTEM}/txt2img")
    assert (status, json.loads(payload)["name"]) == (200, "Text to image")
    status, payload = await raw_request(baited, "GET", SYSTEM)
    assert [s["slug"] for s in json.loads(payload)["skills"]] == ["txt2img"]


@pytest.mark.parametrize(
    "slug",
    [
        "..",
        "../escape",
        "../../SKILL",
        "a/b",
        "a\\b",
        "<absolute path in tmp_path>",
        "",
        "Evil",
        "ｔｘｔ２ｉｍｇ",
        "tхt2img",
        "txt2img\n",
        "a\x00b",
        "x" * 65,
        "-lead",
    ],
)
async def test_a_bad_slug_in_the_body_is_refused(baited, tmp_path, slug):
    if slug.startswith("<"):  # where a regression would write: inside the snapshot
        slug = str(tmp_path / "absolute")
    before = snapshot(tmp_path)
    body = {"name": "Escape", "description": "x", "body": SECRET, "slug": slug}
    status, payload = await raw_request(baited, "POST", USER, body)
    assert (status, json.loads(payload)) == (
        400,
        {"error": f"invalid skill slug {slug!r}: {SLUG_RULE}"},
    )
    assert snapshot(tmp_path) == before
