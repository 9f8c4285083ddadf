"""Where a desktop comes from: a container per episode, or a controller that already runs.

A provider starts a desktop whose controller speaks OSWorld's protocol and gives its base URL;
`stop()` tears it down. Used as a context manager it is stopped whatever happens in between.

- `docker`: a container of an image with a controller, started with the Docker SDK. The
  project's sandbox image (`deskscore sandbox build`) runs on the host's network and its
  controller listens on 127.0.0.1 at a free port given to it; any other image (the OSWorld
  image, `happysixd/osworld-docker`, for those who have it and a VM disk) gets its controller
  port (5000) published on 127.0.0.1 only. Containers carry labels naming the run and the
  process that owns them, so `cleanup_leftovers()` can remove what killed runs left behind
  without touching the containers of runs still going.
- `local`: a controller already running at a URL (an OSWorld VM, a desktop started by hand).
- `qemu`: the sandbox's file system in a VM on KVM, one per episode on a throwaway overlay
  (qemu.py).
- `host`: the sandbox's desktop session (Xvfb, window manager, controller) started on this
  machine under a private display, for development without an engine; needs Xvfb, and
  pyautogui in this Python.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

LABEL = "deskscore.sandbox"
"""Every container a DockerProvider starts carries LABEL=1."""
LABEL_RUN = "deskscore.run_id"
LABEL_OWNER = "deskscore.owner"
"""host:pid:start-time of the process that started the container."""
OSWORLD_IMAGE = "happysixd/osworld-docker"
"""OSWorld's image (a QEMU VM; needs the VM disk mounted at /System.qcow2, NET_ADMIN, /dev/kvm
for speed); its controller listens on port 5000 inside."""
CONTROLLER_PORT = 5000
READY_TIMEOUT_S = 120.0
SESSION_SCRIPT = Path(__file__).resolve().parent / "sandbox" / "desktop.py"


class ProviderError(RuntimeError):
    """A desktop could not be started or reached; the message says what to do."""


class Provider(ABC):
    """A desktop with a controller: `start()` -> base URL, `stop()`; a context manager."""

    name = "provider"

    def __init__(self) -> None:
        self.base_url: str | None = None

    @abstractmethod
    def start(self) -> str:
        """Start (or reach) the desktop and return its controller's base URL."""

    @abstractmethod
    def stop(self) -> None:
        """Tear the desktop down; safe to call twice or after a failed start."""

    def __enter__(self) -> Provider:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------------- helpers


def controller_answers(base_url: str, timeout_s: float = 2.0) -> bool:
    """Whether GET /platform answers 200 (the cheapest request every controller serves)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(base_url.rstrip("/") + "/platform", timeout=timeout_s) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def wait_until_answers(
    base_url: str,
    timeout_s: float,
    *,
    alive: Any = None,
    what: str = "the controller",
) -> None:
    """Poll GET /platform until it answers; raise ProviderError after `timeout_s`, or as soon
    as `alive()` returns a reason the desktop died."""
    deadline = time.monotonic() + timeout_s
    while True:
        if controller_answers(base_url):
            return
        reason = alive() if alive is not None else None
        if reason:
            raise ProviderError(f"{what} at {base_url} stopped before answering: {reason}")
        if time.monotonic() >= deadline:
            raise ProviderError(
                f"{what} at {base_url} did not answer GET /platform within {timeout_s:g} s"
            )
        time.sleep(0.2)


_ports_lock = threading.Lock()
_ports_given: set[int] = set()
_displays_given: set[int] = set()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, never the same twice in this process (parallel
    providers start at once)."""
    with _ports_lock:
        for _ in range(50):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port not in _ports_given:
                _ports_given.add(port)
                return port
    raise ProviderError("no free TCP port on 127.0.0.1")


