"""Long strings stand in caches and change checks by a fingerprint, not by themselves: a cache
that keys a 30 MB image by the image keeps the image alive for as long as the process runs."""

from __future__ import annotations

import hashlib

LONG = 4096  # strings from this many characters on are keyed by their fingerprint


def fingerprint(text: str) -> str:
    """A 128-bit BLAKE2b digest of the text, as 32 hex characters (any str, surrogates too)."""
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def key_of(text: str) -> str:
    """The text itself when short; its fingerprint (marked, so no short text equals it) when
    long."""
    return text if len(text) < LONG else "\x00#" + fingerprint(text)
