"""Benchmark: what a desktop costs on each provider (start-up, reset between tasks, memory).

    python benchmarks/providers.py [--providers docker,host,qemu:boot,qemu] [--tasks 4]
                                   [--settle 0.3] [--keep]

Collects the first `--tasks` bundled sandbox tasks with the scripted agent on each provider,
one episode at a time, as `deskscore collect` does (each episode starts a desktop and stops it),
and measures around the provider:

- first start: the first episode's desktop, from nothing to a controller that answers (for the
  `qemu` provider this includes booting once and saving the state the others resume);
- start: the median start of the other episodes;
- reset: the median time between one episode's desktop and the next one's being ready (stop,
  then start): what a task costs over its own work;
- peak memory: the largest resident memory of the desktop's processes (the container's process
  tree, the host session's, or the QEMU process) sampled every 0.1 s during an episode; and
  how many such desktops fit in 80 % of the memory available now (`--parallel`'s bound);
- solved: tasks the evaluator scored 1.

Then the images: the container image's size, the VM disk's size and its build time as recorded
when it was built. Needs what each provider needs (a Docker engine and the sandbox image, Xvfb,
QEMU and the VM disk); a provider that cannot start is reported and skipped. A script, not a
test: it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from deskscore.collectors.live.agents import load_agent
from deskscore.collectors.live.collect import Collector, Context, Settings, run_row
from deskscore.collectors.live.providers import Provider, ProviderError, provider_from_spec
from deskscore.collectors.live.qemu import parallel_bound
from deskscore.collectors.live.record import ScreenshotStore
from deskscore.collectors.live.tasks import load_tasks
from deskscore.collectors.live.users import make_user

ROOT = Path(__file__).resolve().parents[1]
PLANS = ROOT / "datasets" / "sandbox_plans.json"


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tree_rss_mb(root: int) -> float:
    """Resident memory of a process and all its descendants, in MB."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kb(pid)
        todo.extend(children.get(pid, []))
    return total / 1024


def desktop_pid(provider: Provider) -> int | None:
    """The root process of a started desktop: the container's first process, the host
    session, or QEMU."""
    container = getattr(provider, "container", None)
    if container is not None:
        container.reload()
        return int(container.attrs["State"]["Pid"]) or None
    process = getattr(provider, "process", None)
    return process.pid if process is not None else None


class Measured(Provider):
    """A provider whose starts, stops and peak memory are recorded."""

    def __init__(self, inner: Provider) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.starts: list[float] = []
        self.stops: list[float] = []
        self.peaks: list[float] = []
        self._sampling = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        t = time.monotonic()
        self.base_url = self.inner.start()
        self.starts.append(time.monotonic() - t)
        pid = desktop_pid(self.inner)
        if pid is not None:
            self._sampling.set()
            self._thread = threading.Thread(target=self._sample, args=(pid,), daemon=True)
            self._thread.start()
        return self.base_url

    def _sample(self, pid: int) -> None:
        peak = 0.0
        while self._sampling.is_set():
            peak = max(peak, tree_rss_mb(pid))
            time.sleep(0.1)
        self.peaks.append(peak)

    def stop(self) -> None:
        if self._thread is not None:
            self._sampling.clear()
            self._thread.join()
            self._thread = None
        t = time.monotonic()
        self.inner.stop()
        self.stops.append(time.monotonic() - t)


