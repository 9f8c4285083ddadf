"""Screenshot files of runs: sources cached, files hashed and decoded under the image rules,
many at once on a pool, in order."""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from PIL import Image

from deskscore.collectors.images import decode_image, hash_image
from deskscore.collectors.screenshots import (
    EXCERPT_BYTES,
    Hashed,
    HashedDecoded,
    NotAnImage,
    ScreenshotPool,
    SourceCache,
    decode_screenshot,
    load_screenshot,
    open_screenshot,
    read_screenshot,
)
from deskscore.collectors.source import SourceError, open_source


def _png(width: int = 64, height: int = 36, seed: int = 0) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(out, "PNG")
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _bomb_png() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(b"\x00" * 256))
        + _chunk(b"IEND", b"")
    )


def _tiff() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), (10, 20, 30)).save(out, "TIFF")
    return out.getvalue()


@pytest.fixture
def shots(tmp_path: Path) -> dict[str, bytes]:
    """A run folder of screenshots: distinct ones, a repeat, a bad one."""
    files = {
        "chrome/t1/step_1.png": _png(seed=1),
        "chrome/t1/step_2.png": _png(seed=2),
        "chrome/t1/step_3.png": _png(seed=1),  # the first one again
        "chrome/t2/step_1.png": _png(seed=3),
        "chrome/t2/step_2.png": _png(seed=3)[:100],  # cut off
    }
    for path, data in files.items():
        (tmp_path / "run" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "run" / path).write_bytes(data)
    return files


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _zip(tmp_path: Path, name: str, files: dict[str, bytes]) -> str:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for member, data in files.items():
            z.writestr(member, data)
    return str(path)


# --------------------------------------------------------------------------- one file


def test_a_screenshot_file_is_keyed_by_the_sha256_of_its_bytes(shots, tmp_path) -> None:
    with open_source(str(tmp_path / "run")) as source:
        for path, data in shots.items():
            file = read_screenshot(source, path)
            assert (file.path, file.data, file.content_hash) == (path, data, _sha(data))
        with pytest.raises(SourceError):
            read_screenshot(source, "chrome/t9/step_1.png")


def test_a_decoded_screenshot_has_hash_images_facts_and_its_first_bytes(shots) -> None:
    for data in shots.values():
        decoded = decode_screenshot(data)
        assert decoded.facts == hash_image(data)
        assert bytes.fromhex(decoded.excerpt) == data[:EXCERPT_BYTES]


def test_decode_image_gives_pillows_pixels_and_hash_images_facts_but_the_phash(shots) -> None:
    for data in shots.values():
        facts, image = decode_image(data)
        assert facts == hash_image(data)._replace(phash=None)
        if facts.status == "ok":
            with Image.open(io.BytesIO(data)) as pillow:
                assert np.array_equal(np.asarray(image), np.asarray(pillow))
        else:
            assert image is None


def test_a_loaded_screenshot_is_the_image_pillow_decodes(shots, tmp_path) -> None:
    with open_source(str(tmp_path / "run")) as source:
        shot = load_screenshot(source, "chrome/t1/step_2.png")
        assert shot.facts.status == "ok" and shot.facts.phash is None
        assert shot.facts.content_hash == _sha(shots["chrome/t1/step_2.png"])
        with Image.open(tmp_path / "run" / "chrome/t1/step_2.png") as pillow:
            assert np.array_equal(np.asarray(shot.image), np.asarray(pillow))
        cut = load_screenshot(source, "chrome/t2/step_2.png")
        assert (cut.facts.status, cut.image) == ("truncated", None)


def test_opening_refuses_a_bomb_and_formats_outside_the_allow_list(tmp_path) -> None:
    tiff = _tiff()
    with Image.open(io.BytesIO(tiff)) as im:  # Pillow alone would open it
        assert im.format == "TIFF"
    source_uri = _zip(tmp_path, "run.zip", {"a.png": _bomb_png(), "b.tif": tiff, "c.png": _png()})
    with open_source(source_uri) as source:
        with pytest.raises(NotAnImage) as bomb:
            open_screenshot(source, "a.png")
        assert bomb.value.facts.status == "too_large" and "100000x100000" in str(bomb.value)
        with pytest.raises(NotAnImage) as other:
            open_screenshot(source, "b.tif")
        assert other.value.facts.status == "not_an_image"
        with open_screenshot(source, "c.png") as im:
            assert im.size == (64, 36)
        with pytest.raises(SourceError):
            open_screenshot(source, "d.png")


