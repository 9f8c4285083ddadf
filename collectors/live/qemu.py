"""The `qemu` provider: the sandbox desktop in a virtual machine, one per episode.

The VM boots the disk of `sandbox/disk.py` (the sandbox's file system with a Debian kernel)
straight from its kernel and initrd, on KVM when /dev/kvm is hardware KVM this process can open,
and on QEMU's emulator (TCG, several times slower) with a warning otherwise (`kvm_problem`).
Every episode runs on a fresh qcow2 overlay of the read-only base, so each task starts from the
same state and nothing it writes survives (what OSWorld gets from reverting its VM to a
snapshot).

The controller is reached through user-mode networking: QEMU forwards 127.0.0.1:PORT on the host
to the controller in the guest, and listens on no other address. The guest has no other way out
unless `network=True`.

Reset, two ways (`reset`):
- "boot": each episode boots the kernel on its overlay (a few seconds on KVM).
- "snapshot" (default): the first episode of a disk boots once, waits for the controller, and
  saves the running VM (its RAM and devices, by migration to a file) beside a disk overlay of
  that moment; every episode then starts a VM that resumes that state on an overlay of its own,
  which skips the boot, and waits until the guest's clock has caught up with the host's.
  Falls back to "boot" if the state cannot be saved or loaded.

Each VM lives in a folder of its own under `runtime_dir()` (overlay, QMP socket, pid file, serial
log, and an owner record: run id and host:pid:start-time of the process that started it), so
`cleanup_vm_leftovers()` can stop the VMs of runs that died without touching live ones.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

from deskscore.collectors.live.providers import (
    CONTROLLER_PORT,
    Provider,
    ProviderError,
    free_port,
    owner_alive,
    owner_label,
    wait_until_answers,
)

GUEST_ADDRESS = "10.0.2.15"
"""The guest's address on QEMU's user-mode network (the controller listens there)."""
KERNEL_OPTIONS = (
    "root=/dev/vda rw console=ttyS0 net.ifnames=0 panic=1 quiet fsck.mode=skip "
    "init=/opt/deskscore/vm-init.sh"
)
MEMORY_MB = 1024
"""Guest memory per VM; xterm and a text editor need far less, the office image more."""
QEMU_OVERHEAD_MB = 150
"""What a QEMU process takes beside the guest's memory (measured: about 100 MB)."""
READY_TIMEOUT_S = 120.0
TCG_READY_TIMEOUT_S = 600.0
RECORD = "vm.json"
STATE = "ram.state"
STATE_DISK = "state.qcow2"


def runtime_dir() -> Path:
    """The folder of running VMs' folders (one per user of this machine)."""
    return Path(tempfile.gettempdir()) / f"deskscore-vms-{os.getuid()}"