def _process_start_time(pid: int) -> str | None:
    """The start time of a process in clock ticks since boot (field 22 of /proc/PID/stat),
    which tells a live owner from a new process that reused its PID."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner_label() -> str:
    """host:pid:start-time of this process."""
    return f"{socket.gethostname()}:{os.getpid()}:{_process_start_time(os.getpid()) or '?'}"


def owner_alive(owner: str) -> bool | None:
    """Whether the process named by an owner label still runs; None when it ran on another
    host (nothing can be said from here)."""
    host, _, rest = owner.partition(":")
    pid_text, _, started = rest.partition(":")
    if host != socket.gethostname():
        return None
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    current = _process_start_time(pid)
    return current is not None and (started in ("?", "") or current == started)


def docker_client() -> Any:
    """A Docker SDK client of the engine the environment names; ProviderError if none answers."""
    import docker
    import docker.errors

    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as e:
        raise ProviderError(
            f"no Docker engine answers ({e}); start one (CI: collectors/live/sandbox/"
            "start-engine.sh) or use the local provider"
        ) from None
    return client


def cleanup_leftovers(client: Any = None, *, everything: bool = False) -> list[str]:
    """Remove the labelled containers that killed runs left: those whose owner process is
    gone from this host, and the exited ones of owners on other hosts (or unknown). A live
    owner's containers are its own business, even while being created. `everything` removes
    every labelled container, running or not. The qemu provider's VMs are cleaned up by the
    same rule first. Returns the names removed."""
    import docker.errors

    from deskscore.collectors.live.qemu import cleanup_vm_leftovers

    removed = cleanup_vm_leftovers(everything=everything)  # the qemu provider's VMs
    client = client or docker_client()
    # ignore_removed: a container listed and removed before it is inspected (another run
    # ending meanwhile) is not an error.
    listed = client.containers.list(all=True, filters={"label": f"{LABEL}=1"}, ignore_removed=True)
    for container in listed:
        labels = container.labels or {}
        alive = owner_alive(labels.get(LABEL_OWNER, ""))
        ended = container.status in ("exited", "dead")
        if everything or alive is False or (alive is None and ended):
            try:
                container.remove(force=True)
                removed.append(container.name)
            except docker.errors.NotFound:
                pass
    return removed


# ---------------------------------------------------------------------------- providers


class LocalProvider(Provider):
    """A controller that already runs at `url`; start() only checks that it answers."""

    name = "local"

    def __init__(self, url: str, *, ready_timeout_s: float = 10.0) -> None:
        super().__init__()
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"controller URL {url!r} is not an http(s) URL")
        self.url = url.rstrip("/")
        self.ready_timeout_s = ready_timeout_s

    def start(self) -> str:
        wait_until_answers(self.url, self.ready_timeout_s)
        self.base_url = self.url
        return self.url

    def stop(self) -> None:
        self.base_url = None


def _built_variant(image: str) -> Any:
    """The project's image variant (sandbox, desktop) `image` is of, by its repository; None
    for any other image. Those run on the host's network with the project's session."""
    from deskscore.collectors.live.sandbox.build import VARIANTS

    repository = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
    return next((v for v in VARIANTS.values() if repository.endswith(v.repository)), None)


class DockerProvider(Provider):
    """One container of `image` with a controller; removed again by stop().

    `network`: "host" (the sandbox image: the controller binds 127.0.0.1 at a free port passed
    in DESKSCORE_CONTROLLER_PORT; nothing is published) or "publish" (other images:
    `controller_port` inside is published on 127.0.0.1 at a port the engine picks). Default:
    "host" for deskscore-sandbox images, "publish" for any other. `screen` is WxHxDEPTH for the
    sandbox. `run_options` are passed to the SDK's containers.create (e.g. the OSWorld image's
    volumes, devices, cap_add, environment).
    """

    name = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        network: str | None = None,
        controller_port: int = CONTROLLER_PORT,
        screen: str | None = None,
        run_id: str | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        environment: dict[str, str] | None = None,
        run_options: dict[str, Any] | None = None,
        client: Any = None,
    ) -> None:
        super().__init__()
        if image is None:
            from deskscore.collectors.live.sandbox.build import image_name

            image = image_name()
        self.image = image
        self.variant = _built_variant(image)
        if network is None:
            network = "host" if self.variant is not None else "publish"
        if network not in ("host", "publish"):
            raise ValueError(f"network must be 'host' or 'publish', not {network!r}")
        self.network = network
        self.controller_port = controller_port
        self.screen = screen
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.ready_timeout_s = ready_timeout_s
        self.environment = dict(environment or {})
        self.run_options = dict(run_options or {})
        self._client = client
        self.container: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = docker_client()
        return self._client

    def run_arguments(self) -> dict[str, Any]:
        """The keyword arguments of containers.create, port choice included (host network)."""
        env = dict(self.environment)
        kwargs: dict[str, Any] = {
            "name": f"deskscore-sandbox-{self.run_id}-{uuid.uuid4().hex[:6]}",
            "labels": {LABEL: "1", LABEL_RUN: self.run_id, LABEL_OWNER: owner_label()},
        }
        if self.network == "host":
            port = free_port()
            env["DESKSCORE_CONTROLLER_PORT"] = str(port)
            kwargs["network_mode"] = "host"
            self.base_url = f"http://127.0.0.1:{port}"
        else:
            # The engine picks the host port; on 127.0.0.1 only, never on every interface.
            kwargs["ports"] = {f"{self.controller_port}/tcp": ("127.0.0.1",)}
        if self.screen:
            env["DESKSCORE_SCREEN"] = self.screen
        kwargs["environment"] = env
        for key, value in self.run_options.items():
            if key in ("environment",):
                kwargs["environment"] = {**env, **value}
            elif key in ("ports", "network_mode", "labels", "name"):
                raise ValueError(f"run option {key!r} is set by the provider")
            else:
                kwargs[key] = value
        return kwargs

    def _published_url(self) -> str:
        self.container.reload()
        bindings = (self.container.attrs["NetworkSettings"]["Ports"] or {}).get(
            f"{self.controller_port}/tcp"
        )
        if not bindings:
            raise ProviderError(
                f"container {self.container.name} publishes no port for {self.controller_port}/tcp"
            )
        binding = bindings[0]
        if binding.get("HostIp") not in ("127.0.0.1",):
            raise ProviderError(f"container port published on {binding.get('HostIp')!r}")
        return f"http://127.0.0.1:{binding['HostPort']}"

    def _death(self) -> str | None:
        """Why the container is no longer running, with the tail of its log; None if it runs."""
        import docker.errors

        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "the container is gone"
        if self.container.status in ("created", "running", "restarting"):
            return None
        state = self.container.attrs.get("State", {})
        return f"exited with {state.get('ExitCode')}; its log ends:\n{self._log_tail()}"

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return self.container.logs(tail=lines).decode("utf-8", "replace").strip()
        except Exception:
            return "(no log)"

    def start(self) -> str:
        import docker.errors

        try:
            self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            if self.variant is None:
                hint = f"pull or load it first (docker pull {self.image})"
            else:
                flag = "" if self.variant.name == "sandbox" else f" --{self.variant.name}"
                hint = f"build it with `deskscore sandbox build{flag}`"
            raise ProviderError(f"image {self.image} is not in the engine; {hint}") from None
        try:
            arguments = self.run_arguments()
            # Created, then started: a container whose start fails is still ours to remove.
            self.container = self.client.containers.create(self.image, **arguments)
            self.container.start()
            if self.network == "publish":
                self.base_url = self._published_url()
            assert self.base_url is not None
            wait_until_answers(
                self.base_url,
                self.ready_timeout_s,
                alive=self._death,
                what=f"the controller of container {self.container.name} ({self.image})",
            )
        except ProviderError as e:
            log = self._log_tail() if self.container is not None else ""
            self.stop()
            raise ProviderError(f"{e}\ncontainer log:\n{log}" if log else str(e)) from None
        except docker.errors.DockerException as e:
            self.stop()
            raise ProviderError(f"could not start a container of {self.image}: {e}") from None
        return self.base_url

    def stop(self) -> None:
        import docker.errors

        container, self.container = self.container, None
        self.base_url = None
        if container is None:
            return
        with contextlib.suppress(docker.errors.DockerException):
            container.stop(timeout=5)
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


_DISPLAY_ATTEMPTS = 4
"""Displays tried when another process starts an X server on the one chosen first."""


class HostProvider(Provider):
    """The sandbox's desktop session on this machine: Xvfb on a free display, the window
    manager if installed, and the controller on a free 127.0.0.1 port, all in one process
    group that stop() ends. `home` becomes HOME of the desktop (a fresh temporary folder by
    default), so commands with ~ stay out of the real home."""

    name = "host"

    def __init__(
        self,
        *,
        screen: str = "1280x720x24",
        wm: str = "jwm",
        home: str | os.PathLike[str] | None = None,
        ready_timeout_s: float = 30.0,
        python: str | None = None,
    ) -> None:
        super().__init__()
        self.screen = screen
        self.wm = wm
        self.home = Path(home) if home is not None else None
        self.ready_timeout_s = ready_timeout_s
        self.python = python or sys.executable
        self.display: str | None = None
        self.process: subprocess.Popen | None = None
        self._own_home: str | None = None
        self._log: Any = None

    @staticmethod
    def free_display() -> str:
        """A display number from 50 to 999 with no X socket or lock file, never the same twice
        in this process. The search starts at a point that depends on the process id, so that
        processes starting desktops at the same moment (parallel test workers, several
        collectors) rarely try the same number; `start` tries again if one does."""
        with _ports_lock:
            first = 50 + os.getpid() % 950
            for n in (*range(first, 1000), *range(50, first)):
                if n in _displays_given or any(
                    os.path.exists(p) for p in (f"/tmp/.X11-unix/X{n}", f"/tmp/.X{n}-lock")
                ):
                    continue
                _displays_given.add(n)
                return f":{n}"
        raise ProviderError("no free X display number between 50 and 999")

    def start(self) -> str:
        if shutil.which("Xvfb") is None:
            raise ProviderError("Xvfb is not installed (Debian: apt-get install xvfb)")
        for attempt in range(_DISPLAY_ATTEMPTS):
            if self.home is None:  # a failed attempt's stop() removed the one it made
                self._own_home = tempfile.mkdtemp(prefix="deskscore-home-")
                self.home = Path(self._own_home)
            try:
                return self._start_session()
            except ProviderError as exc:
                # Another process took the display between our look and Xvfb's start.
                taken = "Xvfb" in str(exc) and "exited at start" in str(exc)
                if not taken or attempt == _DISPLAY_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _start_session(self) -> str:
        port = free_port()
        self.display = self.free_display()
        env = dict(os.environ)
        env["HOME"] = str(self.home)
        # Commands run `python -c "import pyautogui ..."`: `python` is this interpreter.
        env["PATH"] = os.path.dirname(self.python) + os.pathsep + env.get("PATH", "")
        env.pop("DISPLAY", None)
        if "DESKSCORE_OPENER" not in env and shutil.which("l3afpad"):
            env["DESKSCORE_OPENER"] = "l3afpad"  # /setup/open_file opens with it, as in the image
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        session = [self.python, str(SESSION_SCRIPT), "--display", self.display, "--quiet"]
        self.process = subprocess.Popen(
            [*session, "--screen", self.screen, "--port", str(port), "--wm", self.wm],
            env=env,
            cwd=str(self.home),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"

        def died() -> str | None:
            if self.process is None or self.process.poll() is None:
                return None
            return f"the session exited with {self.process.returncode}:\n{self.log()}"

        try:
            wait_until_answers(url, self.ready_timeout_s, alive=died, what="the host controller")
        except ProviderError:
            self.stop()
            raise
        self.base_url = url
        return url

    def log(self) -> str:
        """What the session (Xvfb, window manager, controller) wrote so far."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace").strip()

    def stop(self) -> None:
        proc, self.process = self.process, None
        self.base_url = None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # the session stops its children
                proc.wait(timeout=10)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            with contextlib.suppress(ProcessLookupError):  # what its programs left behind
                os.killpg(proc.pid, signal.SIGKILL)
        if self.display is not None:  # if the session was killed before removing it
            number = self.display.lstrip(":")
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(tempfile.gettempdir(), f".deskscore-Xauthority-{number}"))
        if self._own_home is not None:
            shutil.rmtree(self._own_home, ignore_errors=True)
            self._own_home = None
            self.home = None
        if self._log is not None:
            self._log.close()
            self._log = None


