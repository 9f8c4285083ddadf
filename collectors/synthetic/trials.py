"""Several trials of one agent over the same tasks, in the two layouts runners write.

- `where="task"`: trial folders below the task folders, `<run root>/<domain>/<task_id>/<k>/`
  (OSWorld forks' `--num_rollout_per_trial`), one run root, args.json at it;
- `where="run"`: a trial level above the domains, `<run root>/<k>/<domain>/<task_id>/`
  (`--trial-id`), each trial a whole run with its own args.json.

Trial k is planned with seed `seed + k`, so trials differ as real rollouts do (outcomes,
turns, absent tasks) and the same seed gives the same bytes. The plans the files were written
from are returned, one list per trial, so callers know every trial's outcome per task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deskscore.collectors.synthetic.clock import micros_since_epoch, run_start
from deskscore.collectors.synthetic.episodes import write_episode
from deskscore.collectors.synthetic.planning import EpisodePlan, plan_run
from deskscore.collectors.synthetic.profiles import AgentProfile
from deskscore.collectors.synthetic.runs import _args_json, write_run
from deskscore.collectors.synthetic.screenshots import Shots
from deskscore.collectors.synthetic.sinks import DirSink

WHERE = ("task", "run")


def write_trials(
    root: Path,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    trials: int,
    seed: int,
    where: str = "task",
    first: int = 0,
    screenshots: str = "none",
) -> tuple[Path, list[list[EpisodePlan]]]:
    """Write `trials` trials (numbered from `first`) of `profile` over `tasks` under `root`
    (a runner's --result_dir, model levels included); returns the run root and each trial's
    plans, in trial order (absent tasks included, with no folder written)."""
    if where not in WHERE:
        raise ValueError(f"where must be one of {WHERE}, not {where!r}")
    run_root = Path(root, profile.action_space, profile.observation_type, profile.model)
    out = []
    for k in range(first, first + trials):
        plans = plan_run(profile, tasks, seed=seed + k)
        out.append(plans)
        if where == "run":
            write_run(run_root / str(k), profile, tasks, seed=seed + k, screenshots=screenshots,
                      model_level=False, summaries=False)  # fmt: skip
            continue
        sink = DirSink(run_root)
        clock = micros_since_epoch(run_start(seed + k, profile, False))
        shots = Shots(screenshots)
        for plan in plans:
            if plan.outcome == "absent":
                continue
            clock = write_episode(sink, f"{plan.domain}/{plan.task_id}/{k}", profile, plan,
                                  seed=seed + k, start_us=clock, shots=shots,
                                  runtime_log=True)  # fmt: skip
        sink.write("args.json", _args_json(profile, "./results").encode())
    return run_root, out


__all__ = ["WHERE", "write_trials"]
