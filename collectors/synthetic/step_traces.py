"""Synthetic runs of the step-trace form: `<run>/<task_id>/step_NN_trace.json` + `results.csv`.

One public runner is known to write the form (`deskscore.collectors.step_traces`); others'
fields are guessed. These archives vary what a reader of it must survive: actions as a code
string, an OSWorld Claude dict or a list of code strings; the reply under `response` or
`thought`, maybe nested; ISO or epoch timestamps; usage objects; step numbers padded
(step_01) or not (step_1, so step_10 sorts before step_2 by name); results.csv headers in
any case, with or without a domain column, or no header at all (`task_id,score,last step
index`, as that runner appends). Everything comes from the seed; the same seed gives the same
bytes.

    python -m deskscore.collectors.synthetic.step_traces OUT [SEED]
"""

from __future__ import annotations

import csv
import io
import json
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RUN_FOLDER = "results/run_20260101_120000"
_HEADERS = (("task_id", "domain", "score"), ("Task ID", "App", "Success"), ("uuid", "result"))
_START = 1_767_268_800.0  # 2026-01-01T12:00:00Z


@dataclass(frozen=True)
class TraceTask:
    """What was written for one task: folder, its steps and its result row."""

    domain: str
    task_id: str
    folder: str
    n_steps: int
    score: float | None
    """The result written to results.csv; None: the task has no row."""
    padded: bool


def _png(rng: random.Random) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), tuple(rng.randrange(256) for _ in range(3))).save(buf, "PNG")
    return buf.getvalue()


def _action(rng: random.Random, last: bool, success: bool, infeasible: bool) -> Any:
    if last:  # OSWorld scores an infeasible task 1 exactly when the agent ends with FAIL
        return "DONE" if success != infeasible else "FAIL"
    x, y = rng.randrange(20, 1900), rng.randrange(20, 1060)
    shape = rng.randrange(3)
    if shape == 0:
        return f"import pyautogui; pyautogui.click({x}, {y})"
    if shape == 1:
        return {"name": "computer", "input": {"action": "left_click", "coordinate": [x, y]},
                "id": f"toolu_{rng.randrange(10**8):08d}", "action_type": "tool_use",
                "command": f"pyautogui.click({x}, {y})"}  # fmt: skip
    return [f"pyautogui.moveTo({x}, {y})", "pyautogui.write('hello')", "pyautogui.press('enter')"]


def trace_object(
    rng: random.Random, step: int, *, last: bool, success: bool, infeasible: bool, shot: str
) -> dict:
    """One step file's content, in one of the shapes the reader looks for."""
    when = _START + 7.5 * step
    reply = f"Step {step}: " + rng.choice(("I open the menu.", "The field is ready.", "Done."))
    obj: dict[str, Any] = {"step": step, "action": _action(rng, last, success, infeasible)}
    if rng.random() < 0.5:
        obj["response"] = reply
    else:
        obj["model_output"] = {"thought": reply}
    obj["screenshot"] = f"screenshots/{shot}" if rng.random() < 0.5 else shot
    iso = datetime.fromtimestamp(when, UTC).isoformat()
    obj["timestamp"] = when if rng.random() < 0.5 else iso
    obj["usage"] = {"input_tokens": 1000 + 10 * step, "output_tokens": 50 + step}
    return obj


def write_trace_run(
    root: str | Path,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
    header: int | None = 0,
    with_domain: bool = True,
) -> list[TraceTask]:
    """A run of `tasks` (rows with domain and task_id) under `root`/RUN_FOLDER: one folder per
    task, a results.csv with a row per task except the last (a task without a result).
    `header` picks one of the header spellings, None none: bare `task_id,score,last step
    index` records; `with_domain` adds the domain column (when the spelling has one)."""
    rng = random.Random(f"step-traces-{seed}")
    run = Path(root) / RUN_FOLDER
    written = []
    for i, t in enumerate(tasks):
        folder = run / t["task_id"]
        folder.mkdir(parents=True, exist_ok=True)
        n = rng.randrange(2, 13)
        success = rng.random() < 0.5
        padded = i % 2 == 0
        for step in range(1, n + 1):
            name = f"step_{step:02d}" if padded else f"step_{step}"
            shot = f"{name}.png"
            (folder / shot).write_bytes(_png(rng))
            obj = trace_object(rng, step, last=step == n, success=success,
                               infeasible=bool(t.get("infeasible")), shot=shot)  # fmt: skip
            (folder / f"{name}_trace.json").write_text(json.dumps(obj, indent=1))
        score = (1.0 if success else 0.0) if i < len(tasks) - 1 else None
        written.append(
            TraceTask(
                t["domain"], t["task_id"], folder.relative_to(root).as_posix(), n, score, padded
            )
        )
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    scored = [w for w in written if w.score is not None]
    if header is None:
        out.writerows([w.task_id, f"{w.score:g}", w.n_steps - 1] for w in scored)
    else:
        cols = _HEADERS[header % len(_HEADERS)]
        keep = [c for c in cols if with_domain or c.lower() not in ("domain", "app")]
        out.writerow(keep)
        for w in scored:
            cells = {cols[0]: w.task_id, cols[-1]: f"{w.score:g}"}
            if len(cols) == 3:
                cells[cols[1]] = w.domain
            out.writerow([cells[c] for c in keep])
    (run / "results.csv").write_text(buf.getvalue())
    return written


def write_trace_archive(root: str | Path, n_tasks: int = 6, seed: int = 0) -> list[TraceTask]:
    """A run over the first `n_tasks` OSWorld tasks of the bundled human index, one per
    domain in turn."""
    from deskscore.collectors.human import load_bundled

    by_domain: dict[str, list[dict]] = {}
    for row in load_bundled("verified"):
        by_domain.setdefault(row["domain"], []).append(row)
    picked = [rows[k] for k in range(n_tasks) for rows in by_domain.values() if k < len(rows)]
    picked = picked[:n_tasks]
    return write_trace_run(root, picked, seed=seed)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(__doc__)
        return 2
    written = write_trace_archive(args[0], seed=int(args[1]) if len(args) > 1 else 0)
    print(f"{len(written)} task folder(s) of the step-trace form under {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