def provider_from_spec(spec: str, **options: Any) -> Provider:
    """A provider from a command-line spec: `docker` (the sandbox image of this source
    tree), `docker:IMAGE`, `host`, `qemu` (the sandbox VM; `qemu:boot` boots every episode
    instead of resuming a saved state), `local:URL` or a bare http(s) URL. `options` go to
    the provider's constructor."""
    kind, _, rest = spec.partition(":")
    if spec.startswith(("http://", "https://")):
        return LocalProvider(spec, **options)
    if kind == "local":
        if not rest:
            raise ValueError("local provider needs a URL: local:http://127.0.0.1:5000")
        return LocalProvider(rest, **options)
    if kind == "docker":
        return DockerProvider(rest or None, **options)
    if kind == "host":
        return HostProvider(**options)
    if kind == "qemu":
        from deskscore.collectors.live.qemu import QemuProvider

        return QemuProvider(**({"reset": rest} if rest else {}), **options)
    raise ValueError(
        f"unknown provider {spec!r}: docker, docker:IMAGE, host, qemu, qemu:boot, local:URL "
        "or an http(s) URL"
    )


__all__ = [
    "LABEL",
    "LABEL_OWNER",
    "LABEL_RUN",
    "OSWORLD_IMAGE",
    "DockerProvider",
    "HostProvider",
    "LocalProvider",
    "Provider",
    "ProviderError",
    "cleanup_leftovers",
    "controller_answers",
    "docker_client",
    "free_port",
    "owner_alive",
    "owner_label",
    "provider_from_spec",
    "wait_until_answers",
]