# --------------------------------------------------------------------------- sources


def test_a_source_is_opened_once_and_the_least_recently_used_closed_beyond_the_limit(
    tmp_path,
) -> None:
    uris = [_zip(tmp_path, f"run{i}.zip", {"s.png": _png(seed=i)}) for i in range(4)]
    with SourceCache(keep=2) as cache:
        first = cache.get(uris[0])
        assert cache.get(uris[0]) is first
        second = cache.get(uris[1])
        for uri in uris[2:]:
            cache.get(uri)
        cache.get(uris[0])  # used again: the most recent
        cache.prune()
        assert cache.get(uris[0]) is first
        assert cache.read(uris[0], "s.png").content_hash == _sha(_png(seed=0))
        assert cache.get(uris[3]).read_bytes("s.png") == _png(seed=3)
        reopened = cache.get(uris[1])  # closed by the prune: opened anew
        assert reopened is not second and reopened.read_bytes("s.png") == _png(seed=1)


def test_a_source_that_cannot_be_opened_raises_each_time(tmp_path) -> None:
    missing = str(tmp_path / "gone.zip")
    with SourceCache() as cache:
        for _ in range(2):
            with pytest.raises(SourceError):
                cache.get(missing)
        Path(missing).write_bytes(Path(_zip(tmp_path, "x.zip", {"s.png": _png()})).read_bytes())
        assert cache.read(missing, "s.png").data == _png()


# --------------------------------------------------------------------------- many files


def test_files_are_hashed_in_order_and_each_new_content_decoded_once(shots, tmp_path) -> None:
    paths = [*shots, "chrome/t3/missing.png"]
    known = {_sha(shots["chrome/t1/step_2.png"])}
    with ScreenshotPool(threads=2) as pool, open_source(str(tmp_path / "run")) as source:
        events = list(pool.hash_files(source, paths, decode_new=True, known=known))
    hashed = [e for e in events if isinstance(e, Hashed)]
    assert [e.path for e in hashed] == paths
    for event in hashed[:-1]:
        assert event.content_hash == _sha(shots[event.path]) and event.error is None
    assert hashed[-1].content_hash is None and isinstance(hashed[-1].error, SourceError)
    decoded = {e.path: e.decoded for e in events if isinstance(e, HashedDecoded)}
    assert set(decoded) == {"chrome/t1/step_1.png", "chrome/t2/step_1.png", "chrome/t2/step_2.png"}
    position = {(type(e), e.path): i for i, e in enumerate(events)}
    for path, result in decoded.items():
        assert result == decode_screenshot(shots[path])
        assert position[HashedDecoded, path] > position[Hashed, path]


def test_without_decoding_files_are_only_hashed(shots, tmp_path) -> None:
    with ScreenshotPool(threads=2) as pool, open_source(str(tmp_path / "run")) as source:
        events = list(pool.hash_files(source, list(shots)))
    assert all(isinstance(e, Hashed) for e in events)
    assert [e.content_hash for e in events] == [_sha(d) for d in shots.values()]


class _File(NamedTuple):
    source: str
    path: str


def test_decoding_reads_files_of_several_sources_in_order(shots, tmp_path) -> None:
    zipped = _zip(tmp_path, "other.zip", {"x/step_1.png": _png(128, 72, seed=9)})
    run = str(tmp_path / "run")
    refs = [
        _File(zipped, "x/step_1.png"),
        *(_File(run, path) for path in shots),
        _File(str(tmp_path / "gone"), "step_1.png"),
        _File(run, "chrome/t3/missing.png"),
    ]
    with ScreenshotPool(threads=2, max_pixels=64 * 36) as pool:
        results = list(pool.decode_files(refs))
    assert [ref for ref, _ in results] == refs
    first, *middle, no_source, no_file = (result for _, result in results)
    assert first.facts.content_hash == _sha(_png(128, 72, seed=9))
    assert first.facts.status == "too_large"  # the pool's pixel cap
    for (path, data), result in zip(shots.items(), middle, strict=True):
        assert result == decode_screenshot(data), path
    assert {r.facts.status for r in middle} == {"ok", "truncated"}
    assert isinstance(no_source, SourceError) and isinstance(no_file, SourceError)
