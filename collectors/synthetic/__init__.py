"""Synthetic OSWorld result archives: realistic, deterministic fixtures for the demo and tests.

`deskscore demo`, tests and benchmarks need archives on a machine without any real run. This
package writes them in exactly the layout real runners write (REFERENCE.md section 1): per task
`traj.jsonl`, `result.txt`, `runtime.log`, `step_<N>_<ts>.png`; per run `args.json`,
`all_result.json` (a Python repr) and `summary/results.json`; published-style zips with a
prefix folder and `__MACOSX/` entries.

Agents are described by `AgentProfile` (datasets/demo_agents.json); what they click, type and
say comes from datasets/synthetic_texts.json. Each episode is planned first (`plan_run`, pure:
outcome, turns, loop, error) and only then rendered to files, so the manifest of what was
generated comes from the same plan the files were written from. Everything is derived from the
seed: the same seed gives byte-identical output.

Modules: profiles (settings), planning (episodes), rendering (actions per action space),
screenshots, sinks (folder and zip writers), usage (model usage files), episodes (one task
folder), runs, demo; deskcraft generates DeskCraft archives
(`python -m deskscore.collectors.synthetic.deskcraft OUT [SEED]`).

Only the standard library is imported at module level; Pillow is imported when screenshots are
drawn, and the human task index only when a demo is written without an explicit task list.
"""

from deskscore.collectors.synthetic.demo import (
    MANIFEST_NAME,
    DemoArchive,
    DemoRun,
    write_demo_archive,
)
from deskscore.collectors.synthetic.planning import (
    ABSENT_RATE,
    INTERRUPTED_RATE,
    Act,
    EpisodePlan,
    Turn,
    plan_run,
    result_kind,
    success_probability,
)
from deskscore.collectors.synthetic.profiles import (
    ACTION_SPACES,
    SCREEN,
    USAGE_STYLES,
    AgentProfile,
    load_profiles,
    task_slice,
)
from deskscore.collectors.synthetic.runs import RunStats, write_run, write_run_zip, write_zip
from deskscore.collectors.synthetic.screenshots import SCREENSHOT_MODES

__all__ = [
    "ABSENT_RATE",
    "ACTION_SPACES",
    "INTERRUPTED_RATE",
    "MANIFEST_NAME",
    "SCREEN",
    "SCREENSHOT_MODES",
    "USAGE_STYLES",
    "Act",
    "AgentProfile",
    "DemoArchive",
    "DemoRun",
    "EpisodePlan",
    "RunStats",
    "Turn",
    "load_profiles",
    "plan_run",
    "result_kind",
    "success_probability",
    "task_slice",
    "write_demo_archive",
    "write_run",
    "write_run_zip",
    "write_zip",
]
