"""OSWorld-style result folders of a collected run (`deskscore collect --osworld-dir D`).

`D/pyautogui/screenshot/<model>/<domain>/<task_id>/` holds what OSWorld's runner writes:
`traj.jsonl` (the very records the steps were built from), `step_<turn>_<ts>.png`,
`result.txt` (`f"{score}\\n"`, only for evaluated episodes, as a runner that could not
evaluate leaves none); plus `instruction.txt` (Agent S's), `token_usage.json` (the model
calls, Agent S3's form), `eval_details.json` (the evaluator's per-metric scores) and, for
interactive tasks, DeskCraft's `interaction_log.json` (with the agent's CALL_USER questions
as `call_user` entries) and `task_instruction.jsonl`. `args.json` sits beside the domains.

So OSWorld's tools, and `deskscore ingest`, read the same run. A task folder is written
aside and swapped in whole when its episode is folded.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deskscore.collectors.live.record import TRAJ_FILE, USAGE_FILE, ScreenshotStore, Unit


def run_root(osworld_dir: str | os.PathLike[str], model: str) -> Path:
    safe = "/".join(p for p in model.replace("\\", "/").split("/") if p not in ("", ".", ".."))
    return Path(osworld_dir) / "pyautogui" / "screenshot" / (safe or "agent")


def write_args(root: Path, args: Mapping[str, Any]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".args.json.{uuid.uuid4().hex}.tmp"
    tmp.write_text(json.dumps(dict(args), indent=2, sort_keys=True, default=str))
    os.replace(tmp, root / "args.json")


def _log_entry(ex: Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "step": ex["step"] if ex["step"] is not None else 0,
        "phase": ex["phase"],
        "type": ex["type"],
    }
    if ex["type"] == "call_user":
        entry["question"] = ex["message"]
    else:
        entry["user_message"] = ex["message"]
        entry["phase_complete"] = ex["phase_complete"]
        if ex.get("reason") is not None:
            entry["reason"] = ex["reason"]
    entry["timestamp"] = ex["timestamp_raw"]
    return entry


def write_task_folder(
    root: Path,
    domain: str,
    task_id: str,
    units: Sequence[Unit],
    store: ScreenshotStore,
    *,
    instruction: str | None,
    interactive: bool,
) -> Path:
    """Write (or replace) one task folder from the episode's units."""
    final = root / domain / task_id
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{task_id}.{uuid.uuid4().hex}.tmp"
    tmp.mkdir()
    try:
        lines, exchanges, calls, end = [], [], [], {}
        for u in units:
            calls.extend(u.meta.get("calls", ()))
            if u.kind == "step":
                record = u.meta["record"]
                lines.append(json.dumps(record, ensure_ascii=False))
                shot = record.get("screenshot_file")
                data = store.read(u.meta["store_path"]) if u.meta.get("store_path") else None
                if isinstance(shot, str) and data is not None:
                    (tmp / shot).write_bytes(data)
            elif u.kind == "interaction":
                exchanges.extend(u.meta["exchanges"])
            elif u.kind == "end":
                end = u.meta
        (tmp / TRAJ_FILE).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        if instruction is not None:
            (tmp / "instruction.txt").write_text(instruction + "\n", encoding="utf-8")
        if calls:
            (tmp / USAGE_FILE).write_text(json.dumps(calls, indent=1, ensure_ascii=False))
        if end.get("result_status") == "ok":
            (tmp / "result.txt").write_text(f"{end['score']}\n")
            details = end.get("details") or {}
            if details.get("metrics"):
                (tmp / "eval_details.json").write_text(
                    json.dumps({"conj": details.get("conj"), "metrics": details["metrics"]})
                )
        if interactive:
            log = [_log_entry(ex) for ex in exchanges]
            (tmp / "interaction_log.json").write_text(
                json.dumps(log, ensure_ascii=False, indent=2), encoding="utf-8"
            )
            (tmp / "task_instruction.jsonl").write_text(
                json.dumps({"instruction": instruction, "interactive": True}, ensure_ascii=False)
                + "\n",
                encoding="utf-8",
            )
        old = None
        if final.exists():
            old = final.parent / f".{task_id}.{uuid.uuid4().hex}.old"
            os.rename(final, old)
        os.rename(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


__all__ = ["run_root", "write_args", "write_task_folder"]
