"""Records every network destination of the Python process it is loaded into (tests/test_egress.py
puts this folder on the server process's PYTHONPATH): an audit hook on the socket events writes
one line per event to the file named by EGRESS_LOG. Tab-separated: the event, then its host and
port, or the path of a Unix socket.

Every way Python itself reaches the network passes through these events (connect, connect_ex,
sendto, sendmsg, the resolver's getaddrinfo, gethostbyname, gethostbyaddr, getnameinfo):
asyncio, aiohttp and httpx all connect through `socket.connect` and resolve through
`socket.getaddrinfo`. (A C library with sockets of its own, such as c-ares behind aiodns, would
bypass them; none is installed.)
"""

from __future__ import annotations

import os
import sys
from typing import Any

_EVENTS = {
    "socket.connect": lambda args: args[1],
    "socket.sendto": lambda args: args[1],
    "socket.sendmsg": lambda args: args[1],
    "socket.getaddrinfo": lambda args: (args[0], args[1]),
    "socket.gethostbyname": lambda args: (args[0], ""),
    "socket.gethostbyaddr": lambda args: (args[0], ""),
    "socket.getnameinfo": lambda args: args[0],
}


def _line(event: str, address: Any) -> bytes:
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = address[0], address[1]
        host = host.decode(errors="replace") if isinstance(host, bytes) else str(host)
        port = port.decode(errors="replace") if isinstance(port, bytes) else str(port)
        return f"{event}\t{host}\t{port}\n".encode()
    return f"{event}\tunix\t{address!r}\n".encode()


def _install(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        read = _EVENTS.get(event)
        address = read(args) if read is not None else None
        if address is not None:  # (sendmsg on a connected socket names none: its connect did)
            os.write(fd, _line(event, address))  # (one write a line: O_APPEND keeps it whole)

    sys.addaudithook(hook)


if os.environ.get("EGRESS_LOG"):
    _install(os.environ["EGRESS_LOG"])
