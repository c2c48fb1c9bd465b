"""A response body read up to a limit: an answer over it is refused without holding more of it."""

from __future__ import annotations

import aiohttp


async def read_capped(resp: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The body, or None as soon as it is over `limit` bytes."""
    received = bytearray()
    async for chunk in resp.content.iter_chunked(1 << 16):
        received += chunk
        if len(received) > limit:
            return None
    return bytes(received)
