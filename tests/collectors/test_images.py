"""Screenshot facts: imagehash's phash bit for bit, and a status for any bytes, never a raise."""

from __future__ import annotations

import hashlib
import io
import struct
import warnings
import zlib
from pathlib import Path

import imagehash
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from deskscore.collectors import images
from deskscore.collectors.images import (
    STATUSES,
    hamming,
    hash_image,
    int_to_phash_hex,
    phash_of,
    phash_to_int,
)


def _png(im: Image.Image) -> bytes:
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


def _jpeg(im: Image.Image) -> bytes:
    out = io.BytesIO()
    im.convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_claiming(width: int, height: int) -> bytes:
    """A well-formed PNG whose IHDR claims width x height, with a few bytes of pixel data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(b"\x00" * 1024))
        + _chunk(b"IEND", b"")
    )


def _desktop(width: int, height: int, mode: str = "RGB", seed: int = 0) -> Image.Image:
    """Screenshot-like content: flat blocks, a few sharp edges, some noise."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (height // 40 + 1, width // 40 + 1, 3), dtype=np.uint8)
    pixels = np.kron(blocks, np.ones((40, 40, 1), dtype=np.uint8))[:height, :width]
    noise = rng.integers(0, 24, (height, width, 3), dtype=np.uint8)
    pixels = np.where(rng.random((height, width, 1)) < 0.1, pixels + noise, pixels)
    return Image.fromarray(np.ascontiguousarray(pixels), "RGB").convert(mode)


def _real_screenshots(sec_eval_dir: Path, every: int = 5) -> list[Path]:
    paths = sorted(sec_eval_dir.rglob("*.png"))
    assert paths, sec_eval_dir
    return paths[::every]


# --------------------------------------------------------------------------- the phash


def test_phash_is_imagehashs_bit_for_bit_on_real_screenshots(sec_eval_dir: Path) -> None:
    for path in _real_screenshots(sec_eval_dir):
        facts = hash_image(path.read_bytes())
        with Image.open(path) as im:
            expected = imagehash.phash(im)
            assert (facts.width, facts.height) == im.size
        assert facts.status == "ok" and facts.message is None, path
        assert facts.phash == phash_to_int(expected), path
        assert int_to_phash_hex(facts.phash) == str(expected)


@pytest.mark.parametrize(
    ("size", "mode"),
    [
        ((1920, 1080), "RGB"),
        ((1366, 768), "RGB"),  # a width that 32 does not divide
        ((1280, 720), "RGBA"),
        ((800, 600), "P"),
        ((300, 400), "L"),
        ((33, 2100), "LA"),
        ((2560, 40), "1"),
        ((64, 36), "RGB"),  # small: Pillow's own resize
        ((7, 5), "RGB"),  # smaller than the 32x32 the hash shrinks to
    ],
)
def test_phash_is_imagehashs_on_generated_images(size: tuple[int, int], mode: str) -> None:
    im = _desktop(*size, mode=mode, seed=size[0])
    assert phash_of(im) == phash_to_int(imagehash.phash(im))


def test_pixels_read_with_or_without_pyarrow_give_the_same_phash(
    sec_eval_dir: Path, monkeypatch
) -> None:
    import sys

    import pyarrow  # noqa: F401 - loaded: Pillow's memory is read through Arrow

    path = _real_screenshots(sec_eval_dir)[1]
    with Image.open(path) as im:
        expected = phash_to_int(imagehash.phash(im))
        grey = im.convert("L")
    assert np.array_equal(images._pixels(grey), np.asarray(grey))
    assert hash_image(path.read_bytes()).phash == expected
    monkeypatch.delitem(sys.modules, "pyarrow")  # not loaded: a copy of the pixels
    assert np.array_equal(images._pixels(grey), np.asarray(grey))
    assert hash_image(path.read_bytes()).phash == expected


