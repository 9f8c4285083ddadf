"""The hash stage: every referenced screenshot hashed, each content decoded once, ever."""

from __future__ import annotations

import hashlib
import io
import shutil
import struct
import zlib
from collections import Counter
from pathlib import Path

import imagehash
import pytest
from PIL import Image

from deskscore.collectors.human import load_bundled
from deskscore.collectors.images import phash_to_int
from deskscore.collectors.screenshot_tables import QUARANTINE_FILE
from deskscore.collectors.source import open_source
from deskscore.collectors.synthetic import load_profiles, write_run, write_zip
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.jobs.hash import run_hash
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import HashOptions, IngestOptions
from deskscore.pipelines.stages.hash import REFS_QUARANTINE
from deskscore.schemas import conform_rows
from deskscore.sql import connect


def _digest(root: Path) -> dict[str, str]:
    """Every slot of the warehouse and the file holding it (named by its bytes)."""
    return Warehouse(root).snapshot()


def _files_by_ref(wh: Path) -> dict[tuple[str, str], bytes]:
    """(run_id, screenshot_path) -> the file's bytes, read from each run's source."""
    out = {}
    for run in Warehouse(wh).read("runs").to_pylist():
        with open_source(run["source"]) as source:
            for ref in Warehouse(wh).read("screenshot_refs").to_pylist():
                if ref["run_id"] == run["run_id"] and source.exists(ref["screenshot_path"]):
                    out[run["run_id"], ref["screenshot_path"]] = source.read_bytes(
                        ref["screenshot_path"]
                    )
    return out


def _one_task_per_domain() -> list[dict]:
    seen: set[str] = set()
    return [
        r for r in load_bundled("verified") if not (r["domain"] in seen or seen.add(r["domain"]))
    ]


def _quarantine_rows(wh: Path) -> list[dict]:
    """The screenshot quarantine rows: of the files (and sources) read, and of the images."""
    return [
        q
        for slot in (REFS_QUARANTINE, QUARANTINE_FILE)
        for q in Warehouse(wh).read("quarantine", file=slot).to_pylist()
    ]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A looping agent's run as a folder (identical screenshots repeat) and another as a zip."""
    root = tmp_path_factory.mktemp("shots")
    profiles = load_profiles()
    tasks = _one_task_per_domain()
    results = root / "results"
    write_run(results, profiles[3], tasks, seed=3, screenshots="tiny")
    zipped = write_run(root / "to_zip", profiles[2], tasks, seed=5, screenshots="tiny")
    return {"results": results, "zip": write_zip(zipped, root / "claw.zip")}


@pytest.fixture(scope="module")
def hashed(archive, tmp_path_factory) -> tuple[Path, dict[str, int]]:
    wh = tmp_path_factory.mktemp("wh")
    run_ingest(
        IngestOptions(
            str(wh), sources=(str(archive["results"]), str(archive["zip"])), engine="direct"
        )
    )
    return wh, run_hash(HashOptions(str(wh)))


def test_every_referenced_screenshot_is_hashed(hashed) -> None:
    wh, counters = hashed
    con = connect(wh)
    (n_shots,) = con.sql("SELECT count(*) FROM steps WHERE screenshot_path IS NOT NULL").fetchall()[
        0
    ]
    refs = Warehouse(wh).read("screenshot_refs").to_pylist()
    conform_rows("screenshot_refs", refs)
    assert len(refs) == n_shots == counters["refs"] == counters["files_read"] > 100
    files = _files_by_ref(wh)
    for ref in refs:
        data = files[ref["run_id"], ref["screenshot_path"]]
        assert ref["content_hash"] == hashlib.sha256(data).hexdigest()
    rows = {r["content_hash"]: r for r in Warehouse(wh).read("screenshots").to_pylist()}
    conform_rows("screenshots", rows.values())
    assert set(rows) == {r["content_hash"] for r in refs}
    for ref in refs[::7]:
        row = rows[ref["content_hash"]]
        data = files[ref["run_id"], ref["screenshot_path"]]
        expected = imagehash.phash(Image.open(io.BytesIO(data)))
        assert row["phash"] == phash_to_int(expected)
        assert (row["status"], row["format"], row["width"], row["height"]) == ("ok", "PNG", 64, 36)
        assert row["n_bytes"] == len(data)
    assert counters["quarantined"] == 0 and not _quarantine_rows(wh)


