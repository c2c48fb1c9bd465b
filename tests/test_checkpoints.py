"""Checkpoints (core/store/checkpoints.py, routes/checkpoints.py): the graph before an assistant
turn changed it, saved once per message, listed and fetched back whole (subgraphs included);
stored once per distinct graph and gone with the last checkpoint holding it; bounded per thread
by count and by compressed bytes; following a renamed workflow; every bad input a clear 4xx."""

from __future__ import annotations

import os
import zlib
from typing import Any

import pytest
from comfyui_assistant.core.store.checkpoints import MAX_CHECKPOINTS, Checkpoints
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.standalone import SERVICE

from .test_threads_api import BASE, call

A, B = "portraits/flux.json", "unsaved:0b5c3d4e-0000-4000-8000-000000000001"


def graph(*types: str, note: str = "") -> dict[str, Any]:
    """A workflow as ComfyUI serializes it, with a subgraph definition."""
    nodes = [
        {"id": i + 1, "type": t, "pos": [i * 300, 0], "widgets_values": [note]}
        for i, t in enumerate(types)
    ]
    inner = {"id": "5a2c", "name": "Upscale", "nodes": [{"id": 1, "type": "ImageScale"}]}
    return {
        "id": "0b5c3d4e-0000-4000-8000-000000000001",
        "last_node_id": len(types),
        "nodes": nodes,
        "links": [],
        "definitions": {"subgraphs": [inner]},
        "version": 0.4,
    }


async def thread(app, thread_id: str = "t1", workflow: str | None = A) -> None:
    status, body = await call(app, "POST", BASE, {"id": thread_id, "workflow": workflow})
    assert status == 201, body


async def save(app, message_id: str, g: dict[str, Any], thread_id: str = "t1", **extra: Any):
    body = {"messageId": message_id, "workflow": A, "graph": g, **extra}
    return await call(app, "POST", f"{BASE}/{thread_id}/checkpoints", body)


async def test_a_checkpoint_is_saved_once_per_message_and_read_back_whole(assistant):
    await thread(assistant)
    before = graph("CheckpointLoaderSimple", "KSampler")
    status, saved = await save(assistant, "a1", before)
    assert status == 201, saved
    assert {k: saved[k] for k in ("messageId", "workflow", "nodes", "dropped")} == {
        "messageId": "a1",
        "workflow": A,
        "nodes": 2,
        "dropped": [],
    }
    # The same turn again (a resubmit, after its first edit): the first graph stays.
    status, again = await save(assistant, "a1", graph("KSampler"), workflow=B)
    assert status == 200 and again["nodes"] == 2 and again["workflow"] == A

    status, found = await call(assistant, "GET", f"{BASE}/t1/checkpoints/a1")
    assert status == 200
    assert found["graph"] == before  # the subgraph definitions with it
    assert found["bytes"] == saved["bytes"] > found["storedBytes"] > 0

    await save(assistant, "a2", graph("KSampler", "VAEDecode", "SaveImage"))
    status, listed = await call(assistant, "GET", f"{BASE}/t1/checkpoints")
    assert status == 200
    assert [(c["messageId"], c["nodes"]) for c in listed["checkpoints"]] == [("a1", 2), ("a2", 3)]
    assert listed["bounds"]["checkpoints"] == MAX_CHECKPOINTS


async def test_a_graph_is_stored_once_and_goes_with_its_last_checkpoint(assistant):
    await thread(assistant, "t1")
    await thread(assistant, "t2")
    same = graph("KSampler", note="x" * 5000)
    for thread_id, message_id in (("t1", "a1"), ("t1", "a2"), ("t2", "a9")):
        status, _ = await save(assistant, message_id, same, thread_id)
        assert status == 201
    _, listed = await call(assistant, "GET", f"{BASE}/t1/checkpoints")
    one = listed["checkpoints"][0]["storedBytes"]
    assert listed["storedBytes"] == one  # two checkpoints, one blob
    assert await blob_count(assistant) == 1

    assert (await call(assistant, "DELETE", f"{BASE}/t1"))[0] == 200
    assert await blob_count(assistant) == 1  # t2 still holds it
    assert (await call(assistant, "DELETE", f"{BASE}/t2"))[0] == 200
    assert await blob_count(assistant) == 0


async def blob_count(app) -> int:
    store = await app.app[SERVICE].store()
    row = await store.fetchone("SELECT COUNT(*) FROM checkpoint_blobs")
    return int(row[0])


