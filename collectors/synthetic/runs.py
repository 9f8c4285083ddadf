"""Runs: one agent's episodes written as a runner's result_dir, into a folder or a zip.

Per run `args.json`, `all_result.json` (a Python repr, as runners write it) and
`summary/results.json`; per task the folder `episodes.write_episode` writes. Layout as in
REFERENCE.md section 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskscore.collectors.synthetic.clock import micros_since_epoch, run_start, summary_time
from deskscore.collectors.synthetic.episodes import write_episode
from deskscore.collectors.synthetic.planning import EpisodePlan, plan_run
from deskscore.collectors.synthetic.profiles import SCREEN, AgentProfile
from deskscore.collectors.synthetic.screenshots import Shots
from deskscore.collectors.synthetic.seeds import rng
from deskscore.collectors.synthetic.sinks import DirSink, Sink, ZipSink


def _args_json(profile: AgentProfile, result_dir: str) -> str:
    """args.json as OSWorld's run.py dumps its argparse namespace."""
    args = {
        "path_to_vm": None,
        "headless": True,
        "action_space": profile.action_space,
        "observation_type": profile.observation_type,
        "screen_width": SCREEN[0],
        "screen_height": SCREEN[1],
        "sleep_after_execution": 1.0,
        "max_steps": profile.max_steps,
        "max_trajectory_length": 3,
        "test_config_base_dir": "evaluation_examples",
        "model": profile.model,
        "temperature": 1.0,
        "top_p": 0.9,
        "max_tokens": 1500,
        "stop_token": None,
        "domain": "all",
        "test_all_meta_path": "evaluation_examples/test_all.json",
        "result_dir": result_dir,
        "num_envs": 8,
        "log_level": "INFO",
        "provider_name": "docker",
    }
    return json.dumps(args, indent=4)


@dataclass(frozen=True)
class RunStats:
    """What one written run holds, counted from its plan (files on disk must agree)."""

    agent: str
    model: str
    action_space: str
    observation_type: str
    max_steps: int
    n_planned: int
    """Tasks given to the run (folders written + absent)."""
    n_tasks: int
    """Task folders written."""
    n_with_result: int
    planned_successes: int
    """Episodes whose result.txt scores exactly 1 (True counts as 1)."""
    planned_score: float
    """Sum of result.txt values (partial credit included)."""
    n_partial: int
    n_errors: int
    n_interrupted: int
    n_absent: int
    n_loops: int
    """Episodes that repeat one action and response at least 3 times."""
    n_infeasible_fail: int
    """Infeasible tasks the agent answered with FAIL (scored 1)."""
    n_lines: int
    """traj.jsonl lines over all task folders."""

    @classmethod
    def of(cls, profile: AgentProfile, plans: Sequence[EpisodePlan]) -> RunStats:
        written = [p for p in plans if p.outcome != "absent"]
        scores = [s for s in (p.score for p in written) if s is not None]
        return cls(
            agent=profile.name,
            model=profile.model,
            action_space=profile.action_space,
            observation_type=profile.observation_type,
            max_steps=profile.max_steps,
            n_planned=len(plans),
            n_tasks=len(written),
            n_with_result=len(scores),
            planned_successes=sum(1 for s in scores if s == 1.0),
            planned_score=round(sum(scores), 6),
            n_partial=sum(1 for s in scores if 0.0 < s < 1.0),
            n_errors=sum(1 for p in written if p.error is not None),
            n_interrupted=sum(1 for p in written if p.outcome == "interrupted"),
            n_absent=len(plans) - len(written),
            n_loops=sum(1 for p in written if p.loop_len >= 3),
            n_infeasible_fail=sum(
                1 for p in written if p.outcome == "infeasible_fail" and p.result is not None
            ),
            n_lines=sum(p.n_lines for p in written),
        )


def _previous_summary(data: bytes | None) -> list[dict[str, Any]]:
    """Entries other runs sharing the result_dir logged; the runner appends to them."""
    try:
        loaded = json.loads(data or b"[]")
    except ValueError:
        return []
    return loaded if isinstance(loaded, list) else []


