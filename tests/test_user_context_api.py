"""/api/assistant/user-context: rules, reminders, personas (and the active one), SOUL.md and
goals.md on disk, preferences, the edited system prompt; bad ids, bad bodies, form posts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from comfyui_assistant.core.store.user_data import DEFAULTS_DIR
from yarl import URL

from .helpers import chat_body, sse_events, user
from .scripted_provider import text_reply

# The shipped templates (user_context/defaults) are installed on first use.
DEFAULTS = {
    name: (DEFAULTS_DIR / filename).read_text(encoding="utf-8")
    for name, filename in (("soul", "SOUL.md"), ("goals", "goals.md"))
}

BASE = "/api/assistant/user-context"
FORM_ERROR = {"error": "send the body as JSON with 'Content-Type: application/json'"}


async def call(app, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    kwargs = {} if body is None else {"json": body}
    async with app.session.request(method, URL(app.base + path, encoded=True), **kwargs) as resp:
        return resp.status, await resp.json()


async def raw_put(app, path: str, data: bytes) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    async with app.session.put(app.base + path, data=data, headers=headers) as resp:
        return resp.status, await resp.json()


async def everything(app) -> dict[str, Any]:
    status, body = await call(app, "GET", BASE)
    assert status == 200
    return body


async def test_a_fresh_user_context_is_empty(assistant):
    assert await everything(assistant) == {
        "rules": [],
        "reminders": [],
        "personas": [],
        "activePersona": None,
        "soul": DEFAULTS["soul"],
        "goals": DEFAULTS["goals"],
        "preferences": {},
        "systemPrompt": None,
    }


@pytest.mark.parametrize(("kind", "singular"), [("rules", "rule"), ("reminders", "reminder")])
async def test_text_items_round_trip(assistant, kind, singular):
    path = f"{BASE}/{kind}"
    assert await call(assistant, "GET", path) == (200, {kind: []})

    assert await call(assistant, "POST", path, {"text": "  Prefer SDXL checkpoints.  "}) == (
        201,
        {"id": 1, "text": "Prefer SDXL checkpoints.", "enabled": True},
    )
    assert await call(assistant, "POST", path, {"text": "Never use LCM", "enabled": False}) == (
        201,
        {"id": 2, "text": "Never use LCM", "enabled": False},
    )
    assert await call(assistant, "GET", path) == (
        200,
        {
            kind: [
                {"id": 1, "text": "Prefer SDXL checkpoints.", "enabled": True},
                {"id": 2, "text": "Never use LCM", "enabled": False},
            ]
        },
    )

    assert await call(assistant, "PATCH", f"{path}/1", {"enabled": False}) == (
        200,
        {"id": 1, "text": "Prefer SDXL checkpoints.", "enabled": False},
    )
    assert await call(assistant, "PATCH", f"{path}/2", {"text": "Use LCM", "enabled": True}) == (
        200,
        {"id": 2, "text": "Use LCM", "enabled": True},
    )
    assert (await everything(assistant))[kind] == [
        {"id": 1, "text": "Prefer SDXL checkpoints.", "enabled": False},
        {"id": 2, "text": "Use LCM", "enabled": True},
    ]

    assert await call(assistant, "DELETE", f"{path}/1") == (200, {"deleted": 1})
    assert await call(assistant, "GET", path) == (
        200,
        {kind: [{"id": 2, "text": "Use LCM", "enabled": True}]},
    )
    missing = {"error": f"{singular} 1 does not exist"}
    assert await call(assistant, "DELETE", f"{path}/1") == (404, missing)
    assert await call(assistant, "PATCH", f"{path}/1", {"text": "back"}) == (404, missing)
    assert await call(assistant, "PATCH", f"{path}/99", {"text": "x"}) == (
        404,
        {"error": f"{singular} 99 does not exist"},
    )
    # ids are never reused
    assert await call(assistant, "POST", path, {"text": "third"}) == (
        201,
        {"id": 3, "text": "third", "enabled": True},
    )


@pytest.mark.parametrize(
    ("method", "body", "message"),
    [
        ("POST", {"text": 5}, "text must be a string"),
        ("POST", {"text": "ok", "enabled": "yes"}, "enabled must be true or false"),
        ("POST", {"text": "ok", "enabled": 1}, "enabled must be true or false"),
        ("POST", {"text": "ok", "enabled": None}, "enabled must be true or false"),
        ("POST", {"text": "   "}, "text must not be empty"),
        ("POST", {"enabled": True}, "'text' is required"),
        ("POST", {"text": "x" * 20_001}, "text is longer than 20000 characters"),
        ("POST", [{"text": "x"}], "the body must be a JSON object"),
        ("PATCH", {"text": ["x"]}, "text must be a string"),
        ("PATCH", {"enabled": "false"}, "enabled must be true or false"),
        ("PATCH", {}, "send one or more of text, enabled"),
        ("PATCH", {"colour": "red"}, "send one or more of text, enabled"),
    ],
)
async def test_bad_rule_bodies_name_the_field(assistant, method, body, message):
    assert (await call(assistant, "POST", f"{BASE}/rules", {"text": "keep me"}))[0] == 201
    path = f"{BASE}/rules" + ("/1" if method == "PATCH" else "")
    assert await call(assistant, method, path, body) == (400, {"error": message})
    assert await call(assistant, "GET", f"{BASE}/rules") == (
        200,
        {"rules": [{"id": 1, "text": "keep me", "enabled": True}]},
    )


@pytest.mark.parametrize(
    "raw_id",
    [
        "abc",
        "-1",
        "1.5",
        "1e3",
        "0x1",
        "%20",
        "%C2%B2",  # '²': str.isdigit() says yes, int() says no
    ],
)
@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
async def test_bad_ids_get_400(assistant, raw_id, method):
    body = {"text": "x"} if method == "PATCH" else None
    status, answer = await call(assistant, method, f"{BASE}/rules/{raw_id}", body)
    decoded = URL("/" + raw_id, encoded=True).path[1:]
    assert (status, answer) == (400, {"error": f"'id' must be a number (got {decoded!r})"})


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
async def test_an_id_too_large_for_sqlite_is_a_client_error(assistant, method):
    body = {"text": "x"} if method == "PATCH" else None
    status, answer = await call(assistant, method, f"{BASE}/rules/99999999999999999999999", body)
    assert status in (400, 404), answer
    assert set(answer) == {"error"}
    assert "internal error" not in answer["error"]


PIRATE = {
    "id": 1,
    "name": "Pirate",
    "description": "",
    "instructions": "Talk like a pirate.",
    "replacesSystemPrompt": False,
}
TUTOR = {
    "id": 2,
    "name": "Tutor",
    "description": "Explains every node",
    "instructions": "Explain each step for a beginner.",
    "replacesSystemPrompt": True,
}


async def test_personas_round_trip_with_unique_names_and_the_active_one(assistant):
    path = f"{BASE}/personas"
    assert await call(
        assistant, "POST", path, {"name": " Pirate ", "instructions": "Talk like a pirate."}
    ) == (201, PIRATE)
    created = {k: v for k, v in TUTOR.items() if k != "id"}
    assert await call(assistant, "POST", path, created) == (201, TUTOR)
    assert await call(assistant, "GET", path) == (200, {"personas": [PIRATE, TUTOR]})

    duplicate = {"name": "Pirate", "instructions": "Another one."}
    conflict = {"error": "that persona already exists (UNIQUE constraint failed: personas.name)"}
    assert await call(assistant, "POST", path, duplicate) == (400, conflict)
    assert await call(assistant, "PATCH", f"{path}/2", {"name": "Pirate"}) == (400, conflict)
    assert await call(assistant, "GET", path) == (200, {"personas": [PIRATE, TUTOR]})

    renamed = {**PIRATE, "description": "Arr", "replacesSystemPrompt": True}
    assert await call(
        assistant, "PATCH", f"{path}/1", {"description": "Arr", "replacesSystemPrompt": True}
    ) == (200, renamed)

    active = f"{path}/active"
    assert await call(assistant, "PUT", active, {"id": 2}) == (200, {"activePersona": TUTOR})
    assert (await everything(assistant))["activePersona"] == TUTOR
    assert await call(assistant, "PUT", active, {"id": 99}) == (
        400,
        {"error": "there is no persona with id 99"},
    )
    assert (await everything(assistant))["activePersona"] == TUTOR  # unchanged
    assert await call(assistant, "PUT", active, {"id": None}) == (200, {"activePersona": None})
    assert (await everything(assistant))["activePersona"] is None

    assert await call(assistant, "PUT", active, {"id": 1}) == (200, {"activePersona": renamed})
    assert await call(assistant, "DELETE", f"{path}/1") == (200, {"deleted": 1})
    snapshot = await everything(assistant)
    assert (snapshot["personas"], snapshot["activePersona"]) == ([TUTOR], None)
    assert await call(assistant, "DELETE", f"{path}/1") == (
        404,
        {"error": "persona 1 does not exist"},
    )
    assert await call(assistant, "PUT", active, {"id": 1}) == (
        400,
        {"error": "there is no persona with id 1"},
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "A"}, "'instructions' is required"),
        ({"instructions": "B"}, "'name' is required"),
        ({"name": 5, "instructions": "B"}, "name must be a string"),
        ({"name": "A", "instructions": "B", "description": 3}, "description must be a string"),
        (
            {"name": "A", "instructions": "B", "replacesSystemPrompt": "yes"},
            "replacesSystemPrompt must be true or false",
        ),
        ({"name": "A", "instructions": " "}, "instructions must not be empty"),
    ],
)
async def test_bad_persona_bodies_name_the_field(assistant, body, message):
    assert await call(assistant, "POST", f"{BASE}/personas", body) == (400, {"error": message})
    assert await call(assistant, "GET", f"{BASE}/personas") == (200, {"personas": []})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, 'send {"id": <persona id>} or {"id": null}'),
        ([1], 'send {"id": <persona id>} or {"id": null}'),
        ({"id": "1"}, "'id' must be a persona id (a number) or null"),
        ({"id": True}, "'id' must be a persona id (a number) or null"),
        ({"id": 1.0}, "'id' must be a persona id (a number) or null"),
    ],
)
async def test_bad_active_persona_bodies(assistant, body, message):
    await call(assistant, "POST", f"{BASE}/personas", {"name": "P", "instructions": "i"})
    assert await call(assistant, "PUT", f"{BASE}/personas/active", body) == (
        400,
        {"error": message},
    )
    assert (await everything(assistant))["activePersona"] is None


@pytest.mark.parametrize(("name", "filename"), [("soul", "SOUL.md"), ("goals", "goals.md")])
async def test_soul_and_goals_are_files_in_the_data_dir(assistant, tmp_path, name, filename):
    data_dir = tmp_path / "data"
    path = f"{BASE}/{name}"
    assert await call(assistant, "GET", path) == (200, {"text": DEFAULTS[name]})
    assert (data_dir / filename).read_text(encoding="utf-8") == DEFAULTS[name]

    text = "# About me\n\nI render anime portraits — ünïcödé kept.\n"
    assert await call(assistant, "PUT", path, {"text": text}) == (200, {"text": text})
    assert (data_dir / filename).read_text(encoding="utf-8") == text
    assert await call(assistant, "GET", path) == (200, {"text": text})
    assert (await everything(assistant))[name] == text

    (data_dir / filename).write_text("edited by hand\n", encoding="utf-8")
    assert await call(assistant, "GET", path) == (200, {"text": "edited by hand\n"})

    message = {"error": "'text' must be a string of at most 20000 characters"}
    for bad in ({"text": 5}, {"text": None}, {}, ["x"], {"text": "x" * 20_001}):
        assert await call(assistant, "PUT", path, bad) == (400, message)
    assert (data_dir / filename).read_text(encoding="utf-8") == "edited by hand\n"

    assert await call(assistant, "PUT", path, {"text": ""}) == (200, {"text": ""})
    assert (data_dir / filename).read_text(encoding="utf-8") == ""
    leftovers = sorted(p.name for p in data_dir.iterdir() if p.name.startswith("."))
    assert leftovers == []  # the atomic write left no temp file behind


@pytest.mark.parametrize(("name", "filename"), [("soul", "SOUL.md"), ("goals", "goals.md")])
async def test_a_hand_edited_file_that_is_not_utf8_breaks_nothing(
    assistant, provider, tmp_path, name, filename
):
    """Saved as Latin-1 by some editor: still shown, and the chat still answers."""
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / filename).write_bytes(b"I like caf\xe9 au lait\n")
    status, body = await call(assistant, "GET", f"{BASE}/{name}")
    assert status == 200, body
    assert body["text"].startswith("I like caf") and body["text"].endswith(" au lait\n")
    status, snapshot = await call(assistant, "GET", BASE)
    assert (status, snapshot.get(name)) == (200, body["text"])

    provider.enqueue(text_reply("ok"))
    status, raw = await assistant.chat(chat_body(user("hi")))
    assert status == 200, raw
    assert [e["type"] for e in sse_events(raw)][-1] == "finish"


async def test_preferences_merge_and_null_deletes(assistant):
    path = f"{BASE}/preferences"
    assert await call(assistant, "GET", path) == (200, {})
    assert await call(assistant, "PUT", path, {"language": "en", "units": "metric"}) == (
        200,
        {"language": "en", "units": "metric"},
    )
    update = {"units": None, "steps": 30, "hires": True, "cfg": 6.5, "language": "fr"}
    expected = {"language": "fr", "steps": 30, "hires": True, "cfg": 6.5}
    assert await call(assistant, "PUT", path, update) == (200, expected)
    assert await call(assistant, "GET", path) == (200, expected)
    assert (await everything(assistant))["preferences"] == expected
    assert await call(assistant, "PUT", path, {"never-set": None}) == (200, expected)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, 'send an object of preferences, e.g. {"language": "en"}'),
        (["en"], 'send an object of preferences, e.g. {"language": "en"}'),
        ({"style": {"a": 1}}, "preference 'style' must be a string, number, boolean or null"),
        ({"tags": ["a"]}, "preference 'tags' must be a string, number, boolean or null"),
        ({"bio": "x" * 1001}, "preference 'bio' is longer than 1000 characters"),
        ({"k" * 101: "v"}, "preference name 'kkkkkkkkkkkkkkkkkkkk'… is longer than 100 characters"),
    ],
)
async def test_bad_preferences_get_400_and_change_nothing(assistant, body, message):
    path = f"{BASE}/preferences"
    await call(assistant, "PUT", path, {"language": "en"})
    if isinstance(body, dict) and body:
        body = {"ok": 1, **body}  # a valid key next to the bad one is not stored either
    assert await call(assistant, "PUT", path, body) == (
        400,
        {"error": message},
    )
    assert await call(assistant, "GET", path) == (200, {"language": "en"})


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
async def test_a_preference_that_is_not_json_is_refused(assistant, literal):
    """Python's json module accepts NaN; stored, it would make every later GET invalid JSON."""
    path = f"{BASE}/preferences"
    status, answer = await raw_put(assistant, path, b'{"cfg": ' + literal + b"}")
    assert status == 400
    assert set(answer) == {"error"}
    async with assistant.session.get(assistant.base + path) as resp:
        raw = await resp.text()

    def strict(token: str) -> None:
        raise AssertionError(f"GET {path} is not valid JSON: it holds {token}")

    assert json.loads(raw, parse_constant=strict) == {}