def test_identical_screenshots_are_decoded_once(hashed) -> None:
    wh, counters = hashed
    refs = Warehouse(wh).read("screenshot_refs").to_pylist()
    shown = Counter(r["content_hash"] for r in refs)
    assert max(shown.values()) > 1  # the looping agent repeats its screen
    assert counters["decoded"] == counters["distinct"] == len(shown) < len(refs)
    assert counters["known"] == 0
    rows = Warehouse(wh).read("screenshots").to_pylist()
    assert len(rows) == len({r["content_hash"] for r in rows}) == len(shown)


def test_each_content_is_decoded_once_by_the_first_run_that_shows_it(hashed) -> None:
    wh, counters = hashed
    by_run: dict[str, set[str]] = {}
    for r in Warehouse(wh).read("screenshot_refs").to_pylist():
        by_run.setdefault(r["run_id"], set()).add(r["content_hash"])
    first, *others = sorted(by_run)
    later = set().union(*(by_run[r] for r in others)) - by_run[first]
    assert later and counters["to_decode"] == counters["decoded"] == len(by_run[first]) + len(later)
    rows = Warehouse(wh).read("screenshots").to_pylist()
    assert {r["content_hash"] for r in rows if r["run_id"] == first} == by_run[first]


def test_a_second_pass_decodes_nothing_and_rewrites_the_same_bytes(hashed, tmp_path) -> None:
    wh = tmp_path / "wh"
    shutil.copytree(hashed[0], wh)
    before = _digest(wh)
    counters = run_hash(HashOptions(warehouse=str(wh)))
    assert counters["decoded"] == 0
    assert counters["known"] == counters["distinct"] == hashed[1]["distinct"]
    assert _digest(wh) == before