def write_run_to(
    sink: Sink,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    screenshots: str,
    model_level: bool,
    runtime_log: bool,
    summaries: bool,
    old_thunderbird_ids: bool,
) -> tuple[str, RunStats]:
    """Write one run through `sink`; returns the run root relative to the sink ('' = its root)."""
    plans = plan_run(profile, tasks, seed=seed)
    shots = Shots(screenshots)
    levels = (profile.action_space, profile.observation_type, profile.model)
    run_rel = "/".join(levels) if model_level else ""
    lead = f"{run_rel}/" if run_rel else ""
    clock = micros_since_epoch(run_start(seed, profile, old_thunderbird_ids))
    folder_ids = {
        (str(t["domain"]), str(t["task_id"])): str(t.get("alias_task_id") or t["task_id"])
        for t in tasks
        if old_thunderbird_ids and t["domain"] == "thunderbird"
    }
    summary = _previous_summary(sink.read("summary/results.json"))
    all_result: dict[str, dict[str, float]] = {}
    pace = rng(seed, profile.name, "pace")
    for plan in plans:
        if plan.outcome == "absent":
            continue
        clock += int(pace.uniform(60.0, 120.0) * 1e6)  # reset, then the runner's wait
        folder_id = folder_ids.get((plan.domain, plan.task_id), plan.task_id)
        clock = write_episode(
            sink,
            f"{lead}{plan.domain}/{folder_id}",
            profile,
            plan,
            seed=seed,
            start_us=clock,
            shots=shots,
            runtime_log=runtime_log,
        )
        done_at = summary_time(clock)
        if plan.result is not None:
            all_result.setdefault(plan.domain, {})[folder_id] = plan.score or 0.0
        if plan.error is not None or plan.result is not None:
            entry: dict[str, Any] = {"application": plan.domain, "task_id": folder_id}
            entry["status"] = "error" if plan.error is not None else "success"
            entry["score"] = 0.0 if plan.error is not None else plan.score
            entry["timestamp"] = done_at
            if plan.error is not None:
                entry["err_message"] = plan.error
            summary.append(entry)
    sink.write(f"{lead}args.json", _args_json(profile, "./results").encode())
    if summaries:
        sink.write(f"{lead}all_result.json", str(all_result).encode())
        text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        sink.write("summary/results.json", text.encode())
    return run_rel, RunStats.of(profile, plans)


def write_run(
    root: Path,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    screenshots: str = "none",
    model_level: bool = True,
    runtime_log: bool = True,
    summaries: bool = True,
    old_thunderbird_ids: bool = False,
) -> Path:
    """Write one agent's run of `tasks` under `root` (a runner's --result_dir).

    Layout `<root>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/` with args.json
    in the model folder; `model_level=False` writes `<root>/<domain>/<task_id>/` with args.json
    at `<root>`. `summaries` adds all_result.json beside args.json and
    `<root>/summary/results.json`. `old_thunderbird_ids` names thunderbird folders by the ids
    runs used before 2025-02-10 (the rows' alias_task_id) and dates the run before then.
    `tasks` are human-index rows (domain, task_id, single_steps, infeasible; other keys are
    ignored). Returns the run root (the model folder, or `root`). Same seed, same bytes.

    Several agents may share one `root`, as with real runners: summary/results.json gets the
    new entries appended. Files an earlier write left in the same run root are not removed.
    """
    root = Path(root)
    run_rel, _ = write_run_to(
        DirSink(root),
        profile,
        tasks,
        seed=seed,
        screenshots=screenshots,
        model_level=model_level,
        runtime_log=runtime_log,
        summaries=summaries,
        old_thunderbird_ids=old_thunderbird_ids,
    )
    return root / run_rel if run_rel else root


def write_run_zip(
    zip_path: Path,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    screenshots: str = "none",
    prefix: str = "",
) -> Path:
    """Write one agent's run of `tasks` straight into a zip, as a published run archive is
    laid out (model levels under `prefix/`, `__MACOSX/` companions); nothing touches the disk
    but the archive. Same seed, same bytes."""
    with ZipSink(Path(zip_path), prefix) as sink:
        write_run_to(
            sink,
            profile,
            tasks,
            seed=seed,
            screenshots=screenshots,
            model_level=True,
            runtime_log=True,
            summaries=True,
            old_thunderbird_ids=False,
        )
    return sink.path


def write_zip(run_root: Path, zip_path: Path, prefix: str | None = None) -> Path:
    """Pack a folder as published archives are: every path under `prefix/` (default: the
    folder's name; "" for none), directory entries, `__MACOSX/` AppleDouble members; fixed
    dates and sorted members, so the same folder always gives the same bytes."""
    run_root = Path(run_root)
    with ZipSink(Path(zip_path), run_root.name if prefix is None else prefix) as sink:
        for path in sorted(p for p in run_root.rglob("*") if p.is_file()):
            sink.write(path.relative_to(run_root).as_posix(), path.read_bytes())
    return Path(zip_path)
