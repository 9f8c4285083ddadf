"""The controller speaks OSWorld's protocol on a real X display: each test runs on the host
desktop (Xvfb on this machine) and in a sandbox container."""

from __future__ import annotations

import io
import shutil
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from PIL import Image, ImageChops

from deskscore.collectors.live.providers import HostProvider
from deskscore.collectors.live.sandbox import controller

ST = "{https://accessibility.ubuntu.example.org/ns/state}"
CP = "{https://accessibility.ubuntu.example.org/ns/component}"


def screenshot(http: Any, url: str) -> Image.Image:
    reply = http.call(url, "GET", "/screenshot")
    assert reply.status == 200
    assert reply.headers["Content-Type"] == "image/png"
    assert reply.body[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(reply.body))
    image.load()
    return image.convert("RGB")


def frames(http: Any, url: str) -> list[ET.Element]:
    reply = http.call(url, "GET", "/accessibility")
    assert reply.status == 200
    tree = ET.fromstring(reply.json()["AT"])
    assert tree.tag == "desktop-frame"
    return [f for app in tree for f in app]


def window_titled(http: Any, url: str, text: str) -> ET.Element | None:
    for frame in frames(http, url):
        if text in frame.get("name", ""):
            return frame
    return None


def pair(text: str) -> tuple[int, int]:
    """An "(x, y)" attribute, as OSWorld's trees write coordinates and sizes."""
    a, b = text.strip("()").split(",")
    return int(a), int(b)


def shown_window(http: Any, url: str, text: str) -> ET.Element | None:
    """The first window whose title holds `text` once it is mapped at its final size."""
    for frame in frames(http, url):
        width, _ = pair(frame.get(f"{CP}size"))
        if text in frame.get("name", "") and frame.get(f"{ST}showing") == "true" and width > 50:
            return frame
    return None


def centre(frame: ET.Element) -> tuple[int, int]:
    x, y = pair(frame.get(f"{CP}screencoord"))
    w, h = pair(frame.get(f"{CP}size"))
    return x + w // 2, y + h // 2


def test_screenshot_is_a_png_of_the_whole_screen(desktop: Any, http: Any) -> None:
    size = http.call(desktop.base_url, "POST", "/screen_size").json()
    image = screenshot(http, desktop.base_url)
    assert image.size == (size["width"], size["height"]) == (1280, 720)
    # The window manager's tray is drawn over the background: more than one colour.
    assert len(image.getcolors(maxcolors=1 << 16) or range(1 << 16)) > 2


def test_platform_is_linux(desktop: Any, http: Any) -> None:
    reply = http.call(desktop.base_url, "GET", "/platform")
    assert (reply.status, reply.text) == (200, "Linux")


def test_cursor_position_follows_pyautogui(desktop: Any, http: Any) -> None:
    for x, y in ((321, 123), (40, 650)):
        result = http.pyautogui(desktop.base_url, f"pyautogui.moveTo({x}, {y})").json()
        assert result["returncode"] == 0, result["error"]
        assert http.call(desktop.base_url, "GET", "/cursor_position").json() == [x, y]


def test_typing_into_a_launched_terminal_runs_the_command_and_changes_the_screen(
    desktop: Any, http: Any
) -> None:
    url = desktop.base_url
    before = screenshot(http, url)
    reply = http.call(
        url, "POST", "/setup/launch", json_body={"command": ["xterm"], "shell": False}
    )
    assert (reply.status, reply.text) == (200, "xterm launched successfully")
    frame = http.wait_for(lambda: shown_window(http, url, ""), "an xterm window on the screen")
    x, y = centre(frame)
    typed = http.pyautogui(
        url,
        f"pyautogui.click({x}, {y}); "
        "pyautogui.write('echo typed by pyautogui > ~/typed.txt', interval=0.01); "
        "pyautogui.press('enter')",
    ).json()
    assert typed["returncode"] == 0, typed["error"]

    def content() -> bytes | None:
        reply = http.call(url, "POST", "/file", form={"file_path": "~/typed.txt"})
        return reply.body if reply.status == 200 and reply.body else None

    assert http.wait_for(content, "the file the typed command writes") == b"typed by pyautogui\n"
    after = screenshot(http, url)
    changed = ImageChops.difference(before, after).convert("L").point(lambda v: v > 16)
    assert sum(changed.histogram()[1:]) > 50_000  # a terminal window appeared: a big change
    assert before.getpixel((x, y)) != after.getpixel((x, y))


def test_execute_reports_output_error_and_returncode(desktop: Any, http: Any) -> None:
    url = desktop.base_url
    shell = http.call(
        url,
        "POST",
        "/execute",
        json_body={"command": "echo out; echo err >&2; exit 3", "shell": True},
    )
    assert shell.status == 200
    assert shell.json() == {
        "status": "success",
        "output": "out\n",
        "error": "err\n",
        "returncode": 3,
    }
    # A string without shell is split like a command line; ~/ is the desktop user's home.
    split = http.call(url, "POST", "/setup/execute", json_body={"command": "printf %s a 'b c'"})
    assert split.json()["output"] == "ab c"
    home = http.call(url, "POST", "/execute", json_body={"command": ["ls", "-d", "~/"]})
    expected_home = str(desktop.home) if isinstance(desktop, HostProvider) else "/home/user"
    assert home.json()["output"].strip().rstrip("/") == expected_home
    missing = http.call(url, "POST", "/execute", json_body={"command": ["/no/such/program"]})
    assert missing.status == 500
    assert missing.json()["status"] == "error"
    assert "/no/such/program" in missing.json()["message"]


