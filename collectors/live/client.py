"""HTTP client of the in-VM controller that OSWorld (and its forks, DeskCraft among them) runs
inside each desktop: screenshots, pyautogui or shell commands, files, and the setup steps a
task config lists.

Endpoints and payloads are OSWorld's, so the same collector drives a real OSWorld VM, the
project's sandbox image, or any controller speaking the protocol:

| call | request |
|---|---|
| screenshot | GET /screenshot -> PNG (or JPEG) bytes |
| execute | POST /execute, JSON {"command": [...] or "...", "shell": bool} -> {status, output, error, returncode} |
| python code | /execute with ["python", "-c", "import pyautogui; import time; pyautogui.FAILSAFE = False; <code>"] |
| platform | GET /platform -> text |
| cursor position | GET /cursor_position -> [x, y] |
| screen size | POST /screen_size -> {"width", "height"} |
| accessibility tree | GET /accessibility -> {"AT": xml} |
| file | POST /file, form file_path -> the bytes (404 when absent) |
| setup: launch, open, execute, upload | POST /setup/launch, /setup/open_file, /setup/execute, /setup/upload (multipart file_path + file_data) |

Retries follow OSWorld's controller: a few attempts with a pause between them for reads and
for requests that never reached the controller; but an /execute whose reply timed out is not
sent again (the command may have run: typing twice is worse than reporting a failure). The
standard library only (urllib): no proxy is ever used to reach a controller.
"""

from __future__ import annotations

import json
import os
import shlex
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

PYAUTOGUI_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; {command}"
"""What OSWorld's controller prepends to every pyautogui command it sends."""
SCREENSHOT_TIMEOUT_S = 10.0
EXECUTE_TIMEOUT_S = 90.0
"""The controller itself gives a command 120 s; OSWorld's client waits 90 s for the reply."""
OPEN_TIMEOUT_S = 1810.0
"""/setup/open_file waits for the window to appear (up to 1800 s on OSWorld's server)."""
DEFAULT_TIMEOUT_S = 30.0
UNTIL_TIMEOUT_S = 120.0
"""How long an execute step with an `until` condition is repeated before setup fails."""
_MAX_REPLY = 256 << 20


class ControllerError(Exception):
    """The controller could not do what was asked; the message names the endpoint and why."""


class SetupError(ControllerError):
    """A task's setup step failed or is of a type this client does not implement."""


def _is_image(data: bytes) -> bool:
    return data[:8] == b"\x89PNG\r\n\x1a\n" or data[:3] == b"\xff\xd8\xff"


