"""Keeping secrets out of what a provider sends back, before it reaches the browser, a log or
the store; and keeping streamed text valid Unicode.

A provider may echo the key it was sent (an error text, a model id, a model repeating its
prompt, a hostile server). `redact` cleans a whole text; `StreamCleaner` cleans a stream of
deltas, where the key may arrive split across two of them, and where a UTF-16 surrogate pair
(an emoji sent as `"\\ud83d"` + `"\\ude00"` in two chunks) must be joined before the text can
be written as UTF-8. `SecretLogFilter` scrubs every log line of ours.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

REDACTED = "[redacted]"
MIN_SECRET = 4  # shorter "keys" (placeholders) are not worth hiding and would garble text
_KEY_LIKE = re.compile(r"\b(sk|rk|pk|gsk|xai)-[A-Za-z0-9_\-*]{6,}")
_BEARER = re.compile(r"(?i)(bearer\s+)[\w.~+/=*-]+")  # a token's characters (RFC 6750)
_HIGH_SURROGATE = re.compile("[\ud800-\udbff]\\Z")

_known: set[str] = set()  # every key a provider client was made with in this process


def remember_secret(secret: str | None) -> None:
    if secret and len(secret) >= MIN_SECRET:
        _known.add(secret)


def _secrets(extra: Iterable[str | None]) -> list[str]:
    found = _known | {s for s in extra if s and len(s) >= MIN_SECRET}
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove API keys (the given ones, every one in use here, and key-shaped tokens) from
    text that may reach a user or a log."""
    for secret in _secrets(secrets):
        text = text.replace(secret, REDACTED)
    text = _KEY_LIKE.sub(REDACTED, text)
    return _BEARER.sub(r"\1" + REDACTED, text)


def valid_text(text: str) -> str:
    """Surrogate pairs joined into their character, a lone surrogate replaced by U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class StreamCleaner:
    """One channel of streamed text (the answer, the reasoning, one tool call's arguments):
    what `feed` returns is safe to forward. It holds back only what could still become a key
    or the second half of a character: a suffix that starts one of the secrets, a trailing
    high surrogate."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets = _secrets(secrets)
        self._held = ""

    def feed(self, delta: str) -> str:
        text = self._held + delta
        self._held = ""
        if _HIGH_SURROGATE.search(text):
            text, self._held = text[:-1], text[-1]
        text = valid_text(text)
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        keep = self._partial(text)
        if keep:
            text, self._held = text[:-keep], text[-keep:] + self._held
        return text

    def _partial(self, text: str) -> int:
        """Length of the longest suffix of `text` that a secret starts with."""
        longest = 0
        for secret in self._secrets:
            for n in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:n]):
                    longest = n
                    break
        return longest

    def flush(self) -> str:
        """What was held back, at the end of the stream (no longer a key: it never finished)."""
        text, self._held = valid_text(self._held), ""
        return text


class SecretLogFilter(logging.Filter):
    """Every record of our logger, with its arguments filled in, redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install_log_filter(logger: logging.Logger) -> None:
    if not any(isinstance(f, SecretLogFilter) for f in logger.filters):
        logger.addFilter(SecretLogFilter())
