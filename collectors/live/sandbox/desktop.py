"""Start a desktop session: Xvfb, a window manager, then the controller; reap every process.

The sandbox image's entrypoint (process 1 in the container, so it also reaps the orphans the
agent's programs leave behind and turns `docker stop` into a clean shutdown), and the way to
run the same desktop on a development machine under a private display:

    python3 desktop.py --display :57 --port 5057

Settings come from options or the environment (the image is configured with `docker run -e`):
DESKSCORE_DISPLAY (:0), DESKSCORE_SCREEN (1280x720x24), DESKSCORE_CONTROLLER_PORT (5000),
DESKSCORE_WM (jwm; "none" for no window manager), DESKSCORE_ACCESSIBILITY (1: a session bus
and the applications' accessibility bridges, for the AT-SPI tree). The session ends when the controller or the X
server ends; the exit status is the controller's.

Standard library only, and no deskscore import: the image copies this file next to
controller.py and runs it with the system python3.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
X_START_TIMEOUT_S = 15.0


def _socket_path(display: str) -> str:
    number = display.lstrip(":").split(".")[0]
    return f"/tmp/.X11-unix/X{number}"


def xauthority_path(display: str) -> str:
    number = display.lstrip(":").split(".")[0]
    return os.path.join(tempfile.gettempdir(), f".deskscore-Xauthority-{number}")


def write_xauthority(display: str) -> str:
    """A fresh MIT-MAGIC-COOKIE-1 for `display` in an authority file only this user reads:
    the X server admits the session's programs and no one else on the machine."""
    number = display.lstrip(":").split(".")[0].encode()
    cookie = os.urandom(16)

    def field(data: bytes) -> bytes:
        return struct.pack(">H", len(data)) + data

    entries = b""
    # FamilyLocal (256) with this host's name, as python-xlib looks it up; FamilyWild
    # (65535) for Xlib/xcb clients that see another host name.
    for family, address in ((256, socket.gethostname().encode()), (65535, b"")):
        entries += struct.pack(">H", family) + field(address) + field(number)
        entries += field(b"MIT-MAGIC-COOKIE-1") + field(cookie)
    path = xauthority_path(display)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(entries)
    return path


