"""Who may call our routes: the checks that keep a web page elsewhere (or a DNS-rebound name)
from driving the assistant or reaching the user's key, threads and credits.

- **Host**: the name the browser used must be one this server answers to. A DNS-rebinding
  page reaches a loopback server under its own domain name, so a name we do not know is
  refused. IP literals cannot be rebound; `localhost` and the loopback addresses are always
  allowed when listening on loopback; more names with `--allow-host` (standalone) or
  `COMFY_ASSISTANT_ALLOWED_HOSTS` (inside ComfyUI, e.g. behind a reverse proxy).
- **Origin**: a request a browser marks with an `Origin` must come from the page's own origin
  (the same host and port as `Host`).
- **JSON only**: every POST, PUT and PATCH must say `Content-Type: application/json`. A
  cross-site form or a `no-cors` fetch cannot send that header without a CORS preflight, which
  we never grant, so no other site can make the browser post to us.

Inside ComfyUI, ComfyUI's own middleware still runs first; these checks are added to our
routes only.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
ALLOWED_HOSTS_ENV = "COMFY_ASSISTANT_ALLOWED_HOSTS"


def _bare(host: str) -> str:
    """A host name without brackets or trailing dot, lowercased."""
    return host.strip().strip("[]").rstrip(".").lower()


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    return host == "localhost" or (_is_ip(host) and ipaddress.ip_address(host).is_loopback)


@dataclass(frozen=True)
class HostPolicy:
    """The host names a request may address, from the addresses the server listens on."""

    names: frozenset[str]
    any_ip: bool  # listening on every interface: any IP literal is ours

    @classmethod
    def listening_on(cls, hosts: Iterable[str], extra: Iterable[str] = ()) -> HostPolicy:
        listen = {_bare(h) for h in hosts} or {"127.0.0.1"}
        names = set(listen) | {_bare(h) for h in extra if h.strip()}
        any_ip = bool(listen & WILDCARDS)
        if any_ip or any(_is_loopback(h) for h in listen):
            names |= LOOPBACK_NAMES
        if any_ip:  # the names this machine goes by on the network
            names |= {_bare(socket.gethostname()), _bare(socket.getfqdn())}
        return cls(frozenset(names - WILDCARDS), any_ip)

    @classmethod
    def from_environment(cls, hosts: Iterable[str], environ: Mapping[str, str]) -> HostPolicy:
        extra = environ.get(ALLOWED_HOSTS_ENV, "").replace(",", " ").split()
        return cls.listening_on(hosts, extra)

    def allows(self, host: str) -> bool:
        host = _bare(host)
        return host in self.names or (self.any_ip and _is_ip(host))


LOOPBACK = HostPolicy.listening_on(["127.0.0.1"])


def _split_host(value: str, scheme: str) -> tuple[str, int] | None:
    """(name, port) of a Host header or an origin's netloc, the scheme's port by default."""
    try:
        parts = urlsplit("//" + value)
        port = parts.port
    except ValueError:
        return None
    default = 443 if scheme == "https" else 80
    return (_bare(parts.hostname), port or default) if parts.hostname else None


def _origin_matches(origin: str, host_header: str, scheme: str) -> bool:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https"):
        return False  # "null" (a sandboxed frame, a file) or something stranger
    ours = _split_host(host_header, scheme)
    return ours is not None and _split_host(parts.netloc, parts.scheme) == ours


def refusal(request: web.Request, policy: HostPolicy) -> str | None:
    """Why this request may not reach our routes, or None."""
    host = request.headers.get("Host", "")
    name = (_split_host(host, request.scheme) or ("", 0))[0]
    if not policy.allows(name):
        return (
            f"this server does not answer to the host name {name[:100]!r}; if you "
            f"reach it under that name on purpose, start it with --allow-host NAME (or set "
            f"{ALLOWED_HOSTS_ENV} inside ComfyUI)"
        )
    origin = request.headers.get("Origin")
    if origin is not None and not _origin_matches(origin, host, request.scheme):
        return f"requests from another site ({origin[:100]}) are not accepted"
    if request.method in BODY_METHODS and request.content_type != "application/json":
        return "send the body as JSON with 'Content-Type: application/json'"
    return None


def check(request: web.Request, policy: HostPolicy) -> web.Response | None:
    """The refusal as a response (403, or 415 for a body that is not JSON), or None."""
    reason = refusal(request, policy)
    if reason is None:
        return None
    status = 415 if reason.startswith("send the body") else 403
    return web.json_response({"error": reason}, status=status)


def policy_for_comfyui(environ: Mapping[str, str] = os.environ) -> HostPolicy:
    """The addresses ComfyUI listens on (`--listen`, comma-separated; loopback by default)."""
    try:
        from comfy.cli_args import args  # type: ignore[import-not-found]  # ComfyUI's module

        listen = str(getattr(args, "listen", "") or "127.0.0.1").split(",")
    except Exception:
        listen = ["127.0.0.1"]
    return HostPolicy.from_environment(listen, environ)
