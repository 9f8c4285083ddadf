"""The demo archive: every demo agent's run of the human task index, and its manifest.

`deskscore demo` ingests what this writes. Which agent is zipped, written flat or with old
thunderbird ids is in the settings' `demo` section (datasets/demo_agents.json).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from deskscore.collectors.synthetic.profiles import load_profiles, read_settings
from deskscore.collectors.synthetic.runs import RunStats, write_run_to
from deskscore.collectors.synthetic.screenshots import SCREENSHOT_MODES
from deskscore.collectors.synthetic.sinks import DirSink, ZipSink


@dataclass(frozen=True)
class DemoRun:
    """One generated run: where to ingest it from and what was planned in it."""

    source: Path
    """The folder or zip to give to ingest."""
    run_path: str
    """Run root (the folder holding the domains) inside the source, POSIX, '' for the source."""
    stats: RunStats


@dataclass(frozen=True)
class DemoArchive:
    """A generated demo: the sources to ingest and a manifest of what they hold."""

    out_dir: Path
    sources: list[Path]
    runs: list[DemoRun]
    seed: int
    human_version: str
    screenshots: str

    def manifest(self) -> dict[str, Any]:
        """JSON-ready summary, also written to `<out_dir>/demo_manifest.json`."""
        return {
            "seed": self.seed,
            "human_version": self.human_version,
            "screenshots": self.screenshots,
            "runs": [
                {
                    "source": r.source.relative_to(self.out_dir).as_posix(),
                    "run_path": r.run_path,
                    **{f.name: getattr(r.stats, f.name) for f in fields(RunStats)},
                }
                for r in self.runs
            ],
        }


MANIFEST_NAME = "demo_manifest.json"


def bundled_tasks(version: str) -> list[dict[str, Any]]:
    """The bundled human task index of `version`, the demo's default task list."""
    from deskscore.collectors import human  # the task index; only needed without explicit tasks

    return list(human.load_bundled(version))


def _clear_previous_demo(out_dir: Path, runs_dir: Path) -> None:
    """Remove what an earlier demo wrote here; refuse to touch a runs/ folder we did not write."""
    manifest = out_dir / MANIFEST_NAME
    if not manifest.exists():
        if runs_dir.exists() and any(runs_dir.iterdir()):
            raise FileExistsError(
                f"{runs_dir} exists and is not a previous demo; choose another folder"
            )
        return
    try:
        previous = json.loads(manifest.read_text()).get("runs", [])
    except (OSError, ValueError, AttributeError):
        previous = []
    for run in previous:
        rel = Path(str(run.get("source", "")))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            continue
        target = out_dir / rel
        if target.is_file():
            target.unlink()
    shutil.rmtree(runs_dir, ignore_errors=True)
    manifest.unlink()


def write_demo_archive(
    out_dir: Path,
    *,
    seed: int = 0,
    human_version: str = "verified",
    screenshots: str = "tiny",
    tasks: Sequence[Mapping[str, Any]] | None = None,
    profiles_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> DemoArchive:
    """Write every demo agent's run of the human task index into `out_dir`.

    Runs go to `<out_dir>/runs/<agent>/` (one runner result_dir each); the agent named in the
    settings' demo.zip is packed as `<out_dir>/<agent>.zip` instead, under a prefix folder with
    `__MACOSX/` entries; agents listed in demo.flat are written without the model levels, those
    in demo.old_thunderbird_ids with pre-2025-02-10 thunderbird ids.
    `tasks` overrides the bundled human index (tests use a small list). Re-running into a
    previous demo replaces it; any other non-empty `out_dir` content under runs/ is refused.
    """
    if screenshots not in SCREENSHOT_MODES:
        raise ValueError(f"screenshots must be one of {SCREENSHOT_MODES}, not {screenshots!r}")
    out_dir = Path(out_dir)
    settings = read_settings(profiles_path).get("demo", {})
    profiles = load_profiles(profiles_path)
    task_rows = list(tasks) if tasks is not None else bundled_tasks(human_version)
    zip_cfg = settings.get("zip") or {}
    flat = set(settings.get("flat", []))
    old_ids = set(settings.get("old_thunderbird_ids", []))

    runs_dir = out_dir / "runs"
    _clear_previous_demo(out_dir, runs_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    runs: list[DemoRun] = []
    for profile in profiles:
        if progress:
            progress(f"writing {profile.name} ({len(task_rows)} tasks)")
        options = {
            "seed": seed,
            "screenshots": screenshots,
            "model_level": profile.name not in flat,
            "runtime_log": True,
            "summaries": True,
            "old_thunderbird_ids": profile.name in old_ids,
        }
        if profile.name == zip_cfg.get("agent"):
            prefix = str(zip_cfg.get("prefix", profile.name)).strip("/")
            with ZipSink(out_dir / f"{profile.name}.zip", prefix) as sink:
                run_rel, stats = write_run_to(sink, profile, task_rows, **options)
            runs.append(DemoRun(sink.path, "/".join(x for x in (prefix, run_rel) if x), stats))
        else:
            root = runs_dir / profile.name
            run_rel, stats = write_run_to(DirSink(root), profile, task_rows, **options)
            runs.append(DemoRun(root, run_rel, stats))
    demo = DemoArchive(out_dir, [r.source for r in runs], runs, seed, human_version, screenshots)
    (out_dir / MANIFEST_NAME).write_text(json.dumps(demo.manifest(), indent=2) + "\n")
    return demo
