"""The in-desktop controller: OSWorld's HTTP protocol, served with the standard library.

OSWorld (and DeskCraft) run a Flask server inside each VM that takes screenshots, runs
pyautogui code and shell commands, moves files and performs a task's setup steps. This module
serves the subset the collector uses, on the same paths, with the same methods, payloads and
reply shapes, so the collector's client cannot tell it from a real OSWorld VM:

| path | method | request | reply |
|---|---|---|---|
| /screenshot | GET | | PNG of the whole screen, cursor drawn in |
| /execute, /setup/execute | POST | JSON {"command": list or str, "shell": bool} | {"status", "output", "error", "returncode"}; 500 {"status": "error", "message"} |
| /setup/launch | POST | JSON {"command", "shell"} | text "... launched successfully" |
| /setup/open_file | POST | JSON {"path"} | text; waits for a window titled after the file |
| /setup/activate_window, /setup/close_window | POST | JSON {"window_name", "strict", "by_class"} | text |
| /setup/upload | POST | multipart file_path + file_data | text "File Uploaded: N bytes" |
| /file | POST | form file_path | the bytes; 404 {"error": "File not found"} |
| /platform | GET | | text, e.g. "Linux" |
| /cursor_position | GET | | JSON [x, y] |
| /screen_size | POST | | {"width", "height"} |
| /accessibility | GET | | {"AT": xml}: the AT-SPI tree where an accessibility bus runs (atspi_tree.py), with the top-level windows of programs not on it; else the windows alone |
| /run_python | POST | JSON {"code"} | {"status", "message", "need_more", "output", "error", "return_code"} |
| /run_bash_script | POST | JSON {"script", "timeout", "working_dir"} | {"status", "output", "error", "returncode"} |

It runs with a plain `python3`, python-xlib and Pillow (no Flask, no deskscore import): the
sandbox image copies this one file. pyautogui is only needed by the commands it runs. It binds
a loopback address only: whoever reaches it can run any command as the desktop's user.
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import io
import ipaddress
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

EXECUTE_TIMEOUT_S = 120
"""OSWorld's controller gives a command two minutes."""
OPEN_TIMEOUT_S = float(os.environ.get("DESKSCORE_OPEN_TIMEOUT", "120"))
"""How long /setup/open_file waits for the window (OSWorld: 1800 s; a sandbox app that has not
opened after two minutes will not)."""
ACCESSIBILITY_TIMEOUT_S = float(os.environ.get("DESKSCORE_ACCESSIBILITY_TIMEOUT", "15"))
"""How long /accessibility waits for the AT-SPI tree before it answers with the window list."""
MAX_BODY = 256 << 20
"""Largest request body accepted (an upload); larger ones get 413 before anything is read."""
NS = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
}
"""The namespaces of OSWorld's Ubuntu accessibility trees, so the same XPath queries work."""

_X_LOCK = threading.Lock()


