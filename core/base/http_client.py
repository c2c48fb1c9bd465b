"""The openai SDK's HTTP library, whose URL parser decides where a request goes: `httpx2` in
its newer releases, `httpx` before. Base URLs are checked and keys bound with this parser, so
what is saved is read the same way when it is used."""

from __future__ import annotations

try:
    from httpx2 import URL, InvalidURL, Request
except ImportError:  # pragma: no cover (openai releases before httpx2)
    from httpx import URL, InvalidURL, Request  # type: ignore[no-redef,import-not-found]

__all__ = ["URL", "InvalidURL", "Request"]