def start_x(display: str, screen: str) -> subprocess.Popen:
    """Xvfb on `display`, reachable only through its socket file: no TCP, and no abstract
    socket (that namespace belongs to the network namespace, which a container on the host's
    network shares with the host and with other sandboxes)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise SystemExit("desktop: Xvfb is not installed (Debian: apt-get install xvfb)")
    options = ["-nolisten", "tcp", "-nolisten", "local", "-noreset", "-dpi", "96"]
    proc = subprocess.Popen(
        [xvfb, display, "-screen", "0", screen, *options, "-auth", write_xauthority(display)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    sock = _socket_path(display)
    deadline = time.monotonic() + X_START_TIMEOUT_S
    while not os.path.exists(sock):
        if proc.poll() is not None:
            err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            raise SystemExit(f"desktop: Xvfb {display} exited at start:\n{err.strip()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"desktop: Xvfb {display} did not create {sock} in time")
        time.sleep(0.05)
    if proc.stderr is not None:
        proc.stderr.close()
    return proc


def start_wm(wm: str, env: dict[str, str]) -> subprocess.Popen | None:
    """The window manager, with the bundled JWM configuration when it is JWM; None when
    `wm` is "none" or not installed (windows then get no frames and focus follows the
    pointer)."""
    if wm == "none" or shutil.which(wm) is None:
        return None
    command = [wm]
    config = os.path.join(HERE, "jwmrc")
    if os.path.basename(wm) == "jwm" and os.path.exists(config):
        command += ["-f", config]
    return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)


def session_env(display: str) -> dict[str, str]:
    """The environment of every program on the desktop."""
    env = dict(os.environ)
    env["DISPLAY"] = display
    env["XAUTHORITY"] = xauthority_path(display)
    resources = os.path.join(HERE, "Xresources")
    if os.path.exists(resources):
        env.setdefault("XENVIRONMENT", resources)  # xterm's font and colours, without xrdb
    env.setdefault("NO_AT_BRIDGE", "1")  # GTK: no accessibility bus to look for
    env.setdefault("LANG", "C.UTF-8")
    return env


ACCESSIBILITY_ENV = {
    "GTK_MODULES": "gail:atk-bridge",  # GTK 2 (GIMP, pcmanfm) loads its bridge as a module
    "ACCESSIBILITY_ENABLED": "1",  # Chromium exposes its widgets
    "QT_ACCESSIBILITY": "1",  # VLC's Qt interface
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
    "SAL_USE_VCLPLUGIN": "gtk3",  # LibreOffice through GTK, whose widgets reach AT-SPI
}


def start_session_bus(env: dict[str, str]) -> subprocess.Popen | None:
    """A D-Bus session bus for the desktop's programs (the accessibility bus is started on
    demand through it); sets DBUS_SESSION_BUS_ADDRESS and the bridges' switches in `env`.
    None, and no change, when dbus-daemon is not installed."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        return None
    # Socket files in a folder of the session's own, never abstract sockets: those belong to
    # the network namespace, which a container on the host's network shares with the host.
    runtime = tempfile.mkdtemp(prefix="deskscore-runtime-")
    env["XDG_RUNTIME_DIR"] = runtime  # the accessibility bus puts its socket there too
    proc = subprocess.Popen(
        [daemon, "--session", "--nofork", "--print-address=1", f"--address=unix:dir={runtime}"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    address = proc.stdout.readline().decode().strip()
    proc.stdout.close()
    if not address:
        proc.kill()
        return None
    env["DBUS_SESSION_BUS_ADDRESS"] = address
    env.update(ACCESSIBILITY_ENV)
    env.pop("NO_AT_BRIDGE", None)
    return proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--display", default=os.environ.get("DESKSCORE_DISPLAY", ":0"))
    parser.add_argument("--screen", default=os.environ.get("DESKSCORE_SCREEN", "1280x720x24"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("DESKSCORE_CONTROLLER_PORT", "5000"))
    )
    parser.add_argument("--wm", default=os.environ.get("DESKSCORE_WM", "jwm"))
    parser.add_argument("--quiet", action="store_true", help="the controller logs no requests")
    parser.add_argument(
        "--accessibility",
        action="store_true",
        default=os.environ.get("DESKSCORE_ACCESSIBILITY") == "1",
        help="start a session bus and the applications' accessibility bridges (AT-SPI)",
    )
    args = parser.parse_args(argv)

    children: list[subprocess.Popen] = []
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in reversed(children):
            if child.poll() is None:
                child.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    xvfb = start_x(args.display, args.screen)
    children.append(xvfb)
    env = session_env(args.display)
    bus = start_session_bus(env) if args.accessibility else None
    if bus is not None:
        children.append(bus)
    wm = start_wm(args.wm, env)
    if wm is not None:
        children.append(wm)
    controller_cmd = [
        sys.executable,
        os.path.join(HERE, "controller.py"),
        "--host",
        args.host,
        "--port",
        str(args.port),
    ]
    if args.quiet:
        controller_cmd.append("--quiet")
    controller = subprocess.Popen(controller_cmd, env=env, stdin=subprocess.DEVNULL)
    children.append(controller)
    status = 0
    # Reap everything: our children and, as process 1, any orphan re-parented to us.
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        code = os.waitstatus_to_exitcode(wait_status)
        if pid == controller.pid:
            controller.returncode = code
            status = code if not stopping else 0
            stop(signal.SIGTERM, None)
        elif pid == xvfb.pid:
            xvfb.returncode = code
            if not stopping:
                print(f"desktop: Xvfb exited ({code}); stopping", file=sys.stderr)
                status = status or 1
            stop(signal.SIGTERM, None)
        elif wm is not None and pid == wm.pid:
            wm.returncode = code
        elif bus is not None and pid == bus.pid:
            bus.returncode = code
        if all(c.returncode is not None for c in children) and (os.getpid() != 1 or stopping):
            break
    with contextlib.suppress(OSError):
        os.unlink(xauthority_path(args.display))
    return status


if __name__ == "__main__":
    sys.exit(main())