def test_a_screenshot_two_runs_show_is_decoded_once_by_the_smallest_run_id(
    archive, tmp_path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(archive["results"], copy)
    wh = tmp_path / "wh"
    run_ingest(
        IngestOptions(str(wh), sources=(str(archive["results"]), str(copy)), engine="direct")
    )
    counters = run_hash(HashOptions(str(wh)))
    refs = Warehouse(wh).read("screenshot_refs").to_pylist()
    by_run: dict[str, set[str]] = {}
    for r in refs:
        by_run.setdefault(r["run_id"], set()).add(r["content_hash"])
    assert len(by_run) == 2 and len(set(map(frozenset, by_run.values()))) == 1
    assert counters["decoded"] == len(next(iter(by_run.values())))
    rows = Warehouse(wh).read("screenshots").to_pylist()
    assert {r["run_id"] for r in rows} == {min(by_run)}


def test_hashing_one_run_then_all_decodes_only_what_is_new(archive, tmp_path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(archive["results"], copy)
    wh = tmp_path / "wh"
    run_ingest(
        IngestOptions(str(wh), sources=(str(archive["results"]), str(copy)), engine="direct")
    )
    later = max(r["run_id"] for r in Warehouse(wh).read("runs").to_pylist())
    first = run_hash(HashOptions(warehouse=str(wh), runs=(later,)))
    assert first["runs"] == 1 and first["decoded"] == first["distinct"] > 0
    second = run_hash(HashOptions(warehouse=str(wh)))
    assert second["runs"] == 2 and second["decoded"] == 0
    assert second["known"] == first["distinct"]
    # rows stay where they were first hashed
    assert {r["run_id"] for r in Warehouse(wh).read("screenshots").to_pylist()} == {later}


def _garbage_idat_png(seed: int) -> bytes:
    """A PNG whose chunks are intact but whose pixel data is not zlib data."""
    ihdr = struct.pack(">IIBBBBB", 64, 36, 8, 2, 0, 0, 0)
    junk = hashlib.sha256(str(seed).encode()).digest() * 8

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", junk) + chunk(b"IEND", b"")


def _bomb_png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\x00" * 256)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def test_bad_screenshots_are_quarantined_and_the_rest_is_hashed(archive, tmp_path) -> None:
    results = tmp_path / "results"
    shutil.copytree(archive["results"], results)
    shots = sorted(results.rglob("*.png"))
    distinct = {}
    for path in shots:
        distinct.setdefault(path.read_bytes(), path)
    targets = list(distinct.values())[:5]
    truncated, corrupt, jpeg, bomb, missing = targets
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    corrupt.write_bytes(_garbage_idat_png(1))
    out = io.BytesIO()
    Image.open(jpeg).convert("RGB").save(out, "JPEG")
    jpeg.write_bytes(out.getvalue())
    bomb.write_bytes(_bomb_png())
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(results),), engine="direct"))
    missing.unlink()  # after ingest: the step names it, the file is gone

    counters = run_hash(HashOptions(warehouse=str(wh)))
    rel = {p: p.relative_to(results).as_posix() for p in targets}
    quarantine = {q["location"]: q for q in _quarantine_rows(wh)}
    conform_rows("quarantine", quarantine.values())
    assert {loc: q["reason"] for loc, q in quarantine.items()} == {
        rel[truncated]: "truncated_image",
        rel[corrupt]: "corrupt_image",
        rel[bomb]: "image_too_large",
        rel[missing]: "unreadable_screenshot",
    }
    for location, q in quarantine.items():
        assert q["source"] == str(results)
        assert location in q["message"] and "step " in q["message"]
        assert "deskscore hash" in q["message"] or "check where" in q["message"]
    assert "100000x100000" in quarantine[rel[bomb]]["message"]
    assert counters["bad_images"] == 3 and counters["unreadable"] == 1

    refs = {r["screenshot_path"]: r for r in Warehouse(wh).read("screenshot_refs").to_pylist()}
    assert [p for p, r in refs.items() if r["content_hash"] is None] == [rel[missing]]
    rows = {r["content_hash"]: r for r in Warehouse(wh).read("screenshots").to_pylist()}
    status = {path: rows[refs[rel[path]]["content_hash"]] for path in (truncated, corrupt, bomb)}
    assert {p: r["status"] for p, r in status.items()} == {
        truncated: "truncated",
        corrupt: "corrupt",
        bomb: "too_large",
    }
    assert all(r["phash"] is None for r in status.values())
    jpeg_row = rows[refs[rel[jpeg]]["content_hash"]]
    assert (jpeg_row["status"], jpeg_row["format"]) == ("ok", "JPEG")
    ok = [r for r in rows.values() if r["status"] == "ok"]
    assert len(ok) == len(rows) - 3 and all(r["phash"] is not None for r in ok)

    before = _digest(wh)
    again = run_hash(HashOptions(warehouse=str(wh)))
    assert again["decoded"] == 0 and _digest(wh) == before


def test_a_source_that_cannot_be_opened_keeps_the_last_pass(archive, tmp_path) -> None:
    results = tmp_path / "results"
    shutil.copytree(archive["results"], results)
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(results),), engine="direct"))
    run_hash(HashOptions(str(wh)))
    first = _digest(wh)
    moved = tmp_path / "moved"
    results.rename(moved)
    counters = run_hash(HashOptions(warehouse=str(wh)))
    assert counters["decoded"] == 0
    [row] = _quarantine_rows(wh)
    assert row["reason"] == "unreadable_source" and str(results) in row["message"]
    after = _digest(wh)
    assert {k: v for k, v in after.items() if not k.endswith(f"/{REFS_QUARANTINE}")} == first
    moved.rename(results)
    run_hash(HashOptions(warehouse=str(wh)))
    assert _digest(wh) == first


