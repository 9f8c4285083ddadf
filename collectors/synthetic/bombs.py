"""Tiny hostile archives that once exhausted memory: what the ingest memory test and
`benchmarks/memory_bombs.py` feed to `deskscore ingest`.

Each is a few KB on disk and unfolds into millions of lines or gigabytes:

- `blank_lines`: a 4 KB zip whose traj.jsonl is 4 million blank lines (once one 1.3 KB
  quarantine row per line, 5.3 GB);
- `newline_members`: a 20 KB zip of 8 task folders, each traj.jsonl 2 MiB of newlines;
- `sparse_file`: a run folder whose traj.jsonl is a 3 GB sparse file (nothing on disk);
- `mixed_lines`: a zip whose traj.jsonl alternates bad lines of two reasons (no two
  consecutive lines share a reason, so no run of lines shares a row);
- `many_tasks`: a zip of 300 task folders of 20,000 `{}` lines each (6 million step rows
  unbounded, inside the zip ratio limit);
- `python_literal`: a zip whose run's all_result.json is an 8 MB Python list of zeros (3.9 GB
  as `ast.literal_eval` parses it), beside one task.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

TASK_ID = "030eeff7-b492-4218-b312-701ec99ee0cc"


def _task(i: int) -> str:
    return f"{TASK_ID[:-6]}{i:06d}"


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def blank_lines(folder: Path, n: int = 4_000_000) -> Path:
    return _zip(
        folder / "blank_lines.zip",
        {f"run/chrome/{TASK_ID}/traj.jsonl": b"\n" * n, f"run/chrome/{TASK_ID}/result.txt": b"1\n"},
    )


def newline_members(folder: Path, members: int = 8, size: int = 2 << 20) -> Path:
    return _zip(
        folder / "newline_members.zip",
        {f"run/chrome/{_task(i)}/traj.jsonl": b"\n" * size for i in range(members)},
    )


def sparse_file(folder: Path, size: int = 3 << 30) -> Path:
    task = folder / "sparse_file" / "run" / "chrome" / TASK_ID
    task.mkdir(parents=True, exist_ok=True)
    with open(task / "traj.jsonl", "wb") as f:
        f.truncate(size)
    (task / "result.txt").write_text("1\n")
    return folder / "sparse_file"


def mixed_lines(folder: Path, n: int = 2_000_000) -> Path:
    return _zip(
        folder / "mixed_lines.zip", {f"run/chrome/{TASK_ID}/traj.jsonl": b"x\n\n" * (n // 2)}
    )


def many_tasks(folder: Path, tasks: int = 300, lines: int = 20_000) -> Path:
    traj = b"{}\n" * lines
    return _zip(
        folder / "many_tasks.zip",
        {f"run/chrome/{_task(i)}/traj.jsonl": traj for i in range(tasks)},
    )


def python_literal(folder: Path, n: int = 4_000_000) -> Path:
    return _zip(
        folder / "python_literal.zip",
        {
            "run/all_result.json": b"{'chrome': [" + b"0," * n + b"]}",
            f"run/chrome/{TASK_ID}/traj.jsonl": b'{"step_num": 1, "action": "DONE"}\n',
            f"run/chrome/{TASK_ID}/result.txt": b"1\n",
        },
    )


BOMBS = {
    "blank_lines": blank_lines,
    "newline_members": newline_members,
    "sparse_file": sparse_file,
    "mixed_lines": mixed_lines,
    "many_tasks": many_tasks,
    "python_literal": python_literal,
}
"""Name -> writer (folder -> the source to ingest)."""

ISSUE_BOMBS = ("blank_lines", "newline_members", "sparse_file")
"""The three of the issue that reported them."""


def write_bombs(folder: Path, names: tuple[str, ...] = tuple(BOMBS)) -> dict[str, Path]:
    """Write the named bombs under `folder`; name -> the source to ingest."""
    folder.mkdir(parents=True, exist_ok=True)
    return {name: BOMBS[name](folder) for name in names}


__all__ = ["BOMBS", "ISSUE_BOMBS", "TASK_ID", "write_bombs"]