async def test_the_system_prompt_is_set_and_cleared(assistant):
    path = f"{BASE}/system-prompt"
    assert await call(assistant, "GET", path) == (200, {"text": None})
    assert await call(assistant, "PUT", path, {"text": "  You are terse.  "}) == (
        200,
        {"text": "You are terse."},
    )
    assert await call(assistant, "GET", path) == (200, {"text": "You are terse."})
    assert (await everything(assistant))["systemPrompt"] == "You are terse."
    assert await call(assistant, "PUT", path, {"text": None}) == (200, {"text": None})
    assert await call(assistant, "GET", path) == (200, {"text": None})
    await call(assistant, "PUT", path, {"text": "again"})
    assert await call(assistant, "PUT", path, {"text": "   "}) == (200, {"text": None})
    assert (await everything(assistant))["systemPrompt"] is None


@pytest.mark.parametrize(
    "body",
    [
        {"text": 5},
        {"text": ["a"]},
        {"text": "x" * 20_001},
        ["You are terse."],
        {},  # no "text" at all must not silently clear the prompt
        {"txt": "a typo"},
    ],
)
async def test_bad_system_prompt_bodies_change_nothing(assistant, body):
    path = f"{BASE}/system-prompt"
    await call(assistant, "PUT", path, {"text": "Keep me."})
    assert await call(assistant, "PUT", path, body) == (
        400,
        {
            "error": 'send {"text": "..."} (at most 20000 characters), or {"text": null} to go '
            "back to the shipped prompt"
        },
    )
    assert await call(assistant, "GET", path) == (200, {"text": "Keep me."})


