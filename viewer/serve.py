"""Serving the viewer: uvicorn on the loopback interface, on a port the system picks when 0.

The socket is bound here, before uvicorn starts, so the URL printed is the one that is
listening (no race for a "free" port between finding and binding it).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

HOST = "127.0.0.1"
"""The only interface the viewer listens on: it is for the user of this machine."""


def bind(port: int = 0) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:`port` (0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}/"


def serve(
    warehouse: str | Path,
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the viewer over `warehouse` until interrupted; `on_ready(url)` once listening."""
    import uvicorn

    from deskscore.viewer.app import create_app

    app = create_app(warehouse)
    sock = bind(port)
    url = url_of(sock)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(url)
    server.run(sockets=[sock])
