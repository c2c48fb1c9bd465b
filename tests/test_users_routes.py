"""Route by route, another user's ids: with ComfyUI's --multi-user, Bob tries every route of
the assistant on everything Alice has (her thread, its checkpoint and branch, her attachment,
project and document, rules, reminders, persona, skill, scan) and continues her thread in a
chat. Nothing of hers reaches him or the model in his request, her ids answer him exactly as
they answer a user who has nothing (404 where an id is unknown), and all she had is as it was."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from .comfy_images import comfy_png
from .fuzz_shapes import ROUTE_BODIES
from .helpers import chat_body, sent, user
from .scripted_provider import ScriptedProvider, text_reply
from .team import Team, provider_env

MARK = "alice-private-7f3a"  # in everything Alice stores
BASE = "/api/assistant"
T = "t-alice"
CHECKPOINT = ROUTE_BODIES[("POST", f"{BASE}/threads/fuzz-t/checkpoints")]


@pytest.fixture
async def team(provider: ScriptedProvider, tmp_path: Path) -> AsyncIterator[Team]:
    provider.responder = lambda _: text_reply(f"Noted, {MARK}-answer.")
    running = await Team.start(tmp_path / "data", provider_env(provider))
    yield running
    await running.close()


async def seed_alice(team: Team) -> dict[str, str]:
    """Everything Alice has, each holding MARK; the ids of it."""
    a = team.alice
    status, _ = await team.call(a, "POST", f"{BASE}/chat", _chat(T, f"My secret is {MARK}."))
    assert status == 200
    answer = (await team.json(a, "GET", f"{BASE}/threads/{T}"))["messages"][-1]["id"]
    await team.json(a, "PATCH", f"{BASE}/threads/{T}", {"title": f"{MARK} title"})
    checkpoint = {**ROUTE_BODIES[("POST", f"{BASE}/threads/fuzz-t/checkpoints")]}
    await team.json(
        a, "POST", f"{BASE}/threads/{T}/checkpoints", {**checkpoint, "messageId": answer}
    )
    data = base64.b64encode(f"notes: {MARK}".encode()).decode()
    att = await team.json(
        a, "POST", f"{BASE}/attachments", {"thread": T, "name": "n.txt", "data": data}
    )
    project = await team.json(a, "POST", f"{BASE}/projects", {"name": f"{MARK} project"})
    doc_body = {"title": f"{MARK} doc", "text": f"{MARK} text"}
    doc = await team.json(a, "POST", f"{BASE}/projects/{project['id']}/documents", doc_body)
    ids = {"thread": T, "answer": answer, "attachment": att["id"], "project": str(project["id"])}
    ids["document"] = str(doc["id"])
    for kind in ("rules", "reminders"):
        row = await team.json(a, "POST", f"{BASE}/user-context/{kind}", {"text": f"{MARK} {kind}"})
        ids[kind] = str(row["id"])
    persona = {**ROUTE_BODIES[("POST", f"{BASE}/user-context/personas")], "instructions": MARK}
    ids["personas"] = str(
        (await team.json(a, "POST", f"{BASE}/user-context/personas", persona))["id"]
    )
    await team.json(a, "PUT", f"{BASE}/user-context/personas/active", {"id": int(ids["personas"])})
    for name in ("soul", "goals", "system-prompt"):
        await team.json(a, "PUT", f"{BASE}/user-context/{name}", {"text": f"{MARK} {name}"})
    await team.json(a, "PUT", f"{BASE}/user-context/preferences", {"language": "de"})
    skill = {"slug": "alice-skill", "name": "S", "description": f"{MARK} d", "body": f"{MARK} b"}
    await team.json(a, "POST", f"{BASE}/user-context/skills", skill)
    scan = ROUTE_BODIES[("POST", f"{BASE}/installs/scan")]
    ids["scan"] = (await team.json(a, "POST", f"{BASE}/installs/scan", scan))["scan"]
    return ids


def _chat(thread: str, text: str) -> dict[str, Any]:
    return chat_body(user(text), id=thread)


# Alice's views, read before and after Bob's tries: the same, byte for byte.
VIEWS = (
    "/threads", "/threads/{thread}", "/threads/{thread}/checkpoints", "/threads/{thread}/branches",
    "/threads/{thread}/context", "/threads/{thread}/summary", "/attachments/{attachment}",
    "/projects", "/projects/{project}", "/projects/{project}/documents/{document}",
    "/user-context", "/user-context/rules", "/user-context/reminders", "/user-context/personas",
    "/user-context/soul", "/user-context/goals", "/user-context/preferences",
    "/user-context/system-prompt", "/user-context/skills", "/user-context/skills/alice-skill",
    "/installs/scan/{scan}",
)  # fmt: skip


async def views(team: Team, who: str, ids: dict[str, str]) -> dict[str, str]:
    out = {}
    for view in VIEWS:
        status, text = await team.call(who, "GET", BASE + view.format(**ids))
        out[view] = f"{status} {text}"
    return out


def bob_tries(ids: dict[str, str]) -> list[tuple[str, str, Any]]:
    """Every route of the assistant with Alice's ids in its path (and in its body where a body
    names one): reads, changes, and last the deletes."""
    t, p, d = f"{BASE}/threads/{ids['thread']}", ids["project"], ids["document"]
    body = {"title": "bob", "text": "bob", "name": "bob", "enabled": False, "body": "bob"}
    tries: list[tuple[str, str, Any]] = [
        ("GET", t, None), ("PATCH", t, {"title": "bob", "archived": True}),
        ("GET", f"{t}/context", None), ("GET", f"{t}/summary", None),
        ("POST", f"{t}/compact", {}), ("GET", f"{t}/delegations/c1", None),
        ("GET", f"{t}/checkpoints", None), ("GET", f"{t}/checkpoints/{ids['answer']}", None),
        ("POST", f"{t}/checkpoints", {**CHECKPOINT, "messageId": ids["answer"]}),
        ("POST", f"{t}/rewind", {"messageId": ids["answer"]}),
        ("GET", f"{t}/branches", None), ("POST", f"{t}/branches/1/restore", {}),
        ("GET", f"{BASE}/attachments/{ids['attachment']}", None),
        ("GET", f"{BASE}/attachments/{ids['attachment']}/workflow", None),
        ("GET", f"{BASE}/projects/{p}", None), ("PATCH", f"{BASE}/projects/{p}", {"name": "bob"}),
        ("POST", f"{BASE}/projects/{p}/documents", {"title": "bob", "text": "bob"}),
        ("GET", f"{BASE}/projects/{p}/documents/{d}", None),
        ("PATCH", f"{BASE}/projects/{p}/documents/{d}", {"title": "bob", "text": "bob"}),
        ("GET", f"{BASE}/installs/scan/{ids['scan']}", None),
        ("POST", f"{BASE}/installs/downloads", {"scan": ids["scan"], "models": ["x.safetensors"]}),
        ("GET", f"{BASE}/user-context/skills/alice-skill", None),
        ("PUT", f"{BASE}/user-context/skills/alice-skill", {"body": "bob"}),
        ("PUT", f"{BASE}/user-context/personas/active", {"id": int(ids["personas"])}),
    ]  # fmt: skip
    for kind in ("rules", "reminders", "personas"):
        tries.append(("PATCH", f"{BASE}/user-context/{kind}/{ids[kind]}", body))
    deletes = [
        f"{BASE}/user-context/{kind}/{ids[kind]}" for kind in ("rules", "reminders", "personas")
    ]
    deletes += [
        f"{BASE}/user-context/skills/alice-skill", f"{BASE}/attachments/{ids['attachment']}",
        f"{BASE}/projects/{p}/documents/{d}", f"{BASE}/projects/{p}", t,
    ]  # fmt: skip
    return tries + [("DELETE", path, None) for path in deletes]


async def test_no_route_gives_bob_anything_of_alice_or_changes_it(
    team: Team, provider: ScriptedProvider
) -> None:
    ids = await seed_alice(team)
    before = await views(team, team.alice, ids)
    assert all(view.startswith("200 ") for view in before.values()), before
    assert all(MARK in before[v] for v in ("/threads", "/user-context", "/user-context/skills"))
    asked = len(provider.requests)

    carol = team.users.add("carol")  # a user with nothing, asking the same as Bob
    crossed, told_apart = [], []
    for method, path, body in bob_tries(ids):
        status, text = await team.call(team.bob, method, path, body)
        if MARK in text or status >= 500:
            crossed.append(f"{method} {path}: {status} {text[:200]}")
        if (status, text) != await team.call(carol, method, path, body):
            told_apart.append(f"{method} {path}: {status} {text[:120]}")
        if method != "GET" and ids["thread"] in path:  # her thread is none of his
            assert status == 404, (method, path, status, text)
    # his own lists, searches and context hold nothing of hers
    for path in ("/threads", f"/threads?q={MARK}", "/user-context", "/user-context/skills",
                 "/projects", "/installs/downloads"):  # fmt: skip
        status, text = await team.call(team.bob, "GET", BASE + path)
        if MARK in text or status != 200:
            crossed.append(f"GET {path}: {status} {text[:200]}")
    assert crossed == []
    assert told_apart == []  # her ids answer him as ids that never were

    # continuing her thread id: a thread of his own; the model sees nothing of hers
    status, text = await team.call(
        team.bob, "POST", f"{BASE}/chat", _chat(T, "What was my secret?")
    )
    assert status == 200 and MARK not in text.replace(f"{MARK}-answer", "")
    bob_request = json.dumps(provider.requests[asked:])
    assert MARK not in bob_request
    conversation = [m for m in sent(provider, len(provider.requests) - 1) if m["role"] != "system"]
    assert conversation == [{"role": "user", "content": "What was my secret?"}]

    assert await views(team, team.alice, ids) == before  # all hers, as it was


async def test_ids_are_not_probed_another_users_thread_answers_as_one_that_never_was(
    team: Team,
) -> None:
    ids = await seed_alice(team)
    theirs = await team.call(team.bob, "GET", f"{BASE}/threads/{ids['thread']}")
    nobodys = await team.call(team.bob, "GET", f"{BASE}/threads/no-such-thread")
    assert theirs[0] == nobodys[0] == 404
    assert re.sub("t-alice|no-such-thread", "X", theirs[1]) == re.sub(
        "t-alice|no-such-thread", "X", nobodys[1]
    )


async def test_an_attachment_shown_by_url_names_its_user_in_the_query_on_that_route_only(
    team: Team,
) -> None:
    """`<img src>` cannot send the comfy-user header: the attachment's bytes take the user from
    `?user=` when no header names one, by ComfyUI's rule, and only there, only for a GET."""
    png = comfy_png()
    body = {"thread": T, "name": "a.png", "data": base64.b64encode(png).decode()}
    att = await team.json(team.alice, "POST", f"{BASE}/attachments", body)
    file = f"{BASE}/attachments/{att['id']}"

    async def get(path: str, header: str | None = None, method: str = "GET") -> tuple[int, bytes]:
        headers = {} if header is None else {"comfy-user": header}
        async with team.app.session.request(method, team.app.base + path, headers=headers) as r:
            return r.status, await r.read()

    assert await get(f"{file}?user={team.alice}") == (200, png)  # hers, by the query
    # Bob naming himself: her id is none of his (as an id that never was)
    theirs = await get(f"{file}?user={team.bob}")
    nobodys = await get(f"{BASE}/attachments/att_none?user={team.bob}")
    assert theirs[0] == nobodys[0] == 404
    assert theirs[1].replace(att["id"].encode(), b"X") == nobodys[1].replace(b"att_none", b"X")
    # the header, when there is one, is who asks (Bob's header with her name in the query)
    assert (await get(f"{file}?user={team.alice}", header=team.bob))[0] == 404
    # an unknown or system user in the query is refused as ComfyUI refuses it; no user: refused
    for who in ("mallory", "__system", ""):
        assert (await get(f"{file}?user={who}"))[0] == 403, who
    assert (await get(file))[0] == 403
    # only that route, only GET: elsewhere the query names nobody
    assert (await get(f"{file}/workflow?user={team.alice}"))[0] == 403
    assert (await get(f"{BASE}/threads?user={team.alice}"))[0] == 403
    assert (await get(f"{file}?user={team.alice}", method="DELETE"))[0] == 403
    assert await get(file, header=team.alice) == (200, png)  # (still hers, as it was)