@pytest.mark.parametrize(
    "content_type", ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/rules"),
        ("PATCH", "/rules/1"),
        ("POST", "/reminders"),
        ("PATCH", "/reminders/1"),
        ("POST", "/personas"),
        ("PATCH", "/personas/1"),
        ("PUT", "/personas/active"),
        ("PUT", "/soul"),
        ("PUT", "/goals"),
        ("PUT", "/preferences"),
        ("PUT", "/system-prompt"),
    ],
)
async def test_form_posts_get_415_and_change_nothing(assistant, method, path, content_type):
    before = await everything(assistant)
    async with assistant.session.request(
        method,
        assistant.base + BASE + path,
        data=b"text=evil&name=evil&instructions=evil&id=1",
        headers={"Content-Type": content_type},
    ) as resp:
        assert (resp.status, await resp.json()) == (415, FORM_ERROR)
    assert await everything(assistant) == before


async def test_oversized_bodies_get_413(assistant):
    limit = 1024 * 1024
    status, answer = await call(assistant, "POST", f"{BASE}/rules", {"text": "x" * (limit + 1)})
    assert (status, answer) == (
        413,
        {"error": f"the body is larger than the limit of {limit} bytes"},
    )
    assert await call(assistant, "GET", f"{BASE}/rules") == (200, {"rules": []})
