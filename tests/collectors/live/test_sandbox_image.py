"""The sandbox image in a real Docker engine: what it listens on, the cursor in its
screenshots, and the containers killed runs leave behind."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import docker.errors
import pytest
from PIL import Image, ImageChops, ImageDraw

from deskscore.collectors.live.providers import (
    LABEL_RUN,
    DockerProvider,
    ProviderError,
    cleanup_leftovers,
)

from .conftest import proc_address, socket_inodes


def container_sockets(container: Any) -> dict[str, list[Any]]:
    """The sockets the container's processes hold: listening TCP (ip, port), bound UDP, and
    the paths of listening Unix sockets, read from /proc of this host."""
    top = container.top()
    pid_col = top["Titles"].index("PID")
    pids = [int(p[pid_col]) for p in top["Processes"]]
    inodes = socket_inodes(pids)
    found: dict[str, list[Any]] = {"tcp": [], "udp": [], "unix": []}
    for kind in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/{pids[0]}/net/{kind}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] not in inodes:
                continue
            if kind.startswith("tcp") and fields[3] == "0A":  # LISTEN
                found["tcp"].append(proc_address(fields[1]))
            elif kind.startswith("udp"):
                found["udp"].append(proc_address(fields[1]))
    for line in Path(f"/proc/{pids[0]}/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        listening = int(fields[3], 16) & 0x10000
        if len(fields) > 7 and fields[6] in inodes and listening:
            found["unix"].append(fields[7])
    return found


def test_sandbox_listens_on_loopback_only_and_publishes_nothing(sandbox_desktop: Any) -> None:
    container = sandbox_desktop.container
    container.reload()
    assert container.attrs["HostConfig"]["NetworkMode"] == "host"
    assert not container.attrs["HostConfig"].get("PortBindings")
    sockets = container_sockets(container)
    port = int(sandbox_desktop.base_url.rsplit(":", 1)[1])
    assert sockets["tcp"] == [("127.0.0.1", port)]  # the controller, and nothing else
    assert sockets["udp"] == []
    # X only through its socket file: no abstract socket in the (shared) network namespace.
    assert sockets["unix"] == ["/tmp/.X11-unix/X0"]


def _shot(http: Any, url: str) -> Image.Image:
    return Image.open(io.BytesIO(http.call(url, "GET", "/screenshot").body)).convert("RGB")


def test_screenshots_draw_the_cursor_where_pyautogui_put_it(
    sandbox_desktop: Any, http: Any
) -> None:
    url = sandbox_desktop.base_url
    spots = [(200, 300), (900, 500)]  # empty desktop, far from the tray
    shots = []
    for x, y in spots:
        assert http.pyautogui(url, f"pyautogui.moveTo({x}, {y})").json()["returncode"] == 0
        shots.append(_shot(http, url))
    diff = ImageChops.difference(*shots).convert("L")
    for x, y in spots:
        box = (x - 2, y - 2, x + 40, y + 40)
        assert diff.crop(box).getbbox() is not None, f"no cursor drawn near {(x, y)}"
        ImageDraw.Draw(diff).rectangle(box, fill=0)
    assert diff.getbbox() is None  # nothing else on the screen changed


def test_leftovers_of_a_killed_run_are_removed_and_live_runs_kept(
    docker_engine: Any, sandbox_image: str, sandbox_desktop: Any
) -> None:
    run_id = f"killed-{uuid.uuid4().hex[:8]}"
    script = (
        "import time\n"
        "from deskscore.collectors.live.providers import DockerProvider\n"
        f"p = DockerProvider({sandbox_image!r}, run_id={run_id!r})\n"
        "p.start()\n"
        "print(p.container.name, flush=True)\n"
        "time.sleep(600)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        name = run.stdout.readline().strip()
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert name, "the run did not start its container"
    left = docker_engine.containers.get(name)
    assert left.status == "running" and left.labels[LABEL_RUN] == run_id

    removed = cleanup_leftovers(docker_engine)

    assert name in removed
    with pytest.raises(docker.errors.NotFound):
        docker_engine.containers.get(name)
    assert sandbox_desktop.container.name not in removed  # its owner, this process, lives
    sandbox_desktop.container.reload()
    assert sandbox_desktop.container.status == "running"


def test_a_controller_that_never_answers_is_reported_and_its_container_removed(
    docker_engine: Any, sandbox_image: str
) -> None:
    # Published mode with the sandbox image: the engine publishes port 5000 on 127.0.0.1, but
    # the controller inside listens on the container's own loopback, so nothing answers.
    provider = DockerProvider(
        sandbox_image, network="publish", ready_timeout_s=3, client=docker_engine
    )
    with pytest.raises(ProviderError) as failure:
        provider.start()
    message = str(failure.value)
    assert "did not answer GET /platform within 3 s" in message
    assert "http://127.0.0.1:" in message  # published on loopback (else another error)
    assert "controller: listening on http://127.0.0.1:5000" in message  # the container's log
    left = docker_engine.containers.list(
        all=True, filters={"label": f"{LABEL_RUN}={provider.run_id}"}
    )
    assert left == []


def test_an_image_the_engine_lacks_is_named_with_the_command_that_builds_it(
    docker_engine: Any,
) -> None:
    provider = DockerProvider("deskscore-sandbox:not-built", client=docker_engine)
    with pytest.raises(ProviderError, match="deskscore sandbox build"):
        provider.start()
    assert provider.container is None


def test_the_screen_size_is_set_per_container(
    docker_engine: Any, sandbox_image: str, http: Any
) -> None:
    with DockerProvider(sandbox_image, screen="1024x768x24", client=docker_engine) as provider:
        size = http.call(provider.base_url, "POST", "/screen_size").json()
        shot = _shot(http, provider.base_url)
    assert size == {"width": 1024, "height": 768}
    assert shot.size == (1024, 768)
