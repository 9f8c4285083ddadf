"""Desktops for the live collector's tests: a sandbox container, or the same session on this
machine under a private Xvfb display.

- `docker_engine` (session): a Docker SDK client of a running engine.
- `sandbox_image` (session): the sandbox image of this source tree, built if missing.
- `desktop_image` (session): its desktop variant (LibreOffice, Chromium, GIMP, ...), likewise.
- `sandbox_desktop`: a started DockerProvider (a fresh container); `.base_url` is its controller.
- `host_desktop`: a started HostProvider (Xvfb, JWM, controller on a free 127.0.0.1 port,
  HOME in the test's tmp_path); `.base_url`, `.home`.
- `desktop`: each test that takes it runs once on the host and once in a container.
- `chat`: starts chat-completions servers on 127.0.0.1 (`ChatStub`) playing scripted replies.

Without an engine (or without Xvfb for the host) the tests that need one are skipped with the
reason; with DESKSCORE_REQUIRE_SANDBOX=1 (CI sets it) they fail instead, so CI cannot pass by
skipping them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live.providers import (
    DockerProvider,
    HostProvider,
    Provider,
    ProviderError,
    docker_client,
)
from deskscore.collectors.live.sandbox.build import (
    DESKTOP,
    SANDBOX,
    BuildError,
    Variant,
    ensure_image,
    image_exists,
    image_name,
)

REQUIRE = "DESKSCORE_REQUIRE_SANDBOX"


def socket_inodes(pids: Iterable[int]) -> set[str]:
    """The inodes of the sockets processes `pids` hold (their /proc/<pid>/fd links)."""
    inodes = set()
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    return inodes


def proc_address(hex_address: str) -> tuple[str, int]:
    """An address of /proc/net/tcp{,6} ("0100007F:1388") as (ip, port)."""
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    # The kernel prints each 32-bit word of the address in host (little-endian) order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(words) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, words), int(port, 16)


def unavailable(reason: str) -> None:
    """Skip for want of an engine or an X server; fail when CI requires the sandbox."""
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} ({REQUIRE}=1: these tests must run here)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_engine() -> Any:
    try:
        return docker_client()
    except ProviderError as e:
        unavailable(str(e))


def _built(engine: Any, variant: Variant) -> str:
    """The image of `variant` of this source tree; built here when missing and this machine
    can build it (root, debootstrap)."""
    name = image_name(variant=variant)
    if image_exists(engine, name):
        return name
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        unavailable(f"{name} is not built and this machine cannot build it (root, debootstrap)")
    try:
        return ensure_image(engine, variant=variant).image
    except BuildError as e:
        pytest.fail(f"building {name} failed: {e}")


@pytest.fixture(scope="session")
def sandbox_image(docker_engine: Any) -> str:
    """The image of this source tree (a minute or two to build, once)."""
    return _built(docker_engine, SANDBOX)


@pytest.fixture(scope="session")
def desktop_image(docker_engine: Any) -> str:
    """The desktop variant of this source tree (about ten minutes and 2 GB of packages to
    build, once)."""
    return _built(docker_engine, DESKTOP)


@pytest.fixture
def sandbox_desktop(docker_engine: Any, sandbox_image: str) -> Iterator[DockerProvider]:
    provider = DockerProvider(sandbox_image, client=docker_engine)
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture
def host_desktop(tmp_path: Path) -> Iterator[HostProvider]:
    if shutil.which("Xvfb") is None:
        unavailable("Xvfb is not installed (apt-get install xvfb); the host desktop needs it")
    if importlib.util.find_spec("pyautogui") is None:
        unavailable("pyautogui is not installed in this Python (pip install -e '.[dev]')")
    home = tmp_path / "home"
    home.mkdir()
    provider = HostProvider(home=home)
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture(params=["host", "sandbox"])
def desktop(request: pytest.FixtureRequest) -> Provider:
    return request.getfixturevalue(f"{request.param}_desktop")


# ---------------------------------------------------------------------------- HTTP helpers

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Reply:
    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def call(
    base_url: str,
    method: str,
    path: str,
    *,
    json_body: Any = None,
    form: dict[str, str] | None = None,
    files: dict[str, tuple[str, bytes]] | None = None,
    timeout: float = 60.0,
) -> Reply:
    """One raw request to a controller, as OSWorld's client sends it (JSON, a urlencoded
    form, or multipart with files); HTTP errors are replies, not exceptions."""
    headers: dict[str, str] = {}
    data: bytes | None = None
    if json_body is not None:
        data = json.dumps(json_body).encode()
        headers["Content-Type"] = "application/json"
    elif files is not None:
        boundary = uuid.uuid4().hex
        parts = []
        for name, value in (form or {}).items():
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            )
        for name, (filename, content) in files.items():
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n".encode()
                + content
                + b"\r\n"
            )
        parts.append(f"--{boundary}--\r\n".encode())
        data = b"".join(parts)
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(base_url + path, data=data, headers=headers, method=method)
    try:
        with _OPENER.open(request, timeout=timeout) as r:
            return Reply(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers, e.read())


def pyautogui(base_url: str, code: str) -> Reply:
    """Run pyautogui code the way OSWorld's client does: `python -c` with its prefix."""
    prefix = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
    return call(
        base_url,
        "POST",
        "/execute",
        json_body={"command": ["python", "-c", prefix + code], "shell": False},
    )


def wait_for(predicate: Callable[[], Any], what: str, timeout_s: float = 30.0) -> Any:
    """Poll until `predicate()` returns something other than None or False and return it;
    fail naming `what` after timeout_s. (Not truthiness: an XML element without children
    is falsy.)"""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout_s:g} s")
        time.sleep(0.2)


@pytest.fixture(scope="session")
def http() -> Any:
    """The helpers above, for test modules (pytest's importlib mode does not let them import
    conftest): http.call, http.pyautogui, http.wait_for."""
    import types

    return types.SimpleNamespace(call=call, pyautogui=pyautogui, wait_for=wait_for, Reply=Reply)


# --------------------------------------------------------------------------- models on 127.0.0.1


class ChatStub:
    """A chat-completions server on 127.0.0.1: replies with the scripted contents in order (the
    last one repeating), or scripted (status, body) pairs; records every request's path,
    headers, bearer header and body. Usage grows by one prompt token per request, so tests can
    tell calls apart."""

    def __init__(
        self,
        replies: list[Any],
        *,
        model: str = "stub-model-2026",
        prompt_tokens: int = 1000,
        completion_tokens: int = 40,
    ) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "auth": self.headers.get("Authorization"),
                        "body": body,
                    }
                )
                reply = stub.replies[min(len(stub.requests), len(stub.replies)) - 1]
                if isinstance(reply, tuple):
                    status, data = reply
                else:
                    n = len(stub.requests)
                    usage = {
                        "prompt_tokens": prompt_tokens + n,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + n + completion_tokens,
                        "prompt_tokens_details": {"cached_tokens": 256},
                    }
                    message = {"role": "assistant", "content": reply}
                    data = json.dumps(
                        {"model": model, "choices": [{"message": message}], "usage": usage}
                    ).encode()
                    status = 200
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat() -> Iterator[Callable[..., ChatStub]]:
    """`chat(*replies, **options)` starts a ChatStub; all are stopped after the test."""
    stubs: list[ChatStub] = []

    def start(*replies: Any, **options: Any) -> ChatStub:
        stubs.append(ChatStub(list(replies), **options))
        return stubs[-1]

    yield start
    for stub in stubs:
        stub.close()