def test_real_screenshots_are_all_hashed_with_their_sizes(sec_eval_dir: Path, tmp_path) -> None:
    wh = tmp_path / "wh"
    run_ingest(
        IngestOptions(
            str(wh), sources=(str(sec_eval_dir),), layout="{domain}/{task_id}", engine="direct"
        )
    )
    counters = run_hash(HashOptions(str(wh)))
    refs = Warehouse(wh).read("screenshot_refs").to_pylist()
    on_disk = sorted(sec_eval_dir.rglob("*.png"))
    assert len(refs) == counters["files_read"] > 0
    assert {r["screenshot_path"] for r in refs} <= {
        p.relative_to(sec_eval_dir).as_posix() for p in on_disk
    }
    digests = {}
    for ref in refs:
        data = (sec_eval_dir / ref["screenshot_path"]).read_bytes()
        digests[ref["screenshot_path"]] = hashlib.sha256(data).hexdigest()
        assert ref["content_hash"] == digests[ref["screenshot_path"]]
    rows = {r["content_hash"]: r for r in Warehouse(wh).read("screenshots").to_pylist()}
    assert len(rows) == len(set(digests.values())) == counters["decoded"]
    assert counters["distinct"] + (len(refs) - len(set(digests.values()))) == len(refs)
    for path, digest in digests.items():
        row = rows[digest]
        with Image.open(sec_eval_dir / path) as im:
            assert (row["width"], row["height"]) == im.size
        assert row["status"] == "ok" and row["phash"] is not None


def test_sql_joins_steps_to_screenshots_and_measures_hamming_distances(hashed) -> None:
    wh, _ = hashed
    con = connect(wh)
    joined = con.sql(
        """
        SELECT s.run_id, s.domain, s.task_id, s.step_idx, r.screenshot_path, h.phash,
               bit_count(xor(h.phash, lag(h.phash) OVER w)) AS distance,
               lag(r.screenshot_path) OVER w AS previous_path,
               r.content_hash = lag(r.content_hash) OVER w AS same_file
        FROM steps s
        JOIN screenshot_refs r USING (run_id, domain, task_id, step_idx)
        JOIN screenshots h ON h.content_hash = r.content_hash
        WINDOW w AS (PARTITION BY s.run_id, s.domain, s.task_id ORDER BY s.step_idx)
        ORDER BY s.run_id, s.domain, s.task_id, s.step_idx
        """
    ).fetchall()
    (n_shots,) = con.sql("SELECT count(*) FROM steps WHERE screenshot_path IS NOT NULL").fetchall()[
        0
    ]
    assert len(joined) == n_shots
    files = _files_by_ref(wh)
    pairs = [row for row in joined if row[6] is not None]
    assert any(row[8] for row in pairs) and any(row[6] > 0 for row in pairs)
    for run_id, _, _, _, path, _, distance, previous, same in pairs[::5]:
        here = imagehash.phash(Image.open(io.BytesIO(files[run_id, path])))
        there = imagehash.phash(Image.open(io.BytesIO(files[run_id, previous])))
        assert distance == here - there
        if same:
            assert distance == 0


def test_the_options_pixel_cap_reaches_both_decoding_stages(archive, tmp_path) -> None:
    wh = tmp_path / "wh"
    run_ingest(
        IngestOptions(
            str(wh), sources=(str(archive["results"]), str(archive["zip"])), engine="direct"
        )
    )
    counters = run_hash(HashOptions(warehouse=str(wh), threads=1, max_pixels=64 * 36 - 1))
    rows = Warehouse(wh).read("screenshots").to_pylist()
    assert len({r["run_id"] for r in rows}) == 2  # decoded while reading, and in batches
    assert {r["status"] for r in rows} == {"too_large"}
    assert counters["bad_images"] == counters["decoded"] == len(rows)
    reasons = {q["reason"] for q in _quarantine_rows(wh)}
    assert reasons == {"image_too_large"}


def test_a_fifo_that_replaced_a_screenshot_after_ingest_is_quarantined_not_waited_on(
    archive, tmp_path
) -> None:
    import os
    import subprocess
    import sys

    results = tmp_path / "results"
    shutil.copytree(archive["results"], results)
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(results),), engine="direct"))
    shot = sorted(results.rglob("*.png"))[0]
    shot.unlink()
    os.mkfifo(shot)
    cmd = [sys.executable, "-m", "deskscore.pipelines.cli.main", "hash", "--warehouse", str(wh)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:  # subprocess.run has killed it
        pytest.fail("deskscore hash blocked on a FIFO")
    assert done.returncode == 0, done.stderr
    [row] = _quarantine_rows(wh)
    assert row["location"] == shot.relative_to(results).as_posix()
    assert row["reason"] == "unreadable_screenshot" and "FIFO" in row["message"]