class Reply:
    """What a handler returns: status, body, content type and extra headers."""

    def __init__(
        self,
        body: bytes | str | Any = b"",
        status: int = 200,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if isinstance(body, bytes):
            self.body = body
            self.content_type = content_type or "application/octet-stream"
        elif isinstance(body, str):
            # Flask's reply for a handler returning a string.
            self.body = body.encode()
            self.content_type = content_type or "text/html; charset=utf-8"
        else:
            self.body = (json.dumps(body) + "\n").encode()
            self.content_type = content_type or "application/json"
        self.status = status
        self.headers = headers or {}


class BadRequest(Exception):
    """The request cannot be served; carries the reply to send."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.body[:200])
        self.reply = reply


# ---------------------------------------------------------------------------- X display


class XSession:
    """One connection to the X display for one request (python-xlib is not thread-safe, so
    requests take turns and each opens its own connection)."""

    def __enter__(self) -> XSession:
        from Xlib import display

        _X_LOCK.acquire()
        try:
            self.d = display.Display()
        except Exception:
            _X_LOCK.release()
            raise
        self.root = self.d.screen().root
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.d.close()
        finally:
            _X_LOCK.release()

    def atom(self, name: str) -> int:
        return self.d.intern_atom(name)

    def screen_size(self) -> tuple[int, int]:
        s = self.d.screen()
        return s.width_in_pixels, s.height_in_pixels

    def pointer(self) -> tuple[int, int]:
        p = self.root.query_pointer()
        return p.root_x, p.root_y

    def screenshot(self, with_cursor: bool = True) -> Any:
        """The root window as a PIL image, with the cursor image pasted at the pointer."""
        from PIL import Image
        from Xlib import X

        width, height = self.screen_size()
        raw = self.root.get_image(0, 0, width, height, X.ZPixmap, 0xFFFFFFFF)
        depth = self.d.screen().root_depth
        if depth not in (24, 32):
            raise RuntimeError(f"screen depth {depth} is not supported (24 or 32 bits)")
        image = Image.frombuffer("RGB", (width, height), raw.data, "raw", "BGRX", 0, 1)
        if with_cursor:
            cursor = self._cursor()
            if cursor is not None:
                sprite, (x, y) = cursor
                image = image.copy()
                image.paste(sprite, (x, y), sprite)
        return image

    def _cursor(self) -> tuple[Any, tuple[int, int]] | None:
        """The cursor sprite (RGBA) and where its top-left corner sits, via XFIXES; None
        where the server has no XFIXES."""
        from array import array

        from PIL import Image

        if not self.d.has_extension("XFIXES"):
            return None
        self.d.xfixes_query_version()  # XFIXES answers nothing before the version handshake
        c = self.d.xfixes_get_cursor_image(self.root)
        if not c.width or not c.height:
            return None
        pixels = array("I", [v & 0xFFFFFFFF for v in c.cursor_image]).tobytes()
        # ARGB words, premultiplied alpha; little-endian bytes read as BGRa.
        sprite = Image.frombuffer("RGBa", (c.width, c.height), pixels, "raw", "BGRa", 0, 1)
        return sprite.convert("RGBA"), (c.x - c.xhot, c.y - c.yhot)

    def _text_property(self, window: Any, name: str) -> str | None:
        prop = window.get_full_property(self.atom(name), 0)
        if prop is None or prop.value is None:
            return None
        value = prop.value
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return str(value)

    def windows(self) -> list[dict[str, Any]]:
        """The top-level application windows: id, title, class, geometry, active flag.

        From the window manager's _NET_CLIENT_LIST where there is one; otherwise the mapped
        children of the root (and their children, for reparenting managers without EWMH)
        that carry a title."""
        from Xlib import X

        prop = self.root.get_full_property(self.atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        if prop is not None:  # an EWMH window manager runs: its list, even when empty
            candidates = [self.d.create_resource_object("window", wid) for wid in prop.value]
        else:
            candidates = []
            for child in self.root.query_tree().children:
                candidates.append(child)
                candidates.extend(child.query_tree().children)
        active_prop = self.root.get_full_property(
            self.atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType
        )
        active = (
            int(active_prop.value[0]) if active_prop is not None and len(active_prop.value) else 0
        )
        out: list[dict[str, Any]] = []
        for w in candidates:
            try:
                attrs = w.get_attributes()
                if attrs.map_state != X.IsViewable and prop is None:
                    continue
                title = self._text_property(w, "_NET_WM_NAME") or w.get_wm_name()
                if isinstance(title, bytes):
                    title = title.decode("latin-1")
                if not title and prop is None:
                    continue
                wm_class = w.get_wm_class() or ("", "")
                geo = w.get_geometry()
                pos = self.root.translate_coords(w, 0, 0)
                out.append(
                    {
                        "id": w.id,
                        "title": title or "",
                        "instance": wm_class[0] or "",
                        "class": wm_class[1] or "",
                        "x": pos.x,
                        "y": pos.y,
                        "width": geo.width,
                        "height": geo.height,
                        "active": w.id == active,
                        "visible": attrs.map_state == X.IsViewable,
                        "window": w,
                    }
                )
            except Exception:  # the window went away while we looked at it
                continue
        return out

    def activate(self, window: Any) -> None:
        """Raise and focus a window the way a pager asks an EWMH window manager to."""
        from Xlib import X
        from Xlib.protocol import event

        ev = event.ClientMessage(
            window=window,
            client_type=self.atom("_NET_ACTIVE_WINDOW"),
            data=(32, [2, X.CurrentTime, 0, 0, 0]),
        )
        self.root.send_event(ev, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        window.configure(stack_mode=X.Above)
        if not self._has_wm():
            window.set_input_focus(X.RevertToParent, X.CurrentTime)
        self.d.sync()

    def close(self, window: Any) -> None:
        """Ask the window manager to close a window (as `wmctrl -c` does); without one,
        disconnect its client."""
        from Xlib import X
        from Xlib.protocol import event

        if self._has_wm():
            ev = event.ClientMessage(
                window=window,
                client_type=self.atom("_NET_CLOSE_WINDOW"),
                data=(32, [X.CurrentTime, 2, 0, 0, 0]),
            )
            self.root.send_event(
                ev, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask
            )
        else:
            window.kill_client()
        self.d.sync()

    def _has_wm(self) -> bool:
        from Xlib import X

        prop = self.root.get_full_property(self.atom("_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
        return prop is not None and len(prop.value) > 0


def accessibility_xml(windows: list[dict[str, Any]]) -> str:
    """A window-level tree in the shape of OSWorld's Ubuntu trees: <desktop-frame> holding one
    <application> per program and a <frame> per window, with st:/cp: attributes."""
    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    root = ET.Element("desktop-frame", {"name": "main"})
    apps: dict[str, ET.Element] = {}
    for w in windows:
        app_name = w["instance"] or w["class"] or "unknown"
        if app_name not in apps:
            apps[app_name] = ET.SubElement(root, "application", {"name": app_name})
        attrs = {
            "name": w["title"],
            f"{{{NS['attr']}}}class": w["class"],
            f"{{{NS['cp']}}}screencoord": f"({w['x']}, {w['y']})",
            f"{{{NS['cp']}}}size": f"({w['width']}, {w['height']})",
        }
        if w["visible"]:
            attrs[f"{{{NS['st']}}}visible"] = "true"
            attrs[f"{{{NS['st']}}}showing"] = "true"
        if w["active"]:
            attrs[f"{{{NS['st']}}}active"] = "true"
        ET.SubElement(apps[app_name], "frame", attrs)
    return ET.tostring(root, encoding="unicode")


def match_windows(
    windows: list[dict[str, Any]], name: str, *, strict: bool = False, by_class: bool = False
) -> list[dict[str, Any]]:
    """wmctrl's matching: a case-insensitive substring of the title (or class), or the whole
    string, case-sensitive, when strict."""
    found = []
    for w in windows:
        keys = [w["instance"], w["class"]] if by_class else [w["title"]]
        for key in keys:
            if (strict and key == name) or (not strict and name.lower() in key.lower()):
                found.append(w)
                break
    return found


# ---------------------------------------------------------------------------- processes


def _spawn(command: str | list[str], shell: bool) -> subprocess.Popen:
    """Start a program and forget it, but reap it when it exits (no zombies pile up)."""
    proc = subprocess.Popen(command, shell=shell, stdin=subprocess.DEVNULL)
    threading.Thread(target=proc.wait, daemon=True).start()
    return proc


def _normalise_command(data: dict[str, Any]) -> tuple[str | list[str], bool]:
    """The command and shell flag of an execute/launch payload, as OSWorld reads them."""
    shell = bool(data.get("shell", False))
    command = data.get("command", "" if shell else [])
    if isinstance(command, str) and not shell:
        command = shlex.split(command)
    if isinstance(command, list):
        command = [
            os.path.expanduser(a) if isinstance(a, str) and a.startswith("~/") else a
            for a in command
        ]
    return command, shell


def _expand(path: str) -> str:
    return os.path.expandvars(os.path.expanduser(path))


# ---------------------------------------------------------------------------- handlers


def h_screenshot(req: Request) -> Reply:
    with XSession() as x:
        image = x.screenshot(with_cursor=True)
    buf = io.BytesIO()
    image.save(buf, "PNG", compress_level=3)
    return Reply(buf.getvalue(), content_type="image/png")


def h_execute(req: Request) -> Reply:
    data = req.json()
    try:
        command, shell = _normalise_command(data)
        result = subprocess.run(
            command,
            shell=shell,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=EXECUTE_TIMEOUT_S,
        )
    except Exception as e:
        return Reply({"status": "error", "message": str(e)}, status=500)
    return Reply(
        {
            "status": "success",
            "output": result.stdout,
            "error": result.stderr,
            "returncode": result.returncode,
        }
    )


def h_launch(req: Request) -> Reply:
    data = req.json()
    try:
        command, shell = _normalise_command(data)
        _spawn(command, shell)
    except Exception as e:
        return Reply({"status": "error", "message": str(e)}, status=500)
    shown = command if shell or isinstance(command, str) else " ".join(command)
    return Reply(f"{shown} launched successfully")


def _opener() -> list[str] | None:
    """The program that opens files: DESKSCORE_OPENER (the image sets its text editor), else
    xdg-open where installed."""
    configured = os.environ.get("DESKSCORE_OPENER", "").strip()
    if configured:
        return shlex.split(configured)
    if shutil.which("xdg-open"):
        return ["xdg-open"]
    return None


def h_open_file(req: Request) -> Reply:
    data = req.json()
    path = data.get("path")
    if not path:
        return Reply("Path not supplied!", status=400)
    full = _expand(str(path))
    is_file = os.path.exists(full)
    if not is_file and not shutil.which(str(path)):
        return Reply(f"Application/file not found: {path}", status=404)
    try:
        if is_file:
            opener = _opener()
            if opener is None:
                return Reply(
                    f"Failed to open {path}. Error: no program opens files here "
                    "(set DESKSCORE_OPENER)",
                    status=500,
                )
            _spawn([*opener, full], False)
            file_name = os.path.basename(full)
        else:
            _spawn([str(path)], False)
            file_name = str(path)
    except Exception as e:
        return Reply(f"Failed to open {path}. Error: {e}", status=500)
    stem = os.path.splitext(file_name)[0]
    deadline = time.monotonic() + OPEN_TIMEOUT_S
    while time.monotonic() < deadline:
        with XSession() as x:
            found = [
                w for w in x.windows() if file_name in w["title"] or (stem and stem in w["title"])
            ]
            if found:
                x.activate(found[0]["window"])
                return Reply("File opened and window activated successfully")
        time.sleep(0.25)
    return Reply(
        f"Failed to find window for {file_name} within {OPEN_TIMEOUT_S:g} seconds.", status=500
    )


def _window_request(req: Request) -> tuple[str, bool, bool]:
    data = req.json()
    name = data.get("window_name")
    if not name:
        raise BadRequest(Reply("window_name required", status=400))
    return str(name), bool(data.get("strict", False)), bool(data.get("by_class", False))


def _on_window(req: Request, act: Callable[[Any, Any], None], done: str) -> Reply:
    """Find the window a setup request names and `act(session, window)` on the first match."""
    name, strict, by_class = _window_request(req)
    with XSession() as x:
        found = match_windows(x.windows(), name, strict=strict, by_class=by_class)
        if not found:
            return Reply(f"Window {name} not found", status=404)
        act(x, found[0]["window"])
    return Reply(done)


def h_activate_window(req: Request) -> Reply:
    return _on_window(req, lambda x, w: x.activate(w), "Window activated successfully")


def h_close_window(req: Request) -> Reply:
    return _on_window(req, lambda x, w: x.close(w), "Window closed successfully.")


def h_file(req: Request) -> Reply:
    form = req.form()
    if "file_path" not in form:
        return Reply({"error": "file_path is required"}, status=400)
    path = _expand(form["file_path"])
    if not os.path.isfile(path):
        return Reply({"error": "File not found"}, status=404)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        return Reply({"error": f"Failed to serve file: {e}"}, status=500)
    name = os.path.basename(path).replace('"', "_")
    return Reply(data, headers={"Content-Disposition": f'attachment; filename="{name}"'})


def h_upload(req: Request) -> Reply:
    fields, files = req.multipart()
    if "file_path" not in fields or "file_data" not in files:
        return Reply({"error": "file_path and file_data are required"}, status=400)
    path = _expand(fields["file_path"])
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(files["file_data"])
    except OSError as e:
        if os.path.exists(path):
            os.remove(path)
        return Reply({"error": f"Failed to upload file: {e}"}, status=500)
    return Reply(f"File Uploaded: {os.path.getsize(path)} bytes")


def h_platform(req: Request) -> Reply:
    return Reply(platform.system())


def h_cursor_position(req: Request) -> Reply:
    with XSession() as x:
        return Reply(list(x.pointer()))


def h_screen_size(req: Request) -> Reply:
    with XSession() as x:
        width, height = x.screen_size()
    return Reply({"width": width, "height": height})


def atspi_xml(timeout_s: float = ACCESSIBILITY_TIMEOUT_S) -> str | None:
    """The AT-SPI tree (atspi_tree.py, in a child process killed at `timeout_s`, so a hung
    application cannot hold the reply), or None where there is no accessibility bus, no
    pyatspi, or no application on it."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "atspi_tree.py")
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") or not os.path.exists(script):
        return None
    try:
        proc = subprocess.run(
            [sys.executable, script],
            capture_output=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0 or b"<application" not in proc.stdout:
        return None
    return proc.stdout.decode("utf-8", "replace")


def merge_windows(tree: str, windows: list[dict[str, Any]]) -> str:
    """The AT-SPI tree plus the window-level entries of programs it does not hold (xterm and
    other X programs without an accessibility bridge)."""
    root = ET.fromstring(tree)
    known = {(app.get("name") or "").lower() for app in root}
    missing = [
        w
        for w in windows
        if (w["instance"] or "").lower() not in known and (w["class"] or "").lower() not in known
    ]
    if missing:
        root.extend(ET.fromstring(accessibility_xml(missing)))
    return ET.tostring(root, encoding="unicode")


def h_accessibility(req: Request) -> Reply:
    tree = atspi_xml()
    try:
        with XSession() as x:
            windows = x.windows()
        tree = accessibility_xml(windows) if tree is None else merge_windows(tree, windows)
    except Exception as e:
        return Reply({"status": "error", "message": str(e)}, status=500)
    return Reply({"AT": tree})


def h_run_python(req: Request) -> Reply:
    code = req.json().get("code")
    if not code:
        return Reply({"status": "error", "message": "Code not supplied!"}, status=400)
    python = shutil.which("python3") or sys.executable
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(code)
    try:
        result = subprocess.run(
            [python, fh.name],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        return Reply(
            {
                "status": "error",
                "message": "Execution timeout: Code took too long to execute",
                "error": "TimeoutExpired",
                "need_more": False,
                "output": None,
            },
            status=500,
        )
    finally:
        os.unlink(fh.name)
    error = result.stderr
    if result.returncode != 0 and not error:
        error = f"Process exited with code {result.returncode}"
    message = "\n".join(p for p in (result.stdout, error) if p)
    return Reply(
        {
            "status": "success" if result.returncode == 0 else "error",
            "message": message,
            "need_more": False,
            "output": result.stdout,
            "error": error,
            "return_code": result.returncode,
        }
    )


def h_run_bash_script(req: Request) -> Reply:
    data = req.json()
    script = data.get("script")
    timeout = data.get("timeout", 100)
    working_dir = data.get("working_dir")

    def failed(output: str, status: int) -> Reply:
        return Reply(
            {"status": "error", "output": output, "error": "", "returncode": -1}, status=status
        )

    if not script:
        return failed("Script not supplied!", 400)
    if working_dir:
        working_dir = os.path.expanduser(working_dir)
        if not os.path.exists(working_dir):
            return failed(f"Working directory does not exist: {working_dir}", 400)
    if "#!/bin/bash" not in script:
        script = "#!/bin/bash\n\n" + script
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as fh:
        fh.write(script)
    try:
        result = subprocess.run(
            ["/bin/bash", fh.name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=float(timeout),
            cwd=working_dir or None,
        )
    except subprocess.TimeoutExpired:
        return failed(f"Script execution timed out after {timeout} seconds", 500)
    except Exception as e:
        return failed(f"Failed to execute script: {e}", 500)
    finally:
        os.unlink(fh.name)
    return Reply(
        {
            "status": "success" if result.returncode == 0 else "error",
            "output": result.stdout,
            "error": "",
            "returncode": result.returncode,
        }
    )


ROUTES: dict[tuple[str, str], Callable[[Request], Reply]] = {
    ("GET", "/screenshot"): h_screenshot,
    ("POST", "/execute"): h_execute,
    ("POST", "/setup/execute"): h_execute,
    ("POST", "/setup/launch"): h_launch,
    ("POST", "/setup/open_file"): h_open_file,
    ("POST", "/setup/activate_window"): h_activate_window,
    ("POST", "/setup/close_window"): h_close_window,
    ("POST", "/setup/upload"): h_upload,
    ("POST", "/file"): h_file,
    ("GET", "/platform"): h_platform,
    ("GET", "/cursor_position"): h_cursor_position,
    ("POST", "/screen_size"): h_screen_size,
    ("GET", "/accessibility"): h_accessibility,
    ("POST", "/run_python"): h_run_python,
    ("POST", "/run_bash_script"): h_run_bash_script,
}


# ---------------------------------------------------------------------------- HTTP


class Request:
    """The parts of an HTTP request the handlers read (Flask's request.json / form / files)."""

    def __init__(self, content_type: str, body: bytes) -> None:
        self.content_type = content_type
        self.body = body

    def json(self) -> dict[str, Any]:
        try:
            data = json.loads(self.body or b"{}")
        except ValueError:
            raise BadRequest(
                Reply({"status": "error", "message": "the body is not JSON"}, status=400)
            ) from None
        if not isinstance(data, dict):
            raise BadRequest(
                Reply({"status": "error", "message": "the body is not a JSON object"}, status=400)
            )
        return data

    def form(self) -> dict[str, str]:
        if self.content_type.startswith("multipart/"):
            return self.multipart()[0]
        pairs = urllib.parse.parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return dict(pairs)

    def multipart(self) -> tuple[dict[str, str], dict[str, bytes]]:
        """(fields, files) of a multipart/form-data body, parsed with the email package."""
        if not self.content_type.startswith("multipart/"):
            return self.form(), {}
        head = f"Content-Type: {self.content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + self.body)
        fields: dict[str, str] = {}
        files: dict[str, bytes] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not name:
                continue
            payload = part.get_payload(decode=True) or b""
            if part.get_filename() is not None:
                files[name] = payload
            else:
                fields[name] = payload.decode(part.get_content_charset() or "utf-8", "replace")
        return fields, files


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "deskscore-controller/1"

    def _serve(self, method: str) -> None:
        path = urllib.parse.urlsplit(self.path).path
        handler = ROUTES.get((method, path))
        if handler is None:
            known = any(p == path for _, p in ROUTES)
            self._send(Reply("Method Not Allowed" if known else "Not Found", 405 if known else 404))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            self._send(Reply({"error": f"the body exceeds {MAX_BODY} bytes"}, status=413))
            return
        body = self.rfile.read(length) if length else b""
        request = Request(self.headers.get("Content-Type", ""), body)
        try:
            reply = handler(request)
        except BadRequest as e:
            reply = e.reply
        except Exception as e:  # a failure of the desktop itself, e.g. X went away
            reply = Reply(f"{type(e).__name__}: {e}", status=500)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(reply.body)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_message(self, format: str, *args: Any) -> None:
        if not self.server.quiet:  # type: ignore[attr-defined]
            sys.stderr.write(f"controller: {format % args}\n")


def check_loopback(host: str) -> str:
    """The host, if it is a loopback address; the controller runs arbitrary commands, so it
    never listens anywhere else."""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise SystemExit(f"controller: refusing to listen on {host!r}: loopback addresses only")
    return host


def serve(host: str, port: int, *, quiet: bool = False) -> ThreadingHTTPServer:
    """A started-but-not-serving server bound to (host, port); call serve_forever()."""
    server = ThreadingHTTPServer((check_loopback(host), port), Handler)
    server.daemon_threads = True
    server.quiet = quiet  # type: ignore[attr-defined]
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default=os.environ.get("DESKSCORE_CONTROLLER_HOST", "127.0.0.1"))
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("DESKSCORE_CONTROLLER_PORT", "5000"))
    )
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    args = parser.parse_args(argv)
    if "DISPLAY" not in os.environ:
        raise SystemExit("controller: DISPLAY is not set; start it inside an X session")
    server = serve(args.host, args.port, quiet=args.quiet)
    sys.stderr.write(f"controller: listening on http://{args.host}:{server.server_port}\n")
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