async def test_the_newest_checkpoints_are_kept_within_the_count(tmp_path):
    store = await Store.open(tmp_path)
    try:
        await make_thread(store, "t")
        checkpoints = Checkpoints(store, max_checkpoints=3)
        dropped = []
        for i in range(5):
            saved = await checkpoints.save("t", f"a{i}", A, graph("KSampler", note=str(i)))
            assert saved is not None
            dropped.extend(saved.dropped)
        assert dropped == ["a0", "a1"]
        assert [c.message_id for c in await checkpoints.listed("t")] == ["a2", "a3", "a4"]
        assert (await store.fetchone("SELECT COUNT(*) FROM checkpoint_blobs"))[0] == 3
    finally:
        await store.close()


async def test_the_newest_checkpoints_are_kept_within_the_bytes(tmp_path):
    store = await Store.open(tmp_path)
    try:
        await make_thread(store, "t")
        noise = [os.urandom(3000).hex() for _ in range(4)]  # incompressible: ~6 KB stored each
        one = len(zlib.compress(noise[0].encode()))
        checkpoints = Checkpoints(store, max_checkpoints=100, max_thread_bytes=int(2.5 * one))
        for i, text in enumerate(noise):
            await checkpoints.save("t", f"a{i}", A, graph("Note", note=text))
        assert [c.message_id for c in await checkpoints.listed("t")] == ["a2", "a3"]
        assert await checkpoints.stored_bytes("t") <= 2.5 * one
        # The newest stays even alone beyond the bound.
        small = Checkpoints(store, max_thread_bytes=10)
        saved = await small.save("t", "a9", A, graph("Note", note=noise[0]))
        assert saved is not None and saved.dropped == ("a2", "a3")
        assert [c.message_id for c in await checkpoints.listed("t")] == ["a9"]
    finally:
        await store.close()


async def make_thread(store: Store, thread_id: str) -> None:
    await store.write(
        lambda db: db.execute(
            "INSERT INTO threads (id, created_at, updated_at) VALUES (?, 0, 0)", (thread_id,)
        )
    )


async def test_checkpoints_follow_a_renamed_workflow_and_keep_a_closed_ones_key(assistant):
    await thread(assistant, "t1", B)
    await call(
        assistant,
        "POST",
        f"{BASE}/t1/checkpoints",
        {"messageId": "a1", "workflow": B, "graph": graph("KSampler")},
    )
    status, _ = await call(assistant, "POST", f"{BASE}/rebind", {"from": B, "to": A})
    assert status == 200
    _, listed = await call(assistant, "GET", f"{BASE}/t1/checkpoints")
    assert [c["workflow"] for c in listed["checkpoints"]] == [A]
    await call(assistant, "POST", f"{BASE}/rebind", {"from": A, "to": None})
    _, listed = await call(assistant, "GET", f"{BASE}/t1/checkpoints")
    assert [c["workflow"] for c in listed["checkpoints"]] == [A]


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"graph": {"nodes": []}}, 400, '"messageId"'),
        ({"messageId": "a1"}, 400, '"graph"'),
        ({"messageId": "", "graph": {"nodes": []}}, 400, "1 to 200 characters"),
        ({"messageId": "a" * 201, "graph": {"nodes": []}}, 400, "1 to 200 characters"),
        ({"messageId": 7, "graph": {"nodes": []}}, 400, "message's id"),
        ({"messageId": "a1", "graph": {"nodes": {}}}, 400, 'a "nodes" list'),
        ({"messageId": "a1", "graph": [1]}, 400, "serialize"),
        ({"messageId": "a1", "graph": {"nodes": []}, "workflow": 5}, 400, "workflow key"),
        ([], 400, '"messageId"'),
    ],
)
async def test_a_bad_save_is_refused_saying_what_to_send(assistant, body, status, says):
    await thread(assistant)
    got, answer = await call(assistant, "POST", f"{BASE}/t1/checkpoints", body)
    assert (got, says in answer["error"]) == (status, True), answer


async def test_missing_threads_and_checkpoints_are_404_and_a_form_post_is_415(assistant):
    status, answer = await save(assistant, "a1", graph("KSampler"), thread_id="nope")
    assert status == 404 and answer["error"] == "thread nope does not exist"
    await thread(assistant)
    status, answer = await call(assistant, "GET", f"{BASE}/t1/checkpoints/a1")
    assert status == 404 and "a checkpoint of message a1" in answer["error"]
    status, answer = await call(assistant, "GET", f"{BASE}/nope/checkpoints")
    assert (status, answer["checkpoints"]) == (200, [])
    async with assistant.session.post(
        f"{assistant.base}{BASE}/t1/checkpoints", data="messageId=a1"
    ) as resp:
        assert resp.status == 415, await resp.text()