@settings(max_examples=30, deadline=None)
@given(
    width=st.integers(33, 900),
    height=st.integers(33, 900),
    seed=st.integers(0, 2**32 - 1),
    flat=st.booleans(),
)
def test_the_matrix_shrink_is_pillows_lanczos_resize(
    width: int, height: int, seed: int, flat: bool
) -> None:
    if width * height < 1 << 16:
        height = (1 << 16) // width + 1
    grey = _desktop(width, height, "L", seed) if flat else None
    if grey is None:
        rng = np.random.default_rng(seed)
        grey = Image.fromarray(rng.integers(0, 256, (height, width), dtype=np.uint8), "L")
    assert images.matrix_shrink_used(width, height)
    expected = np.asarray(grey.resize((32, 32), Image.Resampling.LANCZOS))
    assert np.array_equal(images.shrink_32(grey), expected)


def test_the_signed_phash_round_trips_to_imagehash(sec_eval_dir: Path) -> None:
    values = [hash_image(p.read_bytes()).phash for p in _real_screenshots(sec_eval_dir, 25)]
    assert any(v < 0 for v in values) and all(-(2**63) <= v < 2**63 for v in values)
    for value in values:
        back = imagehash.hex_to_hash(int_to_phash_hex(value))
        assert phash_to_int(back) == value
    assert phash_to_int("ffffffffffffffff") == -1
    assert phash_to_int("8000000000000000") == -(2**63)
    assert phash_to_int("7fffffffffffffff") == 2**63 - 1
    with pytest.raises(ValueError):
        phash_to_int("1" + "0" * 16)


def test_sql_bit_count_of_xor_is_imagehashs_hamming_distance(sec_eval_dir: Path) -> None:
    import duckdb

    paths = _real_screenshots(sec_eval_dir, 15)
    hashes = []
    for path in paths:
        with Image.open(path) as im:
            hashes.append(imagehash.phash(im))
    values = [phash_to_int(h) for h in hashes]
    pairs = [(i, j) for i in range(len(values)) for j in range(i + 1, len(values))]
    con = duckdb.connect()
    con.execute("CREATE TABLE p (i INTEGER, j INTEGER, a BIGINT, b BIGINT)")
    con.executemany(
        "INSERT INTO p VALUES (?, ?, ?, ?)", [(i, j, values[i], values[j]) for i, j in pairs]
    )
    rows = con.execute("SELECT i, j, bit_count(xor(a, b)) FROM p ORDER BY i, j").fetchall()
    assert len(rows) == len(pairs) > 10
    assert any(d > 0 for _, _, d in rows)
    for i, j, distance in rows:
        assert distance == hashes[i] - hashes[j] == hamming(values[i], values[j])


# --------------------------------------------------------------------------- bad bytes


@pytest.fixture(scope="module")
def screenshot(sec_eval_dir: Path) -> bytes:
    return _real_screenshots(sec_eval_dir)[0].read_bytes()


def test_a_png_cut_in_half_is_truncated(screenshot: bytes) -> None:
    facts = hash_image(screenshot[: len(screenshot) // 2])
    assert facts.status == "truncated" and facts.phash is None
    assert (facts.format, facts.width, facts.height) == ("PNG", 1024, 768)
    assert "cut off" in facts.message and str(len(screenshot) // 2) in facts.message


def test_damaged_png_data_is_corrupt(screenshot: bytes) -> None:
    damaged = bytearray(screenshot)
    middle = len(damaged) // 2
    damaged[middle : middle + 64] = bytes(64)
    facts = hash_image(bytes(damaged))
    assert facts.status == "corrupt" and facts.phash is None
    assert facts.content_hash == hashlib.sha256(damaged).hexdigest()
    assert "damaged" in facts.message


def test_a_png_header_claiming_100000_squared_is_refused_before_pillow(monkeypatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)  # Pillow's own guard off
    facts = hash_image(_png_claiming(100_000, 100_000))
    assert facts.status == "too_large" and facts.phash is None
    assert (facts.width, facts.height) == (100_000, 100_000)
    assert facts.message.startswith("header claims 100000x100000 (10000000000 pixels)")


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("gif", b"GIF89a" + struct.pack("<HH", 60_000, 60_000) + bytes(20)),
        (
            "bmp",
            b"BM" + bytes(8) + struct.pack("<IIiiHH", 54, 40, 12_000, -9_000, 1, 24) + bytes(24),
        ),
    ],
)
def test_oversized_images_of_other_formats_never_reach_pillow(name: str, data: bytes) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        facts = hash_image(data)
    assert facts.status == "too_large" and facts.format == name.upper()
    assert facts.message.startswith("header claims")
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]


