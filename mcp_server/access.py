"""Who may use the MCP endpoint, and as whom.

- A request from this machine (the peer address is loopback) is the local user's.
- A request from any other address needs a token the user created in Settings, sent as
  `Authorization: Bearer <token>`. A token is shown once when it is made; only its SHA-256 is
  kept (a token is 32 random bytes, so a fast hash is enough), with its name, when it was
  made and when it was last used (to the minute, apart: `USED_NAMESPACE`, so that a use
  recorded while the token is revoked cannot bring it back); revoking it deletes it, and the
  next request with it is refused.
- Behind a reverse proxy on this machine every request looks local: such a setup must ask the
  proxy for its own authentication (the README says so).

The caller a request resolves to (`Caller`: the user it acts for and how it got in) is resolved
on every request; the SDK binds a session to the caller that opened it (a request of a session
from another caller is answered as if the session did not exist), so a connection acts for the
one user it connected as.

Per user (`--multi-user`): a caller is the user ComfyUI resolves for the request (its
`comfy-user` header, as the panel sends it: an MCP client sends it too, or the request guard
refuses it); a user's tokens are kept in that user's store, so a token works only for the
user who made it, and a user lists and revokes only their own. The tools and resources read
that user's assistant (`service.of_user`).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..core.store import Store

TOKEN_NAMESPACE = "mcp_tokens"
USED_NAMESPACE = "mcp_tokens_used"  # token id: when it was last used (ISO, UTC, to the minute)
TOKEN_PREFIX = "cuamcp_"
NAME_LIMIT = 80


@dataclass(frozen=True)
class Caller:
    user: str  # the ComfyUI user the connection acts for
    via: str  # "loopback", or "token <id>"


def is_loopback(address: str | None) -> bool:
    if not address:
        return False
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class TokenError(ValueError):
    """A token request that cannot be done; the message says what to fix."""


class McpTokens:
    """The tokens for MCP connections from other machines, in the store (hashed)."""

    def __init__(self, store_of: Callable[[str], Awaitable[Store]]) -> None:
        self._store_of = store_of  # a user's store

    async def create(self, name: str, user: str) -> tuple[dict[str, Any], str]:
        """A new token of `user`: its listing, and the token itself (never stored, never
        shown again)."""
        name = name.strip()
        if not name or len(name) > NAME_LIMIT:
            raise TokenError(f"give the token a name of 1 to {NAME_LIMIT} characters")
        token_id = secrets.token_hex(6)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        entry = {"name": name, "sha256": _digest(secret), "created": _now()}
        await (await self._store_of(user)).update_settings(TOKEN_NAMESPACE, {token_id: entry})
        return _listing(token_id, entry), secret

    async def listed(self, user: str) -> list[dict[str, Any]]:
        store = await self._store_of(user)
        stored = await store.get_settings(TOKEN_NAMESPACE)
        used = await store.get_settings(USED_NAMESPACE)
        listing = (_listing(k, v, used.get(k)) for k, v in stored.items())
        return sorted(listing, key=lambda t: t["created"])

    async def revoke(self, token_id: str, user: str) -> bool:
        store = await self._store_of(user)
        if token_id not in await store.get_settings(TOKEN_NAMESPACE):
            return False
        await store.update_settings(TOKEN_NAMESPACE, {token_id: None})
        await store.update_settings(USED_NAMESPACE, {token_id: None})
        return True

    async def holder(self, secret: str, user: str) -> Caller | None:
        """The caller the token `secret` of `user` makes, or None."""
        digest = _digest(secret)
        store = await self._store_of(user)
        found = None
        for token_id, entry in (await store.get_settings(TOKEN_NAMESPACE)).items():
            if hmac.compare_digest(str(entry.get("sha256", "")), digest):  # (no early exit)
                found = token_id
        if found is None:
            return None
        await self._record_use(store, found)
        return Caller(user, f"token {found}")

    async def _record_use(self, store: Store, token_id: str) -> None:
        """Note when the token was used, at most once a minute (a write per request would be
        one per MCP message)."""
        minute = _now()[:16] + ":00+00:00"
        if (await store.get_settings(USED_NAMESPACE)).get(token_id) != minute:
            await store.update_settings(USED_NAMESPACE, {token_id: minute})


def _listing(token_id: str, entry: dict[str, Any], used: str | None = None) -> dict[str, Any]:
    return {"id": token_id, "name": entry["name"], "created": entry["created"], "lastUsed": used}


NEEDS_TOKEN = (
    "MCP connections from another machine need a token: create one in the assistant's "
    "Settings (MCP clients) and send it as 'Authorization: Bearer <token>'"
)
BAD_TOKEN = (
    "this MCP token is not valid (revoked, or mistyped): create a new one in the assistant's "
    "Settings (MCP clients)"
)


async def caller_of(
    remote: str | None, authorization: str, tokens: McpTokens, user: str
) -> Caller | str:
    """The caller of a request from `remote` with this Authorization header (`user`: the user
    ComfyUI resolved for the request), or why it is refused."""
    if is_loopback(remote):
        return Caller(user, "loopback")
    scheme, _, secret = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return NEEDS_TOKEN
    caller = await tokens.holder(secret.strip(), user)
    return BAD_TOKEN if caller is None else caller
