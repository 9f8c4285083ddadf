"""Build the sandbox image offline: Debian bookworm from the Debian mirror, no registry.

debootstrap lays down a minimal Debian (`--variant=minbase`) in a folder, apt inside it adds the
desktop (Xvfb, the JWM window manager, xterm, the l3afpad text editor, python3 with python-xlib,
Pillow and tkinter, xdotool), pip adds pyautogui (pinned, pure Python), the controller and the
session script are copied in, and the folder is streamed as a tar into the engine's import
(`docker import`), with the entrypoint and a non-root user set on the way in.

The image's tag is a hash of everything that decides its content (this file, the controller,
the session script and the desktop's configuration), so `ensure_image` skips the build when an
image of the same content exists, and a change to any of them gives a new tag.

Needs root (debootstrap, chroot), debootstrap, and a reachable Debian mirror and package index
(PyPI or a pip mirror) for pyautogui; takes about two minutes on two cores.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPOSITORY = "deskscore-sandbox"
SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SECURITY_MIRROR = "http://deb.debian.org/debian-security"
USER = "user"
"""The desktop's user, as on OSWorld's VMs (home /home/user)."""
PACKAGES = (
    "xvfb",
    "jwm",
    "xterm",
    "l3afpad",
    "python3",
    "python-is-python3",  # OSWorld's client runs `python -c ...`
    "python3-xlib",
    "python3-pil",
    "python3-tk",  # pyautogui imports mouseinfo, which exits the interpreter without tkinter
    "xdotool",
    "fonts-dejavu-core",
    "dbus-x11",  # the session bus GTK's settings backend asks for, without systemd
)
PIP_PACKAGES = (
    "pyautogui==0.9.54",
    "pymsgbox==2.0.1",
    "pytweening==1.2.0",
    "pyscreeze==1.0.1",
    "pygetwindow==0.0.9",
    "pyrect==0.2.0",
    "mouseinfo==0.1.3",
    "pyperclip==1.11.0",
)
"""pyautogui and its dependencies, pinned; all pure Python (Debian has no pyautogui)."""
DESKTOP_PACKAGES = (
    *PACKAGES,
    "libreoffice-calc",
    "libreoffice-writer",
    "libreoffice-impress",
    "libreoffice-gtk3",  # LibreOffice's widgets reach AT-SPI through GTK
    "chromium",
    "gimp",
    "librsvg2-common",  # the SVG loader GIMP's icons need
    "vlc",
    "thunderbird",
    "mousepad",
    "pcmanfm",
    "fonts-liberation2",  # the fonts office documents name
    "at-spi2-core",  # the accessibility bus
    "libatk-adaptor",  # GTK 3's bridge to it
    "libgail-common",  # GTK 2's (GIMP, pcmanfm)
    "python3-pyatspi",  # the controller's reader of the tree
)
"""The desktop variant: OSWorld's applications (Debian has no VS Code: mousepad edits code)."""
IMAGE_FILES = ("controller.py", "desktop.py", "atspi_tree.py", "jwmrc", "Xresources")
"""Copied into /opt/deskscore in the image."""
CONTENT_FILES = ("build.py", *IMAGE_FILES)
"""What the content tag hashes."""
DPKG_EXCLUDES = """\
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
"""
LABEL_IMAGE = "deskscore.sandbox.image"


@dataclass(frozen=True)
class Variant:
    """One image the build makes: its repository, packages and environment."""

    name: str
    repository: str
    packages: tuple[str, ...]
    env: tuple[str, ...] = ()
    """`ENV` lines of the image beyond the common ones."""
    files: tuple[tuple[str, str], ...] = ()
    """(path under the root, text) of configuration files the variant adds."""


