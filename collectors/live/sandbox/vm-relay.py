"""Relay the VM's controller port from the guest's network address to its loopback.

The controller listens on loopback only (it runs any command it is sent); QEMU's user-mode
network forwards the host's 127.0.0.1:PORT to the guest's address (10.0.2.15), which nothing
else can reach (the network is restricted). This relays each connection from there to the
controller on 127.0.0.1 in the guest:

    python3 vm-relay.py 10.0.2.15 5000 127.0.0.1 5000

Standard library only: the VM runs it with the system python3.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy bytes one way until either side closes, then close both ways."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def relay(client: socket.socket, target: tuple[str, int]) -> None:
    try:
        upstream = socket.create_connection(target, timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main(argv: list[str]) -> int:
    listen_host, listen_port, target_host, target_port = argv
    server = socket.create_server((listen_host, int(listen_port)), backlog=64)
    while True:
        client, _ = server.accept()
        threading.Thread(
            target=relay, args=(client, (target_host, int(target_port))), daemon=True
        ).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
