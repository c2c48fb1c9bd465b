"""What the process keeps between requests is bounded: no cache keeps a thread's images or long
texts alive by keying on them, and each cache has a limit (bench/memory_load.py measures the
process as a whole)."""

from __future__ import annotations

from comfyui_assistant.core import threads as threads_module
from comfyui_assistant.core.context_cache import LARGE, BlockCache, signature
from comfyui_assistant.core.fingerprint import LONG
from comfyui_assistant.core.threads import Threads, stored_key
from comfyui_assistant.core.tokens import TokenCounter
from comfyui_assistant.standalone import SERVICE

from .helpers import user

BIG = "x" * (3 * LARGE)


def image(url_chars: int, id: str = "u1") -> dict:
    url = "data:image/png;base64," + "A" * url_chars
    return {
        "id": id,
        "role": "user",
        "parts": [{"type": "file", "mediaType": "image/png", "url": url}],
    }


def test_keys_of_long_texts_and_urls_are_short_and_still_tell_changes_apart():
    for message, changed in [
        (user(BIG), user(BIG[:-1] + "y")),
        (image(len(BIG)), image(len(BIG) + 1)),
    ]:
        assert len(signature(message)) < 200 and len(stored_key(message)) < 200
        assert signature(message) == signature(dict(message))
        assert signature(message) != signature(changed)
        assert stored_key(message) != stored_key(changed)
    short = user("a short text")
    assert "a short text" in signature(short)  # short strings are keyed by themselves


def test_the_block_cache_keeps_no_huge_message_and_stays_within_its_characters():
    cache = BlockCache(max_chars=10 * LONG)
    cache.thread([user(BIG)])
    assert cache._chars == 0 and not cache._blocks  # converted afresh each time instead
    for i in range(100):
        cache.thread([user("y" * LONG, f"m{i}")])
        assert cache._chars <= cache.max_chars
    assert 0 < len(cache._blocks) <= 10


def test_the_token_counter_remembers_a_long_text_by_its_fingerprint():
    counter = TokenCounter("cl100k_base")
    text = "word " * 10_000
    tokens = counter.text(text)
    assert counter.text(text) == tokens == counter.total([text])
    assert all(len(key) < 100 for key in counter._texts)


async def test_threads_remember_fingerprints_for_the_most_recent_threads_only(assistant):
    threads: Threads = await assistant.app[SERVICE].threads()
    limit = threads_module.KNOWN_THREADS
    for i in range(limit + 5):
        await threads.sync(f"t{i}", [image(2 * LONG, f"u{i}")])
    known = threads._known
    assert len(known) == limit and "t0" not in known and f"t{limit + 4}" in known
    assert all(len(key) < 100 for entry in known.values() for _, key in entry.values())
    # a thread forgotten by the process is compared with the database: nothing is lost
    await threads.sync("t0", [image(2 * LONG, "u0"), user("next", "u-next")])
    assert [m.id for m in await threads.messages("t0")] == ["u0", "u-next"]
