"""`python -m comfyui_assistant serve [--host 127.0.0.1] [--port 8190] [--data-dir DIR]`, and
`python -m comfyui_assistant mcp [--comfyui URL] [--token TOKEN]` (the MCP server over stdio,
relayed to a running ComfyUI with the assistant: mcp_server/stdio.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import socket
import sys
from pathlib import Path

from aiohttp import web

from .core.service import ServiceOptions
from .core.store import StoreUnavailable
from .mcp_server.unavailable import TOKEN_ENV, unavailable_message
from .routes.guard import HostPolicy
from .standalone import SERVICE, create_app, default_data_dir


def port_number(text: str) -> int:
    """A TCP port, 0 to 65535 (0: one the system picks); anything else is argparse's one-line
    error, not the OverflowError the socket raises on binding."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and int(text) <= 65535):
        raise argparse.ArgumentTypeError(
            f"must be a number from 0 to 65535 (0: any free port), not {text!r}"
        )
    return int(text)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m comfyui_assistant")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the assistant's API without ComfyUI")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port_number, default=8190)
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a further host name this server answers to (e.g. behind a reverse proxy); "
        "repeatable. By default only the address it listens on (and localhost on loopback)",
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("COMFY_ASSISTANT_DATA_DIR") or default_data_dir()),
        help="where settings and threads are stored "
        "(default: $COMFY_ASSISTANT_DATA_DIR or ~/.comfyui-assistant)",
    )
    mcp = commands.add_parser(
        "mcp", help="the MCP server over stdio, for a ComfyUI that runs the assistant"
    )
    mcp.add_argument(
        "--comfyui",
        default="http://127.0.0.1:8188",
        metavar="URL",
        help="the ComfyUI (or standalone assistant) to relay to (default: %(default)s)",
    )
    mcp.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"for a ComfyUI on another machine: a token made in the assistant's Settings "
        f"(default: ${TOKEN_ENV})",
    )
    return parser.parse_args(argv)


class StartupFailed(Exception):
    """The server cannot start; the message is the one line to print."""


async def serve(args: argparse.Namespace) -> None:
    options = ServiceOptions(data_dir=args.data_dir.expanduser().resolve())
    app = create_app(options, HostPolicy.listening_on([args.host], args.allow_host))
    service = app[SERVICE]
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await service.store()  # a data directory we cannot use fails now, not on a request
        site = web.TCPSite(runner, args.host, args.port)
        try:
            await site.start()
        except OSError as exc:
            raise StartupFailed(_listen_error(exc, args.host, args.port)) from exc
        port = runner.addresses[0][1]  # the one bound: with --port 0, the system's choice
        settings = await service.provider_settings()
        print(f"ComfyUI Assistant listening on http://{args.host}:{port}/", flush=True)
        print(f"Playground: http://{args.host}:{port}/ (status: /status)", flush=True)
        print(f"Provider: {settings.describe()}", flush=True)
        print(f"Data directory: {options.data_dir}", flush=True)
        await asyncio.Event().wait()
    except StoreUnavailable as exc:
        raise StartupFailed(str(exc)) from exc
    finally:
        await runner.cleanup()


def _listen_error(exc: OSError, host: str, port: int) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} on {host} is already in use — stop what uses it, or use --port"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"not allowed to listen on port {port} — use a port above 1023 with --port"
    if exc.errno in (errno.EADDRNOTAVAIL, socket.EAI_NONAME) or isinstance(exc, socket.gaierror):
        return f"cannot listen on {host!r}: no such address here — check --host"
    return f"cannot listen on {host}:{port} ({exc.strerror or exc})"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "mcp":  # (stdout is the protocol's: logs go to stderr)
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
        try:
            from .mcp_server.stdio import serve_stdio
        except ImportError as missing:
            print(unavailable_message(missing), file=sys.stderr)
            return 1
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_stdio(args.comfyui, args.token))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(args))
    except StartupFailed as exc:
        print(f"ComfyUI Assistant cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