CHROMIUM_FLAGS = (
    "--no-sandbox",  # a container's seccomp profile refuses the user namespaces it needs
    "--test-type",  # and no bar about that flag over every page
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-breakpad",
    "--no-pings",
    "--proxy-server=127.0.0.1:9",  # pages load from nowhere: the desktop reaches no network
    "--force-renderer-accessibility",
)
THUNDERBIRD_PREFS = (
    ("network.proxy.type", 1),
    ("network.proxy.share_proxy_settings", True),
    ("network.proxy.http", '"127.0.0.1"'),
    ("network.proxy.http_port", 9),
    ("network.proxy.socks_remote_dns", True),
    ("app.update.enabled", False),
    ("extensions.update.enabled", False),
    ("mail.provider.enabled", False),
    ("mailnews.auto_config.fetchFromISP.enabled", False),
    ("datareporting.policy.dataSubmissionEnabled", False),
    ("toolkit.telemetry.enabled", False),
)
"""Defaults (not the profile's prefs.js, which tasks read): no connection leaves the desktop."""
DESKTOP_FILES = (
    (
        "etc/chromium.d/deskscore",
        f'export CHROMIUM_FLAGS="$CHROMIUM_FLAGS {" ".join(CHROMIUM_FLAGS)}"\n',
    ),
    (
        "etc/thunderbird/pref/deskscore.js",
        "".join(
            f'pref("{k}", {str(v).lower() if isinstance(v, bool) else v});\n'
            for k, v in THUNDERBIRD_PREFS
        ),
    ),
)
SANDBOX = Variant("sandbox", REPOSITORY, PACKAGES, ("DESKSCORE_OPENER=l3afpad",))
DESKTOP = Variant(
    "desktop",
    "deskscore-desktop",
    DESKTOP_PACKAGES,
    (
        "DESKSCORE_OPENER=xdg-open",
        "DESKSCORE_ACCESSIBILITY=1",  # desktop.py starts the accessibility bus
        "DESKSCORE_SCREEN=1920x1080x24",  # OSWorld's screen
        # Thunderbird opens the profile profiles.ini names Default=1 (the one a task sets up),
        # not a new one of its own per installation.
        "MOZ_LEGACY_PROFILES=1",
    ),
    DESKTOP_FILES,
)
VARIANTS = {v.name: v for v in (SANDBOX, DESKTOP)}


class BuildError(RuntimeError):
    """The image could not be built; the message says which step failed and why."""


def content_tag(files: Iterable[Path] | None = None, variant: Variant = SANDBOX) -> str:
    """12 hex digits of SHA-256 over the names and bytes of the files that make the image
    (and the variant's name, for any but the sandbox)."""
    paths = list(files) if files is not None else [HERE / name for name in CONTENT_FILES]
    h = hashlib.sha256()
    if variant is not SANDBOX:
        h.update(variant.name.encode() + b"\0")
    for path in sorted(paths, key=lambda p: p.name):
        h.update(path.name.encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:12]


def image_name(tag: str | None = None, variant: Variant = SANDBOX) -> str:
    """`deskscore-sandbox:<content tag>` of this source tree (`deskscore-desktop:...` for the
    desktop variant)."""
    return f"{variant.repository}:{tag or content_tag(variant=variant)}"


def _apt_source_entries(root: str = "/") -> list[tuple[str, list[str]]]:
    """(URI, suites) of the host's apt sources, one-line and deb822 formats."""
    entries: list[tuple[str, list[str]]] = []
    base = os.path.join(root, "etc/apt")
    for path in [os.path.join(base, "sources.list"), *glob.glob(f"{base}/sources.list.d/*")]:
        try:
            text = Path(path).read_text(errors="replace")
        except OSError:
            continue
        if path.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    if line.startswith("#") or ":" not in line:
                        continue
                    key, _, value = line.partition(":")
                    fields[key.strip().lower()] = value.strip()
                if "deb" in fields.get("types", "").split():
                    for uri in fields.get("uris", "").split():
                        entries.append((uri, fields.get("suites", "").split()))
        else:
            for line in text.splitlines():
                line = re.sub(r"\[[^\]]*\]", "", line.split("#", 1)[0]).split()
                if len(line) >= 3 and line[0] == "deb":
                    entries.append((line[1], [line[2]]))
    return entries


def debian_mirrors(root: str = "/") -> tuple[str, str]:
    """(main, security) Debian mirrors: the ones apt on this machine is configured with,
    else deb.debian.org. A mirror of the archive has `<uri>/dists/<suite>`; the security
    archive is the entry whose suite ends in -security."""
    main = security = None
    for uri, suites in _apt_source_entries(root):
        uri = uri.rstrip("/")
        for suite in suites:
            if suite.endswith("-security") and security is None:
                security = uri
            elif (
                suite.split("-")[0] in {SUITE, "stable", "bookworm"}
                and main is None
                and uri.startswith(("http://", "https://"))
                and "debian" in uri
            ):
                main = uri
    return main or DEFAULT_MIRROR, security or DEFAULT_SECURITY_MIRROR


