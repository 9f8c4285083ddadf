"""Build the sandbox VM's disk offline: the sandbox's root file system plus a Debian kernel.

`build_rootfs` (build.py) lays down the same file system as the container image, with the same
packages and `VM_PACKAGES` added (the kernel, whose initramfs mounts the virtio disk, and `ip`
for the network); vm-init.sh is process 1 and vm-relay.py takes the controller's connections.
The folder becomes an ext4 file system without a loop mount (`mkfs.ext4 -d`), then a qcow2 base
(`qemu-img convert`); the kernel and initrd are copied out beside it for QEMU's direct boot
(`-kernel/-initrd`, no boot loader).

The result sits in the cache folder (`$XDG_CACHE_HOME/deskscore/vm/<tag>`, by default under
~/.cache) under a tag that hashes everything deciding its content (the container image's files,
this file, vm-init.sh, vm-relay.py), so an unchanged disk is never rebuilt. A build is made in a
temporary folder beside it and renamed into place, so a killed build leaves no half disk.

Needs root (debootstrap, chroot, reading every file for mkfs), debootstrap, mkfs.ext4 (e2fsprogs)
and qemu-img (qemu-utils).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deskscore.collectors.live.sandbox import build

HERE = Path(__file__).resolve().parent
VM_PACKAGES = ("linux-image-amd64", "iproute2")
"""Installed in the VM's file system on top of build.PACKAGES."""
VM_FILES = ("disk.py", "vm-init.sh", "vm-relay.py")
INIT = "/opt/deskscore/vm-init.sh"
FREE_SPACE_MB = 1024
"""Room left on the disk for what tasks write."""
PRUNED_MODULES = (
    "sound",
    "drivers/gpu",
    "drivers/media",
    "drivers/net/wireless",
    "drivers/net/ethernet",
    "drivers/infiniband",
    "drivers/staging",
    "drivers/bluetooth",
    "drivers/iio",
    "drivers/isdn",
    "net/wireless",
    "net/bluetooth",
    "net/mac80211",
)
"""Kernel module folders a virtio VM never loads (after the initramfs is made): about half the
modules' size."""
BASE = "base.qcow2"
KERNEL = "vmlinuz"
INITRD = "initrd.img"
INFO = "build.json"


@dataclass
class DiskImage:
    """A built disk: the qcow2 base, the kernel and initrd to boot it with, and its tag."""

    tag: str
    folder: Path

    @property
    def base(self) -> Path:
        return self.folder / BASE

    @property
    def kernel(self) -> Path:
        return self.folder / KERNEL

    @property
    def initrd(self) -> Path:
        return self.folder / INITRD

    def exists(self) -> bool:
        return all(p.is_file() for p in (self.base, self.kernel, self.initrd))

    def info(self) -> dict[str, object]:
        """What the build recorded (seconds per step, sizes); {} if unknown."""
        try:
            return json.loads((self.folder / INFO).read_text())
        except (OSError, ValueError):
            return {}


@dataclass
class DiskBuild:
    disk: DiskImage
    built: bool
    seconds: float
    steps: dict[str, float]
    size_bytes: int


def disk_tag() -> str:
    """12 hex digits over the container image's files and the VM's own."""
    files = [build.HERE / name for name in build.CONTENT_FILES]
    return build.content_tag([*files, *(HERE / name for name in VM_FILES)])