def test_a_limit_below_an_image_refuses_it_and_keeps_its_size() -> None:
    data = _png(_desktop(64, 36))
    assert hash_image(data).status == "ok"
    facts = hash_image(data, max_pixels=1000)
    assert (facts.status, facts.width, facts.height) == ("too_large", 64, 36)


def test_a_jpeg_named_png_is_read_as_the_jpeg_it_is() -> None:
    im = _desktop(640, 400)
    data = _jpeg(im)
    facts = hash_image(data)
    assert (facts.status, facts.format, facts.width, facts.height) == ("ok", "JPEG", 640, 400)
    assert facts.phash == phash_to_int(imagehash.phash(Image.open(io.BytesIO(data))))


def test_a_truncated_jpeg_is_truncated() -> None:
    data = _jpeg(_desktop(640, 400))
    assert hash_image(data[: len(data) // 3]).status == "truncated"


@pytest.mark.parametrize(
    "data",
    [b"", b"hello, world\n", bytes(range(256)) * 4, b"\x00" * 1000, b"<html></html>"],
)
def test_empty_files_and_other_bytes_are_not_images(data: bytes) -> None:
    facts = hash_image(data)
    assert facts.status == "not_an_image" and facts.format is None
    assert facts.message and facts.n_bytes == len(data)
    assert facts.content_hash == hashlib.sha256(data).hexdigest()


def test_a_png_signature_alone_is_a_truncated_png() -> None:
    assert hash_image(b"\x89PNG\r\n\x1a\n").status == "truncated"
    assert hash_image(_png_claiming(640, 480)[:33]).status == "truncated"


def _check_total(data: bytes) -> None:
    facts = hash_image(data)
    assert facts.status in STATUSES
    assert (facts.message is None) == (facts.status == "ok")
    assert (facts.phash is None) == (facts.status != "ok")
    assert facts.n_bytes == len(data)
    assert facts.content_hash == hashlib.sha256(data).hexdigest()


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=4096))
def test_any_bytes_give_facts_and_never_an_exception(data: bytes) -> None:
    _check_total(data)


_TINY_PNG = _png(_desktop(40, 30))


@settings(max_examples=150, deadline=None)
@given(
    cut=st.integers(0, len(_TINY_PNG)),
    flips=st.lists(st.tuples(st.integers(0, len(_TINY_PNG) - 1), st.integers(1, 255)), max_size=4),
    prefix=st.sampled_from([b"", b"\xff\xd8\xff\xe0", b"GIF89a", b"BM", b"RIFF\0\0\0\0WEBPVP8X"]),
)
def test_damaged_images_give_facts_and_never_an_exception(
    cut: int, flips: list[tuple[int, int]], prefix: bytes
) -> None:
    data = bytearray(_TINY_PNG[:cut])
    for at, mask in flips:
        if at < len(data):
            data[at] ^= mask
    _check_total(prefix + bytes(data) if prefix else bytes(data))


def test_a_git_lfs_pointer_in_place_of_a_screenshot_says_so_and_what_to_do() -> None:
    from deskscore.collectors.images import decode_image

    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:cd34\nsize 48213\n"
    decoded = decode_image(pointer)
    assert decoded.image is None and decoded.facts.status == "not_an_image"
    assert decoded.facts.message.startswith("the file is a Git LFS pointer to a 48,213-byte file")
    assert "git lfs pull" in decoded.facts.message
    other = decode_image(b"version 1 of nothing in particular")
    assert other.facts.message.startswith("not a ") and "LFS" not in other.facts.message
