"""A thread's messages a page at a time (GET /api/assistant/threads/{id}?last=N[&before=id]):
the panel opens a long thread with its last page and reads earlier ones on demand; without
`last`, the whole thread as before."""

from __future__ import annotations

import json

from .test_thread_delta import seed
from .test_threads_api import BASE, call


async def test_a_long_thread_opens_with_its_last_page_and_reads_back_page_by_page(assistant):
    messages = await seed(assistant, "t-pages", 3000)
    status, page = await call(assistant, "GET", f"{BASE}/t-pages?last=40")
    assert status == 200
    assert (page["messageCount"], page["firstIndex"]) == (6000, 5960)
    assert page["messages"] == messages[-40:]

    status, earlier = await call(assistant, "GET", f"{BASE}/t-pages?last=40&before=u02980")
    assert (status, earlier["firstIndex"]) == (200, 5920)
    assert earlier["messages"] == messages[5920:5960]
    status, start = await call(assistant, "GET", f"{BASE}/t-pages?last=40&before=a00001")
    assert (status, start["firstIndex"], start["messages"]) == (200, 0, messages[:3])
    status, none = await call(assistant, "GET", f"{BASE}/t-pages?last=40&before=u00000")
    assert (status, none["firstIndex"], none["messages"]) == (200, 0, [])

    status, whole = await call(assistant, "GET", f"{BASE}/t-pages")
    assert status == 200 and "firstIndex" not in whole and whole["messages"] == messages
    # a page costs the same whatever the thread's length: the same 40 messages, the same bytes
    await seed(assistant, "t-short", 20)
    status, short = await call(assistant, "GET", f"{BASE}/t-short?last=40")
    assert (short["firstIndex"], len(json.dumps(short["messages"]))) == (
        0,
        len(json.dumps(messages[:40])),
    )


async def test_bad_pages_say_what_to_fix(assistant):
    await seed(assistant, "t-pages", 3)
    for query, status, says in [
        ("last=0", 400, "'last' must be a number of messages from 1 to 1000"),
        ("last=1001", 400, "'last' must be a number of messages from 1 to 1000"),
        ("last=ten", 400, "'last' must be a number of messages from 1 to 1000"),
        ("last=5&before=nope", 404, "message nope in thread t-pages does not exist"),
    ]:
        got, answer = await call(assistant, "GET", f"{BASE}/t-pages?{query}")
        assert (got, answer["error"]) == (status, says)
    got, answer = await call(assistant, "GET", f"{BASE}/t-none?last=5")
    assert (got, answer["error"]) == (404, "thread t-none does not exist")