def kvm_problem(sys_module: Path = Path("/sys/module")) -> str | None:
    """Why QEMU cannot use KVM here for a stock Debian kernel; None when it can.

    /dev/kvm must open for reading and writing, and it must be hardware KVM: a machine that is
    itself a VM may offer KVM through PVM (the kvm_pvm module, no kvm_intel or kvm_amd), which
    runs only guest kernels built for PVM; a Debian kernel hangs there at its first
    instructions."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return f"/dev/kvm cannot be opened ({e.strerror}); add this user to group kvm"
    os.close(fd)
    hardware = any((sys_module / m).exists() for m in ("kvm_intel", "kvm_amd"))
    if (sys_module / "kvm_pvm").exists() and not hardware:
        return "/dev/kvm is PVM (kvm_pvm), which boots only kernels built for PVM guests"
    return None


def memory_available_mb() -> int:
    """MemAvailable of /proc/meminfo in MB (0 if unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def parallel_bound(requested: int, per_desktop_mb: int, available_mb: int | None = None) -> int:
    """How many desktops of `per_desktop_mb` may run at once: `requested`, lowered to what
    80 % of the available memory holds, never below 1."""
    available = memory_available_mb() if available_mb is None else available_mb
    if available <= 0:
        return max(1, requested)
    return max(1, min(requested, int(available * 0.8) // max(1, per_desktop_mb)))


def qmp(sock: Path, *commands: dict[str, Any], timeout_s: float = 10.0) -> list[Any]:
    """Send QMP commands over the VM's unix socket; returns their replies ("return" values).
    Events arriving in between are skipped; an "error" reply raises ProviderError."""
    replies: list[Any] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        s.connect(str(sock))
        reader = s.makefile("r", encoding="utf-8")
        json.loads(reader.readline())  # the greeting
        for command in ({"execute": "qmp_capabilities"}, *commands):
            s.sendall(json.dumps(command).encode() + b"\n")
            while True:
                line = reader.readline()
                if not line:  # quit closes the socket, sometimes before its reply
                    if command.get("execute") == "quit":
                        replies.append({})
                        break
                    raise ProviderError(f"QMP closed the connection after {command}")
                reply = json.loads(line)
                if "event" in reply:
                    continue
                if "error" in reply:
                    raise ProviderError(f"QMP {command['execute']}: {reply['error']}")
                replies.append(reply.get("return"))
                break
    return replies[1:]


def _qemu_pid_matches(pid: int, folder: Path) -> bool:
    """Whether process `pid` is a QEMU of the VM in `folder` (not a process that reused the
    number)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return False
    return "qemu-system" in cmdline and str(folder) in cmdline


def _kill_vm(folder: Path) -> None:
    """Stop the QEMU of a VM folder (QMP quit, then SIGKILL) and remove the folder."""
    pid = None
    with contextlib.suppress(OSError, ValueError):
        pid = int((folder / "qemu.pid").read_text().strip())
    if pid is not None and _qemu_pid_matches(pid, folder):
        with contextlib.suppress(OSError, ProviderError, ValueError):
            qmp(folder / "qmp.sock", {"execute": "quit"}, timeout_s=3)
        deadline = time.monotonic() + 5
        while _qemu_pid_matches(pid, folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _qemu_pid_matches(pid, folder):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def cleanup_vm_leftovers(*, everything: bool = False, root: Path | None = None) -> list[str]:
    """Stop and remove the VMs that killed runs left: those whose owner process is gone from
    this host, and those of unknown owners whose QEMU no longer runs. `everything` removes
    every VM, running or not. Returns the folder names removed."""
    root = root or runtime_dir()
    removed = []
    for folder in sorted(root.glob("*")) if root.is_dir() else []:
        if not folder.is_dir():
            continue
        try:
            record = json.loads((folder / RECORD).read_text())
        except (OSError, ValueError):
            record = {}
        if not record and time.time() - folder.stat().st_mtime < 60:
            continue  # being created right now
        alive = owner_alive(record.get("owner", ""))
        pid = record.get("pid")
        running = isinstance(pid, int) and _qemu_pid_matches(pid, folder)
        if everything or alive is False or (alive is None and not running):
            _kill_vm(folder)
            removed.append(folder.name)
    return removed


class QemuProvider(Provider):
    """One VM of the sandbox disk on a fresh overlay; stopped and removed by stop().

    `disk`: a built `DiskImage` (default: this source tree's, built with `deskscore sandbox
    build --vm`). `memory_mb`, `cpus`: the guest's. `reset`: "snapshot" or "boot" (module
    docstring). `accel`: "kvm" or "tcg" (default: kvm when usable). `network`: let the guest
    reach beyond the host's forward (off: the guest only answers).
    """

    name = "qemu"

    def __init__(
        self,
        disk: Any = None,
        *,
        memory_mb: int = MEMORY_MB,
        cpus: int = 1,
        reset: str = "snapshot",
        accel: str | None = None,
        network: bool = False,
        run_id: str | None = None,
        ready_timeout_s: float | None = None,
        qemu: str = "qemu-system-x86_64",
    ) -> None:
        super().__init__()
        if reset not in ("snapshot", "boot"):
            raise ValueError(f"reset must be 'snapshot' or 'boot', not {reset!r}")
        if accel not in (None, "kvm", "tcg"):
            raise ValueError(f"accel must be 'kvm' or 'tcg', not {accel!r}")
        self._disk = disk
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.reset = reset
        self.accel = accel
        self.network = network
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.ready_timeout_s = ready_timeout_s
        self.qemu = qemu
        self.folder: Path | None = None
        self.process: subprocess.Popen | None = None
        self.timings: dict[str, float] = {}
        """Seconds of the last start: overlay, qemu (process up), ready (controller answers)."""

    @property
    def disk(self) -> Any:
        if self._disk is None:
            from deskscore.collectors.live.sandbox.disk import disk_image

            self._disk = disk_image()
        return self._disk

    def _accel(self) -> str:
        if self.accel is None:
            problem = kvm_problem()
            if problem is None:
                self.accel = "kvm"
            else:
                warnings.warn(
                    f"{problem}: the VM runs on QEMU's emulator (TCG), several times slower",
                    stacklevel=3,
                )
                self.accel = "tcg"
        return self.accel

    def _timeout(self) -> float:
        if self.ready_timeout_s is not None:
            return self.ready_timeout_s
        return READY_TIMEOUT_S if self._accel() == "kvm" else TCG_READY_TIMEOUT_S

    def command(self, folder: Path, port: int, incoming: Path | None = None) -> list[str]:
        """The QEMU command line of a VM in `folder` whose controller is at 127.0.0.1:port."""
        accel = self._accel()
        forward = f"hostfwd=tcp:127.0.0.1:{port}-{GUEST_ADDRESS}:{CONTROLLER_PORT}"
        netdev = f"user,id=net0,{forward}" + ("" if self.network else ",restrict=on")
        cmd = [
            self.qemu,
            "-name",
            f"deskscore-{folder.name}",
            "-machine",
            f"q35,accel={accel}",
            "-cpu",
            # The host's CPU, less IA32_ARCH_CAPABILITIES: KVM inside a VM (CI, cloud
            # machines) refuses to set that register and QEMU aborts.
            "host,arch-capabilities=off" if accel == "kvm" else "max",
            "-m",
            str(self.memory_mb),
            "-smp",
            str(self.cpus),
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
            "-kernel",
            str(self.disk.kernel),
            "-initrd",
            str(self.disk.initrd),
            "-append",
            KERNEL_OPTIONS,
            "-drive",
            f"file={folder / 'overlay.qcow2'},if=virtio,format=qcow2,cache=unsafe",
            "-netdev",
            netdev,
            "-device",
            "virtio-net-pci,netdev=net0",
            "-device",
            "virtio-rng-pci",
            "-serial",
            f"file:{folder / 'serial.log'}",
            "-qmp",
            f"unix:{folder / 'qmp.sock'},server=on,wait=off",
            "-pidfile",
            str(folder / "qemu.pid"),
        ]
        if incoming is not None:
            cmd += ["-incoming", f"exec:cat {shlex.quote(str(incoming))}"]
        return cmd

    def _new_folder(self) -> Path:
        root = runtime_dir()
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = root / f"{self.run_id}-{uuid.uuid4().hex[:6]}"
        folder.mkdir(mode=0o700)
        return folder

    def _overlay(self, folder: Path, backing: Path) -> None:
        """A qcow2 overlay of `backing` in `folder`: the VM's writes go there only."""
        overlay = str(folder / "overlay.qcow2")
        proc = subprocess.run(
            ["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(backing), "-F", "qcow2", overlay],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise ProviderError(f"qemu-img create failed: {proc.stderr.strip()}")

    def _launch(self, folder: Path, backing: Path, incoming: Path | None = None) -> str:
        """Start QEMU on an overlay of `backing`; returns the controller's URL once it answers."""
        t = time.monotonic()
        self._overlay(folder, backing)
        self.timings["overlay"] = time.monotonic() - t
        port = free_port()
        log = open(folder / "qemu.log", "wb")  # noqa: SIM115 (closed below; QEMU keeps its copy)
        try:
            self.process = subprocess.Popen(
                self.command(folder, port, incoming),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as e:
            raise ProviderError(f"{self.qemu} could not be started: {e}") from None
        finally:
            log.close()
        (folder / RECORD).write_text(
            json.dumps({"owner": owner_label(), "run_id": self.run_id, "pid": self.process.pid})
        )
        if incoming is not None:
            self._resume(folder)
        self.timings["qemu"] = time.monotonic() - t
        url = f"http://127.0.0.1:{port}"
        wait_until_answers(
            url,
            self._timeout(),
            alive=lambda: self._death(folder),
            what=f"the controller of VM {folder.name}",
        )
        if incoming is not None:
            self._wait_for_clock(url)
        self.timings["ready"] = time.monotonic() - t
        return url

    def _wait_for_clock(self, url: str, timeout_s: float = 10.0) -> None:
        """Wait until the resumed guest's clock has caught up with the host's (vm-init.sh sets
        it from the RTC within a second), so a task never sees the time the state was saved."""
        from deskscore.collectors.live.client import Controller, ControllerError

        controller = Controller(url)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                reply = controller.execute("date +%s", shell=True)
                if abs(int(reply.get("output") or 0) - time.time()) <= 3:
                    return
            except (ControllerError, ValueError):
                pass
            time.sleep(0.2)
        raise ProviderError(
            f"the guest's clock did not catch up with the host's in {timeout_s:g} s"
        )

    def _resume(self, folder: Path, timeout_s: float = 120.0) -> None:
        """Run the VM once its saved state is loaded: it was paused when saved, and a
        migrated VM keeps that run state."""
        sock = folder / "qmp.sock"
        deadline = time.monotonic() + timeout_s
        while True:
            reason = self._death(folder)
            if reason:
                raise ProviderError(f"VM {folder.name} stopped while loading its state: {reason}")
            status = None
            if sock.exists():
                with contextlib.suppress(OSError, ProviderError, ValueError):
                    [info] = qmp(sock, {"execute": "query-status"})
                    status = info.get("status")
            if status == "running":
                return
            if status not in (None, "inmigrate"):
                qmp(sock, {"execute": "cont"})
                return
            if time.monotonic() > deadline:
                raise ProviderError(f"VM {folder.name} did not load its state in {timeout_s:g} s")
            time.sleep(0.05)

    def _death(self, folder: Path) -> str | None:
        if self.process is None or self.process.poll() is None:
            return None
        return f"QEMU exited with {self.process.returncode}:\n{_tail(folder)}"

    def start(self) -> str:
        if shutil.which(self.qemu) is None or shutil.which("qemu-img") is None:
            raise ProviderError(
                f"{self.qemu} or qemu-img is not installed "
                "(Debian: apt-get install qemu-system-x86 qemu-utils)"
            )
        if not self.disk.exists():
            raise ProviderError(
                f"the VM disk {self.disk.tag} is not built; build it with "
                "`deskscore sandbox build --vm`"
            )
        state = None
        if self.reset == "snapshot":
            try:
                state = ensure_state(self)
            except ProviderError as e:
                warnings.warn(f"no RAM snapshot ({e}); booting instead", stacklevel=2)
                self.reset = "boot"
        self.folder = self._new_folder()
        try:
            if state is not None:
                try:
                    self.base_url = self._launch(self.folder, state / STATE_DISK, state / STATE)
                    return self.base_url
                except ProviderError as e:
                    warnings.warn(f"resuming the saved state failed ({e}); booting", stacklevel=2)
                    self.stop()
                    self.folder = self._new_folder()
            self.base_url = self._launch(self.folder, self.disk.base)
        except ProviderError as e:
            tail = _tail(self.folder)
            self.stop()
            raise ProviderError(f"{e}\nserial console:\n{tail}" if tail else str(e)) from None
        return self.base_url

    def peak_memory_mb(self) -> float | None:
        """The QEMU process's peak resident memory so far (VmHWM), in MB."""
        if self.process is None:
            return None
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except (OSError, ValueError):
            pass
        return None

    def stop(self) -> None:
        """QMP quit (the overlay is thrown away, so the guest needs no shutdown of its own),
        SIGKILL if QEMU lingers, then remove the VM's folder and overlay."""
        proc, self.process = self.process, None
        folder, self.folder = self.folder, None
        self.base_url = None
        if proc is not None and proc.poll() is None:
            assert folder is not None
            with contextlib.suppress(OSError, ProviderError, ValueError):
                qmp(folder / "qmp.sock", {"execute": "quit"}, timeout_s=3)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _tail(folder: Path | None, lines: int = 15) -> str:
    """The end of a VM's QEMU log and serial console."""
    if folder is None:
        return ""
    out = []
    for name in ("qemu.log", "serial.log"):
        with contextlib.suppress(OSError):
            text = (folder / name).read_text(errors="replace").strip()
            if text:
                out.append("\n".join(text.splitlines()[-lines:]))
    return "\n".join(out)


@functools.cache
def qemu_version(qemu: str) -> str:
    """QEMU's version number (a saved state loads only into the QEMU that saved it)."""
    try:
        out = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    words = out.split()
    return (
        words[3] if len(words) > 3 and words[:3] == ["QEMU", "emulator", "version"] else "unknown"
    )


def state_folder(provider: QemuProvider) -> Path:
    """Where the saved VM state of a disk, memory size, CPU count and accelerator is kept."""
    key = (
        f"{provider.memory_mb}m-{provider.cpus}c-{provider._accel()}-{qemu_version(provider.qemu)}"
    )
    return provider.disk.folder / f"state-{key}"


def ensure_state(provider: QemuProvider) -> Path:
    """The saved state every episode resumes: made once (under a lock, so parallel providers
    wait for the first) by booting the disk, waiting for the controller, pausing the VM and
    migrating it to a file, beside the overlay that holds its disk at that moment."""
    folder = state_folder(provider)
    if (folder / STATE).is_file():
        return folder
    lock_path = provider.disk.folder / ".state.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / STATE).is_file():
            return folder
        maker = QemuProvider(
            provider.disk,
            memory_mb=provider.memory_mb,
            cpus=provider.cpus,
            reset="boot",
            accel=provider._accel(),
            network=provider.network,
            run_id=f"{provider.run_id}-state",
            ready_timeout_s=provider.ready_timeout_s,
            qemu=provider.qemu,
        )
        work = Path(tempfile.mkdtemp(prefix=".state-", dir=provider.disk.folder))
        try:
            maker.start()
            vm = maker.folder
            assert vm is not None
            time.sleep(1.0)  # the window manager and controller settle
            sock = vm / "qmp.sock"
            qmp(sock, {"execute": "stop"})
            target = shlex.quote(str(work / STATE))
            qmp(sock, {"execute": "migrate", "arguments": {"uri": f"exec:cat > {target}"}})
            deadline = time.monotonic() + 120
            while True:
                [info] = qmp(sock, {"execute": "query-migrate"})
                status = info.get("status")
                if status == "completed":
                    break
                if status in ("failed", "cancelled") or time.monotonic() > deadline:
                    raise ProviderError(f"saving the VM state: migration {status}")
                time.sleep(0.1)
            qmp(sock, {"execute": "quit"})
            assert maker.process is not None
            maker.process.wait(timeout=10)
            # The state's disk: the maker's overlay, rebased (it keeps the absolute path of
            # the base) and kept read-only.
            shutil.move(str(vm / "overlay.qcow2"), work / STATE_DISK)
            (work / STATE_DISK).chmod(0o444)
            work.rename(folder)
        except (ProviderError, OSError, subprocess.TimeoutExpired) as e:
            raise ProviderError(str(e)) from None
        finally:
            maker.stop()
            shutil.rmtree(work, ignore_errors=True)
    return folder


__all__ = [
    "MEMORY_MB",
    "QemuProvider",
    "cleanup_vm_leftovers",
    "ensure_state",
    "kvm_problem",
    "memory_available_mb",
    "parallel_bound",
    "qmp",
    "runtime_dir",
]