def cache_dir() -> Path:
    """Where VM disks are kept: $XDG_CACHE_HOME/deskscore/vm (~/.cache/deskscore/vm)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "deskscore" / "vm"


def disk_image(tag: str | None = None, cache: Path | None = None) -> DiskImage:
    """The disk of this source tree (built or not)."""
    tag = tag or disk_tag()
    return DiskImage(tag, (cache or cache_dir()) / tag)


def prune_disks(keep: DiskImage | None = None) -> list[tuple[Path, int]]:
    """Remove the cached disks of other source trees (about 1.2 GB each with the saved RAM
    state) and builds that died half-way; `keep` (default: this tree's) stays. A VM still
    running from a removed base goes on: its open files outlive the names.
    Returns (folder, bytes)."""
    keep = keep or disk_image()
    if not keep.folder.parent.is_dir():
        return []
    removed = []
    for folder in sorted(keep.folder.parent.iterdir()):
        if folder == keep.folder or folder.name.startswith(f".{keep.tag}-"):
            continue  # this tree's disk, or its build under way
        if not folder.is_dir():
            continue
        size = sum(
            f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink()
        )
        build._unmount_under(folder)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append((folder, size))
    return removed


def _size_mb(root: Path) -> int:
    """Megabytes the files under `root` take (apparent sizes; the inodes are added by mkfs)."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                total += os.lstat(path).st_size
    return total // 2**20


def prepare_boot(root: Path, out: Path) -> None:
    """Copy the kernel and initrd out of `root/boot`, make vm-init.sh process 1 material, and
    drop the kernel modules a virtio VM never loads."""
    kernels = sorted((root / "boot").glob("vmlinuz-*"))
    initrds = sorted((root / "boot").glob("initrd.img-*"))
    if not kernels or not initrds:
        raise build.BuildError("no kernel or initrd in /boot after installing linux-image-amd64")
    shutil.copyfile(kernels[-1], out / KERNEL)
    shutil.copyfile(initrds[-1], out / INITRD)
    init = root / INIT.lstrip("/")
    init.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HERE / "vm-init.sh", init)
    init.chmod(0o755)
    shutil.copyfile(HERE / "vm-relay.py", init.parent / "vm-relay.py")
    for modules in (root / "lib/modules").glob("*"):
        for sub in PRUNED_MODULES:
            shutil.rmtree(modules / "kernel" / sub, ignore_errors=True)
    (root / "etc/hostname").write_text("deskscore-vm\n")
    (root / "etc/fstab").write_text("/dev/vda / ext4 rw,noatime 0 1\n")


def ensure_disk(
    *,
    force: bool = False,
    mirror: str | None = None,
    cache: Path | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> DiskBuild:
    """The VM disk of this source tree: built unless it is in the cache (or `force`)."""
    disk = disk_image(cache=cache)
    if disk.exists() and not force:
        return DiskBuild(disk, False, 0.0, {}, disk.base.stat().st_size)
    if os.geteuid() != 0:
        raise build.BuildError("building the VM disk needs root (debootstrap and chroot)")
    for tool, package in (
        ("debootstrap", "debootstrap"),
        ("mkfs.ext4", "e2fsprogs"),
        ("qemu-img", "qemu-utils"),
    ):
        if shutil.which(tool) is None:
            raise build.BuildError(f"{tool} is not installed (Debian: apt-get install {package})")
    main_mirror, security = build.debian_mirrors()
    started = time.monotonic()
    disk.folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{disk.tag}-", dir=disk.folder.parent))
    try:
        root = work / "root"
        out = work / "disk"
        out.mkdir()
        log(f"building the VM disk {disk.tag} in {work} from {mirror or main_mirror}")
        steps = build.build_rootfs(
            root, mirror or main_mirror, security, log, extra_packages=VM_PACKAGES
        )
        t = time.monotonic()
        prepare_boot(root, out)
        raw = work / "disk.raw"
        size_mb = _size_mb(root) * 5 // 4 + FREE_SPACE_MB
        build._run(
            ["mkfs.ext4", "-q", "-F", "-L", "deskscore", "-d", str(root), str(raw), f"{size_mb}M"],
            "mkfs.ext4",
            log,
        )
        steps["mkfs"] = time.monotonic() - t
        # The tree is in the ext4 image now: freed before the qcow2 copy is written, so the
        # build never holds three copies of the system at once.
        build._unmount_under(root)
        shutil.rmtree(root)
        t = time.monotonic()
        build._run(
            ["qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(out / BASE)],
            "qemu-img convert",
            log,
        )
        steps["qcow2"] = time.monotonic() - t
        raw.unlink()
        (out / BASE).chmod(0o444)  # overlays only: the base is never written
        size = (out / BASE).stat().st_size
        seconds = time.monotonic() - started
        info = {"tag": disk.tag, "seconds": seconds, "steps": steps, "size_bytes": size}
        (out / INFO).write_text(json.dumps(info, indent=1))
        if disk.folder.exists():
            shutil.rmtree(disk.folder)
        out.rename(disk.folder)
    finally:
        build._unmount_under(work)
        shutil.rmtree(work, ignore_errors=True)
    return DiskBuild(disk, True, seconds, steps, size)


__all__ = [
    "VM_PACKAGES",
    "DiskBuild",
    "DiskImage",
    "cache_dir",
    "disk_image",
    "disk_tag",
    "ensure_disk",
    "prune_disks",
]
