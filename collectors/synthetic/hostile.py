"""A small mixed archive with the damage real ones carry, for comparing Beam runners.

Several runs in the forms releases take (a result folder holding two agents' runs, runs
packed as zips), tiny PNG screenshots, and in them what a killed runner or a careless upload
leaves: a `traj.jsonl` whose last line was cut mid-JSON, a screenshot whose pixel data is not
zlib data, a screenshot cut in half, a stray binary file in a task folder, and in a zip a
member whose path climbs out of the archive. Same arguments, same bytes.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
import zlib
from pathlib import Path

from deskscore.collectors.synthetic.profiles import load_profiles, task_slice
from deskscore.collectors.synthetic.runs import write_run, write_zip

CUT_LINE = b'{"step_num": 99, "action_timestamp": "20250701@120000", "action": "pyautogui.cl'
"""What a runner killed while writing a step leaves at the end of traj.jsonl."""
STRAY_FILE = "core"
"""A binary file no reader knows, left in a task folder."""
ESCAPING_MEMBER = "../outside.txt"
"""A zip member whose path leaves the archive (never listed nor opened)."""


def garbage_png(seed: int = 1) -> bytes:
    """A PNG whose chunks are well formed but whose pixel data is not zlib data."""
    header = struct.pack(">IIBBBBB", 64, 36, 8, 2, 0, 0, 0)
    junk = hashlib.sha256(str(seed).encode()).digest() * 8

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", junk) + chunk(b"IEND", b"")
    )


def _damage_folder(run_root: Path) -> None:
    """Cut the last line of the first trajectory, break two distinct screenshots, and leave a
    stray binary file beside the first trajectory."""
    trajectories = sorted(run_root.rglob("traj.jsonl"))
    first = trajectories[0]
    with open(first, "ab") as f:
        f.write(CUT_LINE)
    (first.parent / STRAY_FILE).write_bytes(bytes(range(256)) * 4)
    shots: dict[bytes, Path] = {}
    for path in sorted(run_root.rglob("*.png")):
        shots.setdefault(path.read_bytes(), path)
    corrupt, truncated = list(shots.values())[-2:]
    corrupt.write_bytes(garbage_png())
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])


def _add_escaping_member(zip_path: Path) -> None:
    info = zipfile.ZipInfo(ESCAPING_MEMBER, date_time=(2025, 7, 1, 12, 0, 0))
    info.external_attr = 0o100644 << 16
    with zipfile.ZipFile(zip_path, "a") as zf:
        zf.writestr(info, b"not part of any run\n")


def write_mixed_archive(root: Path, *, zips: int = 1, per_domain: int = 1) -> list[Path]:
    """Write under `root` a result folder of two runs and `zips` runs packed as zips, each of
    `per_domain` tasks per OSWorld domain, damaged as the module says (the folder: a cut line,
    a stray file, two bad screenshots; the first zip: an escaping member, and a cut line inside
    it). Returns the sources to ingest: the folder, then the zips."""
    profiles = load_profiles()
    tasks = task_slice(per_domain=per_domain)
    results = root / "results"
    for i in range(2):
        write_run(results, profiles[i], tasks, seed=i, screenshots="tiny")
    _damage_folder(results)
    sources = [results]
    for k in range(zips):
        folder = write_run(
            root / f"zip{k}", profiles[(2 + k) % len(profiles)], tasks, seed=10 + k,
            screenshots="tiny",
        )  # fmt: skip
        if k == 0:
            with open(sorted(folder.rglob("traj.jsonl"))[-1], "ab") as f:
                f.write(CUT_LINE)
        zip_path = write_zip(folder, root / f"run{k}.zip")
        if k == 0:
            _add_escaping_member(zip_path)
        sources.append(zip_path)
    return sources


__all__ = ["CUT_LINE", "ESCAPING_MEMBER", "STRAY_FILE", "garbage_png", "write_mixed_archive"]
