"""/api/assistant/projects: projects and their documents (create, read, rename, change,
delete), the limits a document is checked against, passages and their FTS5 index, a thread
put in a project."""

from __future__ import annotations

import base64
import random
import re
import string
from typing import Any

import pytest
from comfyui_assistant.core.files.projects import MAX_DOCUMENT_BYTES, Projects, fts_query
from comfyui_assistant.core.tokens.passages import MAX_PASSAGE_TOKENS, split_passages
from comfyui_assistant.core.tokens.tokens import TokenCounter, counter_for
from comfyui_assistant.standalone import SERVICE

BASE = "/api/assistant/projects"


async def call(app, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    if body is not None:
        kw["json"] = body
    async with app.session.request(method, app.base + path, **kw) as resp:
        return resp.status, await resp.json()


async def project(app, name: str = "Film") -> int:
    status, body = await call(app, "POST", BASE, {"name": name})
    assert status == 201, body
    return int(body["id"])


async def document(app, pid: int, title: str, text: str) -> dict[str, Any]:
    status, body = await call(
        app, "POST", f"{BASE}/{pid}/documents", {"title": title, "text": text}
    )
    assert status == 201, body
    return body


async def test_project_and_document_crud(assistant) -> None:
    pid = await project(assistant, "  Short film  ")
    status, listed = await call(assistant, "GET", BASE)
    assert status == 200
    assert [(p["name"], p["documentCount"]) for p in listed["projects"]] == [("Short film", 0)]
    doc = await document(assistant, pid, "Style guide", "Muted teal palette.\n\nFilm grain 0.3.")
    assert doc["tokens"] > 0 and doc["passages"] == 1 and doc["title"] == "Style guide"
    status, got = await call(assistant, "GET", f"{BASE}/{pid}/documents/{doc['id']}")
    assert status == 200 and got["text"] == "Muted teal palette.\n\nFilm grain 0.3."
    status, changed = await call(
        assistant, "PATCH", f"{BASE}/{pid}/documents/{doc['id']}", {"text": "Warm amber palette."}
    )
    assert status == 200 and changed["text"] == "Warm amber palette."
    status, renamed = await call(assistant, "PATCH", f"{BASE}/{pid}", {"name": "Feature"})
    assert status == 200 and renamed["name"] == "Feature"
    assert [d["title"] for d in renamed["documents"]] == ["Style guide"]
    assert renamed["tokens"] == changed["tokens"]
    status, _ = await call(assistant, "DELETE", f"{BASE}/{pid}/documents/{doc['id']}")
    assert status == 200
    status, _ = await call(assistant, "GET", f"{BASE}/{pid}/documents/{doc['id']}")
    assert status == 404
    status, _ = await call(assistant, "DELETE", f"{BASE}/{pid}")
    assert status == 200
    status, body = await call(assistant, "GET", f"{BASE}/{pid}")
    assert status == 404 and body["error"] == f"project {pid} does not exist"


async def test_limits_and_mistakes_are_clear_4xx(assistant) -> None:
    pid = await project(assistant)
    status, body = await call(assistant, "POST", BASE, {"name": "Film"})
    assert status == 409 and "exists already" in body["error"]
    status, body = await call(assistant, "POST", BASE, {"name": "x" * 101})
    assert status == 400 and "101" in body["error"] and "100" in body["error"]
    status, body = await call(assistant, "POST", BASE, {"name": "a\nb"})
    assert status == 400
    big = "word " * (MAX_DOCUMENT_BYTES // 5 + 1)
    status, body = await call(
        assistant, "POST", f"{BASE}/{pid}/documents", {"title": "t", "text": big}
    )
    assert status == 413, body
    assert f"{len(big.encode()):,}" in body["error"] and f"{MAX_DOCUMENT_BYTES:,}" in body["error"]
    status, body = await call(
        assistant, "POST", f"{BASE}/{pid}/documents", {"title": "bin", "text": "PNG\x00\x01"}
    )
    assert status == 400 and "U+0000" in body["error"]
    status, body = await call(
        assistant, "POST", f"{BASE}/{pid}/documents", {"title": "t", "text": "  "}
    )
    assert status == 400
    status, body = await call(assistant, "POST", f"{BASE}/{pid}/documents", {"title": "t"})
    assert status == 400
    status, body = await call(
        assistant, "POST", f"{BASE}/999/documents", {"title": "t", "text": "x"}
    )
    assert status == 404
    status, body = await call(assistant, "GET", f"{BASE}/abc")
    assert status == 400
    async with assistant.session.post(
        assistant.base + f"{BASE}/{pid}/documents",
        data=b'{"title": "t", "text": "\xff\xfe"}',
        headers={"Content-Type": "application/json"},
    ) as resp:
        assert resp.status == 400 and "UTF-8" in (await resp.json())["error"]


async def test_a_thread_joins_and_leaves_a_project(assistant) -> None:
    pid = await project(assistant)
    status, _ = await call(assistant, "POST", "/api/assistant/threads", {"id": "t1"})
    assert status == 201
    status, thread = await call(assistant, "PATCH", "/api/assistant/threads/t1", {"project": pid})
    assert status == 200 and thread["project"] == pid
    status, body = await call(assistant, "PATCH", "/api/assistant/threads/t1", {"project": 999})
    assert status == 404 and "project 999" in body["error"]
    status, body = await call(assistant, "PATCH", "/api/assistant/threads/t1", {"project": "x"})
    assert status == 400
    await call(assistant, "DELETE", f"{BASE}/{pid}")  # the thread stays, out of the project
    status, thread = await call(assistant, "GET", "/api/assistant/threads/t1")
    assert status == 200 and thread["project"] is None


def test_passages_stay_at_paragraphs_within_their_size() -> None:
    counter = counter_for(None)
    paragraphs = [
        f"Paragraph {i}. " + "The lens is sharp at f/4. " * (5 + i % 7) for i in range(40)
    ]
    long = "One huge paragraph. " + "Prompt adherence is strong with long prompts. " * 200
    passages = split_passages("\n\n".join([*paragraphs, long]), counter)
    assert all(tokens <= MAX_PASSAGE_TOKENS for _, tokens in passages)
    assert sum(p.count("Paragraph ") for p, _ in passages) == 40
    joined = [p for p, _ in passages if "Paragraph " in p]
    assert all(not p.startswith("The lens") for p in joined)  # cut between paragraphs
    assert len(passages) > 5


def _runs() -> dict[str, str]:
    """500 KB without a space or a paragraph break (a run of CJK characters is text too)."""
    rng = random.Random(7)
    return {
        "one word": "".join(rng.choice(string.ascii_lowercase) for _ in range(500_000)),
        "CJK run": "".join(
            rng.choice("的一是在不了有和人这中大为上个国我") for _ in range(166_000)
        ),
        "base64": base64.b64encode(rng.randbytes(375_000)).decode(),
    }


@pytest.mark.parametrize("kind", ["one word", "CJK run", "base64"])
@pytest.mark.parametrize("tokens", ["tiktoken", "estimate"])
def test_a_run_without_spaces_is_cut_into_passages_within_their_size(
    kind: str, tokens: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 500 KB one-word document was one passage of 270,234 tokens (cl100k)."""
    if tokens == "estimate":  # no tokenizer: the estimate is not additive either
        monkeypatch.setenv("COMFYUI_ASSISTANT_TOKENS", "estimate")
    counter = TokenCounter()
    assert counter.exact == (tokens == "tiktoken")
    text = _runs()[kind]
    passages = split_passages(text, counter)
    assert max(size for _, size in passages) <= MAX_PASSAGE_TOKENS
    assert all(size == counter.text(p) for p, size in passages)
    assert len(passages) > 900
    assert re.sub(r"\s", "", "".join(p for p, _ in passages)) == text  # all of it, in order


async def test_a_500_kb_one_word_document_is_stored_in_passages(assistant) -> None:
    pid = await project(assistant)
    word = _runs()["one word"]
    doc = await document(assistant, pid, "Blob", word)
    assert doc["passages"] > 2000 and doc["tokens"] > 250_000
    store = await assistant.app[SERVICE].store()
    row = await store.fetchone("SELECT MAX(token_count) AS most FROM passages")
    assert row is not None and row["most"] <= MAX_PASSAGE_TOKENS


def test_fts_queries_cannot_inject_operators() -> None:
    assert fts_query('What "sampler" NEAR(x) -- OR * ?') == '"what" OR "sampler" OR "near" OR "or"'
    assert fts_query("?? !") == ""


async def test_bm25_ranks_the_answering_passage_first(assistant) -> None:
    pid = await project(assistant)
    await document(
        assistant, pid, "Model card: Flux dev",
        "Flux dev is a 12B rectified flow model.\n\n"
        "Recommended sampler: euler with the simple scheduler, 20 to 28 steps, guidance 3.5.\n\n"
        "License: non-commercial.",
    )  # fmt: skip
    await document(
        assistant, pid, "Shot list",
        "Shot 1: wide establishing shot of the harbour at dawn.\n\n"
        "Shot 2: close-up of the fisherman's hands mending a net, shallow depth of field.",
    )  # fmt: skip
    projects = Projects(await assistant.app[SERVICE].store())
    found = await projects.search(pid, "which sampler and how many steps for flux?")
    assert found and "euler" in found[0].text
    found = await projects.search(pid, "the close-up of the hands")
    assert found and "fisherman" in found[0].text
    assert (await call(assistant, "DELETE", f"{BASE}/{pid}"))[0] == 200
    assert await projects.search(pid, "sampler") == []
    rows = await projects.store.fetchall("SELECT COUNT(*) FROM passage_index")
    assert rows[0][0] == 0  # the index follows the cascade


@pytest.fixture(params=["fts5", "no fts5"])
async def either_sqlite(request, monkeypatch, provider, tmp_path, caplog):
    """The app on this SQLite (FTS5 built in) and as on an SQLite built without FTS5."""
    from comfyui_assistant.core.store.migrations import NO_FTS5

    from .conftest import start_app

    if request.param == "no fts5":
        monkeypatch.setenv(NO_FTS5, "1")
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    with caplog.at_level("WARNING", logger="comfyui_assistant"):
        app = await start_app(tmp_path / "data", env)
        await app.app[SERVICE].store()
    yield request.param, app
    await app.close()


async def test_without_fts5_the_store_opens_and_documents_are_still_found(either_sqlite, caplog):
    kind, app = either_sqlite
    store = await app.app[SERVICE].store()
    assert store.full_text is (kind == "fts5")
    notices = [r for r in caplog.get_records("setup") if "no FTS5" in r.getMessage()]
    assert len(notices) == (0 if kind == "fts5" else 1)
    pid = await project(app)
    card = await document(
        app, pid, "Model card: Flux dev",
        "Flux dev is a 12B rectified flow model.\n\n"
        "Recommended sampler: euler with the simple scheduler, 20 to 28 steps, guidance 3.5.\n\n"
        "License: non-commercial.",
    )  # fmt: skip
    await document(
        app, pid, "Shot list",
        "Shot 1: wide establishing shot of the harbour at dawn.\n\n"
        "Shot 2: close-up of the fisherman's hands mending a net, shallow depth of field.",
    )  # fmt: skip
    projects = Projects(store)
    found = await projects.search(pid, "which sampler and how many steps for flux?")
    assert found and "euler" in found[0].text
    found = await projects.search(pid, "the close-up of the hands, 100% crop_1")
    assert found and "fisherman" in found[0].text
    path = f"{BASE}/{pid}/documents/{card['id']}"
    assert (await call(app, "PATCH", path, {"text": "Use dpmpp_2m for Flux."}))[0] == 200
    found = await projects.search(pid, "dpmpp_2m")
    assert [p.text for p in found] == ["Use dpmpp_2m for Flux."]
    assert (await call(app, "DELETE", f"{BASE}/{pid}"))[0] == 200
    assert await projects.search(pid, "sampler") == []