def test_uploaded_bytes_come_back_from_file(desktop: Any, http: Any) -> None:
    url = desktop.base_url
    data = bytes(range(256)) * 40 + b"\r\n--not-a-boundary\r\n"
    up = http.call(
        url,
        "POST",
        "/setup/upload",
        form={"file_path": "~/Documents/sub/in.bin"},
        files={"file_data": ("in.bin", data)},
    )
    assert (up.status, up.text) == (200, f"File Uploaded: {len(data)} bytes")
    back = http.call(url, "POST", "/file", form={"file_path": "~/Documents/sub/in.bin"})
    assert back.status == 200 and back.body == data
    missing = http.call(url, "POST", "/file", form={"file_path": "~/nothing-here"})
    assert (missing.status, missing.json()) == (404, {"error": "File not found"})
    no_field = http.call(url, "POST", "/file", form={})
    assert (no_field.status, no_field.json()) == (400, {"error": "file_path is required"})
    no_data = http.call(url, "POST", "/setup/upload", form={"file_path": "~/x"}, files={})
    assert no_data.status == 400


def test_windows_are_activated_and_closed_by_title(desktop: Any, http: Any) -> None:
    url = desktop.base_url
    for title in ("first-window", "second-window"):
        # sh, not bash: Debian's .bashrc would retitle the window after the prompt.
        command = ["xterm", "-T", title, "-e", "sh"]
        http.call(url, "POST", "/setup/launch", json_body={"command": command})
        http.wait_for(lambda t=title: shown_window(http, url, t), f"window {title}")
    reply = http.call(
        url, "POST", "/setup/activate_window", json_body={"window_name": "FIRST-window"}
    )
    assert (reply.status, reply.text) == (200, "Window activated successfully")
    http.wait_for(
        lambda: window_titled(http, url, "first-window").get(f"{ST}active") == "true",
        "first-window active",
    )
    strict = http.call(
        url, "POST", "/setup/close_window", json_body={"window_name": "second", "strict": True}
    )
    assert strict.status == 404  # strict: the whole title, case-sensitive
    closed = http.call(
        url, "POST", "/setup/close_window", json_body={"window_name": "second-window"}
    )
    assert closed.status == 200
    http.wait_for(lambda: window_titled(http, url, "second-window") is None, "second-window closed")
    assert window_titled(http, url, "first-window") is not None


def test_run_bash_script_and_run_python_reply_like_osworld(desktop: Any, http: Any) -> None:
    url = desktop.base_url
    bash = http.call(
        url, "POST", "/run_bash_script", json_body={"script": "echo a; echo b >&2; exit 4"}
    ).json()
    assert bash == {"status": "error", "output": "a\nb\n", "error": "", "returncode": 4}
    py = http.call(url, "POST", "/run_python", json_body={"code": "print(6 * 7)"}).json()
    assert (py["status"], py["output"], py["return_code"]) == ("success", "42\n", 0)
    empty = http.call(url, "POST", "/run_python", json_body={})
    assert empty.status == 400


def test_open_file_opens_it_and_waits_for_its_window(desktop: Any, http: Any) -> None:
    if isinstance(desktop, HostProvider) and not shutil.which("l3afpad"):
        pytest.skip("l3afpad is not installed on this machine (apt-get install l3afpad)")
    url = desktop.base_url
    http.call(
        url,
        "POST",
        "/setup/upload",
        form={"file_path": "~/Documents/letter.txt"},
        files={"file_data": ("letter.txt", b"Dear reader,\nsee you on Monday.\n")},
    )
    reply = http.call(url, "POST", "/setup/open_file", json_body={"path": "~/Documents/letter.txt"})
    assert (reply.status, reply.text) == (200, "File opened and window activated successfully")
    window = window_titled(http, url, "letter.txt")
    assert window is not None  # the editor's window, titled after the file, is up
    assert window.get(f"{ST}active") == "true"


def test_open_file_of_a_missing_path_is_404(desktop: Any, http: Any) -> None:
    reply = http.call(
        desktop.base_url, "POST", "/setup/open_file", json_body={"path": "~/no-such-file.txt"}
    )
    assert (reply.status, reply.text) == (404, "Application/file not found: ~/no-such-file.txt")


def test_unknown_paths_and_methods_are_refused(desktop: Any, http: Any) -> None:
    assert http.call(desktop.base_url, "GET", "/no-such-endpoint").status == 404
    assert http.call(desktop.base_url, "GET", "/execute").status == 405
    bad = http.call(desktop.base_url, "POST", "/execute", form={"command": "ls"})
    assert bad.status == 400


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.2", "example.org"])
def test_controller_refuses_to_listen_beyond_loopback(host: str) -> None:
    with pytest.raises(SystemExit, match="loopback addresses only"):
        controller.check_loopback(host)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_controller_listens_on_loopback(host: str) -> None:
    assert controller.check_loopback(host) == host


def test_window_matching_follows_wmctrl() -> None:
    windows = [
        {"title": "notes.txt - L3afpad", "instance": "l3afpad", "class": "L3afpad"},
        {"title": "user@vm: ~", "instance": "xterm", "class": "XTerm"},
    ]
    assert controller.match_windows(windows, "NOTES") == windows[:1]
    assert controller.match_windows(windows, "NOTES", strict=True) == []
    assert controller.match_windows(windows, "user@vm: ~", strict=True) == windows[1:]
    assert controller.match_windows(windows, "xterm", by_class=True) == windows[1:]