def _run(cmd: list[str], step: str, log: Callable[[str], None], **kw: Any) -> None:
    """Run one build command; on failure raise with the tail of its output."""
    log(f"  $ {' '.join(cmd)}")
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise BuildError(f"{step} failed (exit {proc.returncode}):\n{tail}")


def _chroot(root: Path, *cmd: str) -> list[str]:
    env = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive"]
    return ["chroot", str(root), *env, "LANG=C.UTF-8", *cmd]


def _python_dir(root: Path) -> str:
    found = sorted(p.name for p in (root / "usr/lib").glob("python3.*") if p.is_dir())
    if not found:
        raise BuildError("no python3 in the root file system after apt")
    return found[-1]


def build_rootfs(
    root: Path,
    mirror: str,
    security: str,
    log: Callable[[str], None],
    packages: Iterable[str] = PACKAGES,
    files: Iterable[tuple[str, str]] = (),
    extra_packages: Iterable[str] = (),
) -> dict[str, float]:
    """Lay down the sandbox's file system in `root` with Debian's `packages` (and
    `extra_packages`: the VM disk adds a kernel) and the configuration `files` ((path under
    root, text)); returns seconds per step."""
    times: dict[str, float] = {}
    t = time.monotonic()
    _run(
        ["debootstrap", "--variant=minbase", "--components=main", SUITE, str(root), mirror],
        "debootstrap",
        log,
    )
    times["debootstrap"] = time.monotonic() - t

    t = time.monotonic()
    (root / "etc/apt/sources.list").write_text(
        f"deb {mirror} {SUITE} main\n"
        f"deb {mirror} {SUITE}-updates main\n"
        f"deb {security} {SUITE}-security main\n"
    )
    (root / "etc/dpkg/dpkg.cfg.d/deskscore-nodoc").write_text(DPKG_EXCLUDES)
    policy = root / "usr/sbin/policy-rc.d"  # services are never started inside the build
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    if os.path.exists("/etc/resolv.conf"):
        shutil.copyfile("/etc/resolv.conf", root / "etc/resolv.conf")
    _run(_chroot(root, "apt-get", "update", "-q"), "apt-get update", log)
    _run(
        _chroot(
            root,
            "apt-get",
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
            *packages,
            *extra_packages,
        ),
        "apt-get install",
        log,
    )
    _run(_chroot(root, "apt-get", "clean"), "apt-get clean", log)
    times["apt"] = time.monotonic() - t

    t = time.monotonic()
    site = root / "usr/local/lib" / _python_dir(root) / "dist-packages"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            "--target",
            str(site),
            *PIP_PACKAGES,
        ],
        "pip install pyautogui",
        log,
    )
    for cache in site.glob("*/__pycache__"):
        shutil.rmtree(cache)
    _run(
        _chroot(root, "python3", "-m", "compileall", "-q", "/usr/local/lib"),
        "compile pyautogui",
        log,
    )
    times["pip"] = time.monotonic() - t

    t = time.monotonic()
    _run(
        _chroot(root, "useradd", "--create-home", "--uid", "1000", "--shell", "/bin/bash", USER),
        "useradd",
        log,
    )
    home = root / "home" / USER
    for folder in ("Desktop", "Documents"):
        (home / folder).mkdir(exist_ok=True)
        os.chown(home / folder, 1000, 1000)
    opt = root / "opt/deskscore"
    opt.mkdir(parents=True, exist_ok=True)
    for name in IMAGE_FILES:
        shutil.copyfile(HERE / name, opt / name)
    for relative, text in files:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    _run(_chroot(root, "python3", "-m", "compileall", "-q", "/opt/deskscore"), "compile", log)
    # What an image does not need: documentation, translations, package lists, logs.
    for pattern in (
        "usr/share/doc/*",
        "usr/share/man/*",
        "usr/share/info/*",
        "var/lib/apt/lists/*",
        "var/cache/apt/*.bin",
        "var/log/*",
        "tmp/*",
    ):
        for path in root.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    for path in (root / "usr/share/locale").glob("*"):
        if path.name != "locale.alias":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    (root / "etc/resolv.conf").write_text("")
    times["configure"] = time.monotonic() - t
    return times


