"""`deskscore collect` on the qemu provider: the same sandbox tasks and scripted agent as on the
docker provider, each episode in a VM of its own, recording the same verdicts and steps."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live.client import Controller
from deskscore.collectors.live.providers import cleanup_leftovers
from deskscore.collectors.live.qemu import QemuProvider, kvm_problem, runtime_dir
from deskscore.collectors.live.sandbox.build import BuildError
from deskscore.collectors.live.sandbox.disk import DiskImage, disk_image, ensure_disk
from deskscore.collectors.live.tasks import load_tasks
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main

from .conftest import proc_address, socket_inodes, unavailable

ROOT = Path(__file__).resolve().parents[3]
PICKED = ("L1_os_count_lines", "L2_os_backup_config", "INTERACTIVE_os_greeting_change")
"""Shell commands typed into the terminal, two checks under `conj`, a simulated user's new
instruction."""
ON_KVM = ("L1_editor_fix_letter",)
"""A text edit through the editor's window, on KVM only: its setup gives the editor a fixed
second to open, which QEMU's emulator (several times slower) does not always make."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def vm_disk() -> DiskImage:
    """The VM disk of this source tree; built here when missing and this machine can build it
    (root, debootstrap, qemu-img; a few minutes once)."""
    if shutil.which("qemu-system-x86_64") is None or shutil.which("qemu-img") is None:
        unavailable("QEMU is not installed (apt-get install qemu-system-x86 qemu-utils)")
    image = disk_image()
    if image.exists():
        return image
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        unavailable(f"VM disk {image.tag} is not built and this machine cannot build it")
    try:
        return ensure_disk().disk
    except BuildError as e:
        pytest.fail(f"building the VM disk failed: {e}")


def _listening_tcp(pid: int) -> list[tuple[str, int]]:
    """The listening IPv4/IPv6 TCP sockets process `pid` holds, as (address, port)."""
    inodes = socket_inodes([pid])
    found = []
    for kind in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{kind}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes and fields[3] == "0A":  # LISTEN
                found.append(proc_address(fields[1]))
    return found


def test_every_vm_starts_from_the_same_state_and_listens_on_loopback_only(
    vm_disk: DiskImage,
) -> None:
    base = vm_disk.base.stat()
    with QemuProvider(vm_disk) as first:
        assert first.base_url is not None and first.process is not None and first.folder
        folder = first.folder
        port = int(first.base_url.rsplit(":", 1)[1])
        assert _listening_tcp(first.process.pid) == [("127.0.0.1", port)]
        desktop = Controller(first.base_url)
        wrote = desktop.execute("echo left > ~/Desktop/left.txt && whoami", shell=True)
        assert (wrote["returncode"], wrote["output"].strip()) == (0, "user")
        assert (folder / "overlay.qcow2").exists()
    assert not folder.exists()  # overlay, socket and records removed with the VM
    time.sleep(4)  # the saved state is now older than the clock's tolerance (3 s)
    with QemuProvider(vm_disk) as second:
        assert second.base_url is not None
        desktop = Controller(second.base_url)
        listed = desktop.execute("ls ~/Desktop | wc -l", shell=True)
        assert listed["output"].strip() == "0"  # the first episode's file is not there
        # The guest's clock is the host's, not the time its state was saved.
        assert abs(int(desktop.execute("date +%s", shell=True)["output"]) - time.time()) <= 3
    after = vm_disk.base.stat()
    assert (after.st_size, after.st_mtime_ns) == (base.st_size, base.st_mtime_ns)


def test_the_vm_of_a_killed_run_is_removed_by_the_leftover_cleanup(
    vm_disk: DiskImage, docker_engine: Any
) -> None:
    script = (
        "import time\n"
        "from deskscore.collectors.live.qemu import QemuProvider\n"
        "p = QemuProvider()\n"
        "p.start()\n"
        "print(p.folder, p.process.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    run = subprocess.Popen([sys.executable, "-W", "ignore", "-c", script],
                           stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        folder, pid = run.stdout.readline().split()
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert _running(int(pid)) and Path(folder).exists()  # the VM outlived its owner

    removed = cleanup_leftovers(docker_engine)

    assert Path(folder).name in removed and not Path(folder).exists()
    deadline = time.monotonic() + 10
    while _running(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(int(pid))


def _running(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _collect(tmp_path: Path, provider: list[str], name: str, picked: tuple[str, ...]) -> Warehouse:
    tasks = [t for t in load_tasks().tasks if t["id"] in picked]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["collect", "--tasks", str(tmp_path / "tasks.json"),
                     "--agent", f"scripted:{ROOT / 'datasets' / 'sandbox_plans.json'}",
                     *provider, "--warehouse", str(tmp_path / name), "--benchmark", "sandbox",
                     "--settle", "0.3"])  # fmt: skip
    assert code == 0, out.getvalue()
    return Warehouse(tmp_path / name)


def _verdicts(wh: Warehouse) -> dict[str, Any]:
    """What a run recorded, without what differs between any two runs (ids, times, images)."""
    episodes = {
        e["task_id"]: (e["result_status"], e["score"]) for e in wh.read("episodes").to_pylist()
    }
    steps: dict[str, list[Any]] = {}
    for s in sorted(wh.read("steps").to_pylist(), key=lambda s: (s["task_id"], s["step_idx"])):
        steps.setdefault(s["task_id"], []).append((s["action_kind"], s["action_text"]))
    turns = sorted((r["task_id"], r["type"]) for r in wh.read("interactions").to_pylist())
    return {"episodes": episodes, "steps": steps, "interactions": turns}


def test_sandbox_tasks_record_the_same_verdicts_in_vms_as_in_containers(
    vm_disk: DiskImage, docker_engine: Any, sandbox_image: str, tmp_path: Path
) -> None:
    before = set(runtime_dir().glob("*")) if runtime_dir().is_dir() else set()
    picked = PICKED + (ON_KVM if kvm_problem() is None else ())
    in_vms = _collect(tmp_path, ["--provider", "qemu", "--parallel", "2"], "qemu", picked)
    docker = ["--provider", "docker", "--image", sandbox_image]
    in_containers = _collect(tmp_path, docker, "docker", picked)
    recorded = _verdicts(in_vms)
    assert recorded["episodes"] == dict.fromkeys(picked, ("ok", 1.0))
    assert recorded == _verdicts(in_containers)
    [run] = in_vms.read("runs").to_pylist()
    assert '"provider": "qemu"' in run["args_json"]
    # every VM of the run is stopped and its folder (overlay included) removed
    after = set(runtime_dir().glob("*")) if runtime_dir().is_dir() else set()
    assert not {p for p in after - before if p.name.startswith(run["run_id"])}
