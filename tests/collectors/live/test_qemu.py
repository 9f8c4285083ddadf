"""The qemu provider: its command line, its memory bound, the disk's boot files, and the
removal of VMs whose owner died (on real QEMU processes without a guest)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskscore.collectors.live.providers import owner_label, provider_from_spec
from deskscore.collectors.live.qemu import (
    QemuProvider,
    cleanup_vm_leftovers,
    kvm_problem,
    parallel_bound,
    qmp,
)
from deskscore.collectors.live.sandbox import disk
from deskscore.pipelines.cli.collect import _check_vm
from deskscore.pipelines.cli.main import main

from .conftest import unavailable


def test_qemu_specs_name_the_vm_provider_and_its_reset() -> None:
    vm = provider_from_spec("qemu", run_id="r1")
    assert isinstance(vm, QemuProvider) and (vm.reset, vm.run_id) == ("snapshot", "r1")
    assert provider_from_spec("qemu:boot").reset == "boot"
    with pytest.raises(ValueError, match="reset"):
        provider_from_spec("qemu:revert")


def test_the_controller_is_forwarded_from_loopback_only_and_the_guest_has_no_way_out(
    tmp_path: Path,
) -> None:
    image = disk.DiskImage("t", tmp_path)
    cmd = QemuProvider(image, accel="tcg", memory_mb=768).command(tmp_path / "vm", 41234)
    netdev = cmd[cmd.index("-netdev") + 1]
    assert "hostfwd=tcp:127.0.0.1:41234-10.0.2.15:5000" in netdev
    assert netdev.count("hostfwd") == 1 and "restrict=on" in netdev
    assert cmd[cmd.index("-m") + 1] == "768"
    assert cmd[cmd.index("-machine") + 1] == "q35,accel=tcg"
    assert cmd[cmd.index("-kernel") + 1] == str(tmp_path / "vmlinuz")
    drive = cmd[cmd.index("-drive") + 1]
    assert drive.startswith(f"file={tmp_path / 'vm' / 'overlay.qcow2'},")  # never the base
    assert "-incoming" not in cmd
    open_net = QemuProvider(image, accel="kvm", network=True).command(tmp_path, 1, tmp_path / "s")
    assert "restrict" not in open_net[open_net.index("-netdev") + 1]
    assert open_net[open_net.index("-incoming") + 1] == f"exec:cat {tmp_path / 's'}"


def test_parallel_vms_are_bounded_by_available_memory() -> None:
    assert parallel_bound(4, 1000, available_mb=10_000) == 4
    assert parallel_bound(16, 1000, available_mb=10_000) == 8  # 80 % of 10 GB
    assert parallel_bound(3, 4000, available_mb=2_000) == 1  # one at least
    assert parallel_bound(5, 1000, available_mb=0) == 5  # unknown: as asked


def test_pvm_kvm_is_not_taken_for_hardware_kvm(tmp_path: Path) -> None:
    for module in ("kvm", "kvm_pvm"):
        (tmp_path / "pvm" / module).mkdir(parents=True)
        (tmp_path / "amd" / module.replace("pvm", "amd")).mkdir(parents=True)
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError:  # no KVM for this process at all: said so, whatever the modules
        assert "cannot be opened" in (kvm_problem(tmp_path / "amd") or "")
        return
    assert "PVM" in (kvm_problem(tmp_path / "pvm") or "")
    assert kvm_problem(tmp_path / "amd") is None


def test_boot_files_are_copied_out_and_unused_modules_dropped(tmp_path: Path) -> None:
    root, out = tmp_path / "root", tmp_path / "out"
    modules = root / "lib/modules/6.1.0-1-amd64/kernel"
    for sub in ("sound/core", "drivers/gpu/drm", "drivers/net"):
        (modules / sub).mkdir(parents=True)
    (modules / "drivers/net/virtio_net.ko").write_bytes(b"ko")
    (modules / "sound/core/snd.ko").write_bytes(b"ko")
    (root / "boot").mkdir()
    (root / "boot/vmlinuz-6.1.0-1-amd64").write_bytes(b"kernel")
    (root / "boot/initrd.img-6.1.0-1-amd64").write_bytes(b"initrd")
    (root / "etc").mkdir()
    out.mkdir()
    disk.prepare_boot(root, out)
    assert (out / "vmlinuz").read_bytes() == b"kernel"
    assert (out / "initrd.img").read_bytes() == b"initrd"
    init = root / disk.INIT.lstrip("/")
    assert init.read_text().startswith("#!/bin/sh") and os.access(init, os.X_OK)
    assert (modules / "drivers/net/virtio_net.ko").exists()
    assert not (modules / "sound").exists() and not (modules / "drivers/gpu").exists()


def test_a_missing_disk_is_reported_with_the_command_that_builds_it(tmp_path: Path) -> None:
    if shutil.which("qemu-system-x86_64") is None:
        unavailable("QEMU is not installed (apt-get install qemu-system-x86 qemu-utils)")
    vm = QemuProvider(disk.DiskImage("abc", tmp_path / "none"), reset="boot")
    with pytest.raises(Exception, match="sandbox build --vm"):
        vm.start()


def test_collect_on_qemu_without_a_disk_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plans = Path(__file__).resolve().parents[3] / "datasets" / "sandbox_plans.json"
    code = main(["collect", "--provider", "qemu", "--agent", f"scripted:{plans}",
                 "--warehouse", str(tmp_path / "wh")])  # fmt: skip
    assert code == 2
    assert "is not built; build it with `deskscore sandbox build --vm`" in capsys.readouterr().err
    assert not (tmp_path / "wh").exists() or not any((tmp_path / "wh").rglob("*.parquet"))


def test_parallel_vms_beyond_the_memory_are_lowered_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("base.qcow2", "vmlinuz", "initrd.img"):
        (tmp_path / name).write_bytes(b"")
    small = QemuProvider(disk.DiskImage("t", tmp_path), memory_mb=256)
    assert _check_vm(small, 1) == 1 and capsys.readouterr().err == ""
    huge = QemuProvider(disk.DiskImage("t", tmp_path), memory_mb=10**8)
    assert _check_vm(huge, 4) == 1
    assert "--parallel 4 lowered to 1" in capsys.readouterr().err


def _bare_qemu(folder: Path, owner: str) -> subprocess.Popen:
    """A QEMU with no machine (nothing to boot, starts at once) recorded as a VM of `owner`."""
    folder.mkdir(parents=True)
    proc = subprocess.Popen(
        ["qemu-system-x86_64", "-machine", "none", "-nodefaults", "-display", "none",
         "-name", f"deskscore-{folder.name}", "-qmp",
         f"unix:{folder / 'qmp.sock'},server=on,wait=off", "-pidfile", str(folder / "qemu.pid")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    (folder / "vm.json").write_text(json.dumps({"owner": owner, "pid": proc.pid}))
    deadline = time.monotonic() + 10
    while not (folder / "qmp.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def test_vms_of_dead_owners_are_stopped_and_removed_and_live_ones_kept(tmp_path: Path) -> None:
    if shutil.which("qemu-system-x86_64") is None:
        unavailable("QEMU is not installed (apt-get install qemu-system-x86 qemu-utils)")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead_owner = f"{socket.gethostname()}:{gone.pid}:1"
    orphan = _bare_qemu(tmp_path / "dead-1", dead_owner)
    kept = _bare_qemu(tmp_path / "live-1", owner_label())
    try:
        assert qmp(tmp_path / "live-1" / "qmp.sock", {"execute": "query-status"})[0]["status"]
        assert cleanup_vm_leftovers(root=tmp_path) == ["dead-1"]
        assert orphan.wait(timeout=10) == 0  # QMP quit: a clean exit, not a kill
        assert not (tmp_path / "dead-1").exists()
        assert kept.poll() is None and (tmp_path / "live-1").exists()
        assert cleanup_vm_leftovers(root=tmp_path, everything=True) == ["live-1"]
        assert kept.wait(timeout=10) == 0 and not any(tmp_path.iterdir())
    finally:
        for proc in (orphan, kept):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