def import_image(
    client: Any,
    root: Path,
    name: str,
    log: Callable[[str], None],
    variant: Variant = SANDBOX,
) -> None:
    """Stream `root` as a tar into the engine (`docker import`), with the image settings."""
    repository, tag = name.rsplit(":", 1)
    changes = [
        'ENTRYPOINT ["python3", "/opt/deskscore/desktop.py"]',
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        f"ENV HOME=/home/{USER}",
        "ENV DISPLAY=:0",
        *(f"ENV {line}" for line in variant.env),
        f"USER {USER}",
        f"WORKDIR /home/{USER}",
        f"LABEL {LABEL_IMAGE}={tag}",
    ]
    log(f"  importing {name}")
    excludes = ["--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*"]
    tar = subprocess.Popen(
        ["tar", "-C", str(root), "--numeric-owner", *excludes, "-cf", "-", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        client.api.import_image(
            src=tar.stdout, repository=repository, tag=tag, changes=changes, stream_src=True
        )
    finally:
        assert tar.stdout is not None
        tar.stdout.close()
        err = tar.stderr.read().decode("utf-8", "replace") if tar.stderr else ""
        code = tar.wait()
    if code != 0:
        raise BuildError(f"tar of the root file system failed (exit {code}): {err.strip()}")
    client.images.get(name)  # raises if the import did not produce the image


def _unmount_under(folder: Path) -> None:
    """Unmount whatever a failed step left mounted below `folder` (debootstrap mounts /proc
    and /sys in the target), so removing the folder never reaches into the host's."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return
    prefix = str(folder.resolve()) + "/"
    points = [line.split()[1] for line in mounts if len(line.split()) > 1]
    for point in sorted((p for p in points if p.startswith(prefix)), reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


@dataclass
class BuildResult:
    image: str
    built: bool
    seconds: float
    steps: dict[str, float]
    size_bytes: int


def image_exists(client: Any, name: str) -> bool:
    import docker.errors

    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False


def ensure_image(
    client: Any | None = None,
    *,
    force: bool = False,
    mirror: str | None = None,
    workdir: str | None = None,
    log: Callable[[str], None] = lambda _msg: None,
    variant: Variant = SANDBOX,
) -> BuildResult:
    """The image of this source tree: built unless it already exists (or `force`)."""
    import docker

    client = client or docker.from_env()
    name = image_name(variant=variant)
    if not force and image_exists(client, name):
        size = client.images.get(name).attrs.get("Size", 0)
        return BuildResult(name, False, 0.0, {}, size)
    if os.geteuid() != 0:
        raise BuildError("building the sandbox image needs root (debootstrap and chroot)")
    if shutil.which("debootstrap") is None:
        raise BuildError(
            "debootstrap is not installed (Debian: apt-get install debootstrap); it lays down "
            "the image's file system"
        )
    main_mirror, security = debian_mirrors()
    if mirror:
        main_mirror = mirror
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="deskscore-sandbox-", dir=workdir))
    try:
        root = work / "root"
        log(f"building {name} in {root} from {main_mirror}")
        steps = build_rootfs(root, main_mirror, security, log, variant.packages, variant.files)
        t = time.monotonic()
        import_image(client, root, name, log, variant)
        steps["import"] = time.monotonic() - t
        client.images.get(name).tag(variant.repository, "latest")
    finally:
        _unmount_under(work)
        shutil.rmtree(work, ignore_errors=True)
    size = client.images.get(name).attrs.get("Size", 0)
    return BuildResult(name, True, time.monotonic() - started, steps, size)


def prune_images(client: Any, variant: Variant = SANDBOX) -> list[tuple[str, int]]:
    """Remove the images of `variant` built from other source trees, each 0.5-2 GB, which a
    rebuild leaves behind; one that a container still uses is kept. Returns (name, bytes)."""
    import docker.errors

    current = client.images.get(image_name(variant=variant)).id
    used = {c.image.id for c in client.containers.list(all=True) if c.image is not None}
    removed = []
    for image in client.images.list(name=variant.repository):
        if image.id == current or image.id in used:
            continue
        tags = [t for t in image.tags if t.startswith(variant.repository + ":")]
        try:
            for tag in tags:
                client.images.remove(tag, noprune=False)
        except docker.errors.APIError:
            continue  # in use since the listing: kept
        removed.append((", ".join(tags), int(image.attrs.get("Size", 0))))
    return removed


__all__ = [
    "CONTENT_FILES",
    "DESKTOP",
    "DESKTOP_PACKAGES",
    "PACKAGES",
    "PIP_PACKAGES",
    "REPOSITORY",
    "SANDBOX",
    "VARIANTS",
    "BuildError",
    "BuildResult",
    "Variant",
    "content_tag",
    "debian_mirrors",
    "ensure_image",
    "image_exists",
    "image_name",
    "prune_images",
]