def _multipart(
    fields: Mapping[str, str], files: Mapping[str, tuple[str, bytes]]
) -> tuple[bytes, str]:
    """A multipart/form-data body (what the controller's upload endpoint reads)."""
    boundary = uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + value.encode()
            + b"\r\n"
        )
    for name, (filename, data) in files.items():
        safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{safe}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class Controller:
    """One controller at `base_url` (e.g. http://127.0.0.1:5000).

    `retries` attempts per call (OSWorld: 3) with `retry_interval_s` between them (OSWorld:
    5 s; 1 s here, since a local container answers at once or not at all). `python` is the
    interpreter the controller runs pyautogui code with (OSWorld's VMs: python).
    """

    def __init__(
        self,
        base_url: str,
        *,
        retries: int = 3,
        retry_interval_s: float = 1.0,
        python: str = "python",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"controller URL {base_url!r} is not an http(s) URL with a host")
        self.base_url = base_url.rstrip("/")
        self.retries = max(1, retries)
        self.retry_interval_s = retry_interval_s
        self.python = python
        self._sleep = sleep
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # ------------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry_after_timeout: bool = True,
        ok: Sequence[int] = (200,),
    ) -> tuple[int, bytes]:
        """(status, body) of the first attempt whose status is in `ok` or is 404; raises
        ControllerError after the last attempt."""
        url = self.base_url + path
        headers = {"Content-Type": content_type} if content_type else {}
        last = ""
        for attempt in range(1, self.retries + 1):
            request = urllib.request.Request(url, data=body, headers=headers, method=method)
            try:
                with self._opener.open(request, timeout=timeout) as reply:
                    return reply.status, reply.read(_MAX_REPLY)
            except urllib.error.HTTPError as e:
                data = e.read(2000)
                if e.code == 404 or e.code in ok:
                    return e.code, data
                last = f"HTTP {e.code}: {data.decode('utf-8', 'replace').strip()[:300]}"
            except TimeoutError:
                last = f"no reply within {timeout:g} s"
                if not retry_after_timeout:
                    break
            except (urllib.error.URLError, OSError) as e:
                reason = getattr(e, "reason", e)
                if isinstance(reason, TimeoutError) and not retry_after_timeout:
                    last = f"no reply within {timeout:g} s"
                    break
                last = f"{type(reason).__name__}: {reason}"
            if attempt < self.retries:
                self._sleep(self.retry_interval_s)
        raise ControllerError(
            f"{method} {url} failed after {attempt} attempt(s) ({last}); check that the "
            "controller runs and is reachable"
        )

    def _post_json(self, path: str, payload: Any, **kw: Any) -> tuple[int, bytes]:
        return self._request(
            "POST", path, body=json.dumps(payload).encode(), content_type="application/json", **kw
        )

    @staticmethod
    def _json(data: bytes, what: str) -> Any:
        try:
            return json.loads(data)
        except ValueError:
            raise ControllerError(
                f"{what}: the controller's reply is not JSON: {data[:200]!r}"
            ) from None

    # ------------------------------------------------------------------ observations

    def screenshot(self) -> bytes:
        """The screen as PNG (or JPEG) bytes; raises when no valid image came back."""
        for attempt in range(1, self.retries + 1):
            status, data = self._request("GET", "/screenshot", timeout=SCREENSHOT_TIMEOUT_S)
            if status == 200 and _is_image(data):
                return data
            if attempt < self.retries:
                self._sleep(self.retry_interval_s)
        raise ControllerError(
            f"GET {self.base_url}/screenshot returned no PNG or JPEG image "
            f"(status {status}, {len(data)} bytes)"
        )

    def platform(self) -> str:
        return self._request("GET", "/platform")[1].decode("utf-8", "replace").strip()

    def cursor_position(self) -> tuple[int, int]:
        x, y = self._json(self._request("GET", "/cursor_position")[1], "cursor_position")
        return int(x), int(y)

    def screen_size(self) -> tuple[int, int]:
        data = self._json(self._request("POST", "/screen_size")[1], "screen_size")
        return int(data["width"]), int(data["height"])

    def accessibility(self) -> str | None:
        """The accessibility tree (XML text), or None where the controller has none."""
        try:
            status, data = self._request("GET", "/accessibility", ok=(200, 500))
        except ControllerError:
            return None
        if status != 200:
            return None
        tree = self._json(data, "accessibility").get("AT")
        return tree if isinstance(tree, str) else None

    def file(self, path: str) -> bytes | None:
        """The bytes of `path` on the desktop machine; None when it does not exist."""
        body = urllib.parse.urlencode({"file_path": path}).encode()
        status, data = self._request(
            "POST", "/file", body=body, content_type="application/x-www-form-urlencoded"
        )
        return data if status == 200 else None

    # ------------------------------------------------------------------ commands

    def execute(
        self, command: str | Sequence[str], *, shell: bool = False, setup: bool = False
    ) -> dict[str, Any]:
        """Run a command on the desktop machine: {status, output, error, returncode}.

        `setup` sends it to /setup/execute (the same handler; OSWorld's setup controller uses
        it). A reply that times out is not retried: the command may have run."""
        payload = {
            "command": command if isinstance(command, str) else list(command),
            "shell": shell,
        }
        status, data = self._post_json(
            "/setup/execute" if setup else "/execute",
            payload,
            timeout=EXECUTE_TIMEOUT_S,
            retry_after_timeout=False,
            ok=(200, 500),
        )
        result = self._json(data, "execute")
        if status != 200 or not isinstance(result, dict):
            message = result.get("message") if isinstance(result, dict) else result
            raise ControllerError(f"{self.base_url}/execute could not run the command: {message}")
        return result

    def execute_python(self, code: str) -> dict[str, Any]:
        """Run pyautogui code as OSWorld does: `python -c` with pyautogui imported first."""
        return self.execute([self.python, "-c", PYAUTOGUI_PREFIX.format(command=code)])

    # ------------------------------------------------------------------ setup steps

    def launch(self, command: str | Sequence[str], shell: bool = False) -> None:
        if not shell and isinstance(command, str):
            command = shlex.split(command)
        self._post_json("/setup/launch", {"command": command, "shell": shell})

    def open_file(self, path: str) -> None:
        status, data = self._post_json("/setup/open_file", {"path": path}, timeout=OPEN_TIMEOUT_S)
        if status != 200:
            raise SetupError(
                f"open {path!r}: the controller says {data.decode('utf-8', 'replace')[:300]}"
            )

    def upload(self, path: str, data: bytes) -> None:
        body, content_type = _multipart(
            {"file_path": path}, {"file_data": (os.path.basename(path) or "file", data)}
        )
        self._request("POST", "/setup/upload", body=body, content_type=content_type, timeout=600)

    def wait_ready(self, timeout_s: float = 60.0, interval_s: float = 0.5) -> None:
        """Block until the controller answers /platform, or raise after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        probe = Controller(self.base_url, retries=1, python=self.python)
        while True:
            try:
                probe.platform()
                return
            except ControllerError as e:
                if time.monotonic() >= deadline:
                    raise ControllerError(
                        f"the controller at {self.base_url} did not answer within {timeout_s:g} s ({e})"
                    ) from None
            self._sleep(interval_s)

    def run_setup(self, steps: Sequence[Mapping[str, Any]], *, base_dir: str | None = None) -> None:
        """Run a task config's setup steps in order ({"type", "parameters"}), as OSWorld's
        setup controller does for the types implemented here: launch, open, execute (and its
        alias command), sleep, upload_file (a file entry may name a generated file,
        `{"generated": NAME, "path": ...}`, instead of a `local_path`). Any other type raises
        SetupError naming it.

        `base_dir` resolves relative local paths of upload_file (the task file's folder)."""
        for i, step in enumerate(steps, 1):
            kind = step.get("type") if isinstance(step, Mapping) else None
            params = (step.get("parameters") or {}) if isinstance(step, Mapping) else {}
            try:
                self._setup_step(kind, params, base_dir)
            except SetupError:
                raise
            except (ControllerError, OSError, KeyError, TypeError, ValueError) as e:
                raise SetupError(f"setup step {i} ({kind}) failed: {e}") from None

    def _setup_step(self, kind: Any, params: Mapping[str, Any], base_dir: str | None) -> None:
        if kind == "launch":
            self.launch(params["command"], bool(params.get("shell", False)))
        elif kind == "open":
            self.open_file(params["path"])
        elif kind in ("execute", "command"):
            self._execute_until(params)
        elif kind == "sleep":
            self._sleep(float(params["seconds"]))
        elif kind == "upload_file":
            for f in params["files"]:
                if "generated" in f:
                    # A file this project generates (desktop_files), in place of a local one.
                    from deskscore.collectors.live import desktop_files

                    self.upload(f["path"], desktop_files.build(f["generated"]))
                    continue
                local = f["local_path"]
                if base_dir and not os.path.isabs(local):
                    local = os.path.join(base_dir, local)
                with open(local, "rb") as fh:
                    self.upload(f["path"], fh.read())
        else:
            raise SetupError(
                f"setup step type {kind!r} is not implemented by deskscore's controller client "
                "(launch, open, execute, command, sleep, upload_file are)"
            )

    def _execute_until(self, params: Mapping[str, Any]) -> None:
        """/setup/execute, repeated until the `until` condition holds (as OSWorld: at most 5
        failed requests, 0.3 s apart; and, unlike OSWorld, for at most UNTIL_TIMEOUT_S)."""
        until = params.get("until") or {}
        failures = 0
        deadline = time.monotonic() + UNTIL_TIMEOUT_S
        while True:
            try:
                result = self.execute(
                    params["command"], shell=bool(params.get("shell", False)), setup=True
                )
            except ControllerError:
                result = None
                failures += 1
            if not until:
                if result is None:
                    raise SetupError(f"execute {params['command']!r}: the controller failed")
                return
            if result is not None and (
                ("returncode" in until and result.get("returncode") == until["returncode"])
                or ("stdout" in until and until["stdout"] in (result.get("output") or ""))
                or ("stderr" in until and until["stderr"] in (result.get("error") or ""))
            ):
                return
            if failures >= 5 or time.monotonic() > deadline:
                raise SetupError(f"execute {params['command']!r}: its 'until' never held")
            self._sleep(0.3)


__all__ = [
    "PYAUTOGUI_PREFIX",
    "Controller",
    "ControllerError",
    "SetupError",
]