def measure(spec: str, tasks: list[dict[str, Any]], out: Path, settle: float) -> dict[str, Any]:
    """Collect `tasks` on one provider; returns the row of the table."""
    provider = Measured(provider_from_spec(spec))
    warehouse = str(out / spec.replace(":", "-"))
    settings = Settings(
        warehouse=warehouse,
        benchmark="sandbox",
        run_name=f"bench-{spec}",
        max_steps=15,
        parallel=1,
        osworld_dir=None,
        settle_s=settle,
        python="python3",
        lock_wait_s=60.0,
    )
    row = run_row(
        run_id=f"bench-{spec.replace(':', '-')}",
        benchmark="sandbox",
        source=ScreenshotStore(warehouse).uri,
        run_name=f"bench-{spec}",
        agent_label="scripted",
        model=None,
        observation_type="screenshot",
        max_steps=15,
        args={"provider": spec},
    )
    agent = load_agent(f"scripted:{PLANS}")
    collector = Collector(settings, row, log=lambda _line: None)
    started = time.monotonic()
    results = collector.run(
        tasks, lambda: Context(agent, provider, lambda task: make_user("scripted", task))
    )
    seconds = time.monotonic() - started
    resets = [
        stop + start for stop, start in zip(provider.stops, provider.starts[1:], strict=False)
    ]
    peak = max(provider.peaks, default=0.0)
    return {
        "provider": spec,
        "first_start_s": provider.starts[0] if provider.starts else None,
        "start_s": statistics.median(provider.starts[1:]) if len(provider.starts) > 1 else None,
        "reset_s": statistics.median(resets) if resets else None,
        "peak_mb": peak,
        "fit": parallel_bound(1000, round(peak)) if peak else None,
        "solved": f"{sum(r.score == 1 for r in results)}/{len(results)}",
        "seconds": seconds,
    }


def _fmt(value: Any, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def images() -> list[str]:
    """The container image's and the VM disk's sizes and build times, where known."""
    lines = []
    try:
        from deskscore.collectors.live.providers import docker_client
        from deskscore.collectors.live.sandbox.build import image_name

        image = docker_client().images.get(image_name())
        lines.append(f"container image {image_name()}: {image.attrs.get('Size', 0) / 1e6:.0f} MB")
    except Exception as e:  # no engine or no image: said, not fatal
        lines.append(f"container image: not available ({str(e).splitlines()[0]})")
    from deskscore.collectors.live.sandbox.disk import disk_image

    disk = disk_image()
    if disk.exists():
        info = disk.info()
        steps = ", ".join(f"{k} {v:.0f} s" for k, v in dict(info.get("steps", {})).items())
        mb = {p.name: p.stat().st_size / 1e6 for p in (disk.base, disk.kernel, disk.initrd)}
        lines.append(
            f"VM disk {disk.tag}: qcow2 base {mb[disk.base.name]:.0f} MB, kernel "
            f"{mb[disk.kernel.name]:.0f} MB, initrd {mb[disk.initrd.name]:.0f} MB; built in "
            f"{_fmt(info.get('seconds'), '.0f')} s ({steps})"
        )
        for state in sorted(disk.folder.glob("state-*")):
            size = sum(p.stat().st_size for p in state.iterdir())
            lines.append(f"  saved state {state.name}: {size / 1e6:.0f} MB")
    else:
        lines.append(f"VM disk {disk.tag}: not built")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--providers", default="docker,host,qemu:boot,qemu")
    parser.add_argument("--tasks", type=int, default=4, help="the first N bundled tasks")
    parser.add_argument("--settle", type=float, default=0.3)
    parser.add_argument("--keep", action="store_true", help="keep the warehouses written")
    args = parser.parse_args(argv)
    tasks = load_tasks().tasks[: args.tasks]
    out = Path(tempfile.mkdtemp(prefix="deskscore-bench-providers-"))
    rows = []
    try:
        for spec in args.providers.split(","):
            try:
                rows.append(measure(spec, tasks, out, args.settle))
            except (ProviderError, OSError) as e:
                print(f"{spec}: skipped ({str(e).splitlines()[0]})", file=sys.stderr)
    finally:
        if args.keep:
            print(f"warehouses kept in {out}", file=sys.stderr)
        else:
            shutil.rmtree(out, ignore_errors=True)
    header = ("provider", "first start s", "start s", "reset s", "peak MB", "fit", "solved")
    print(f"{len(tasks)} task(s), one episode at a time; fit: desktops of that peak in 80 % of "
          "the memory available now")  # fmt: skip
    print(" | ".join(header))
    print(" | ".join("-" * len(h) for h in header))
    for r in rows:
        cells = (r["provider"], _fmt(r["first_start_s"]), _fmt(r["start_s"]), _fmt(r["reset_s"]),
                 _fmt(r["peak_mb"], ".0f"), _fmt(r["fit"], "d"), r["solved"])  # fmt: skip
        print(" | ".join(cells))
    for line in images():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
