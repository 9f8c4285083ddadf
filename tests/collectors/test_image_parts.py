"""Screenshots shrunk into request-sized JPEG data URLs; bad bytes are a problem, not a crash."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pytest
from PIL import Image

from deskscore.collectors.image_parts import image_part


def _png(width: int, height: int, color: tuple[int, int, int] = (30, 120, 200)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, format="PNG")
    return buf.getvalue()


def _decode(url: str) -> Image.Image:
    assert url.startswith("data:image/jpeg;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def test_a_full_screenshot_is_shrunk_to_the_bound_keeping_its_shape() -> None:
    part = image_part(_png(1920, 1080))
    assert part.problem is None and (part.width, part.height) == (1024, 576)
    im = _decode(part.data_url)
    assert im.format == "JPEG" and im.size == (1024, 576)


def test_a_small_screenshot_keeps_its_size_and_other_formats_are_read() -> None:
    buf = io.BytesIO()
    Image.new("RGBA", (64, 40), (1, 2, 3, 128)).save(buf, format="WEBP")
    part = image_part(buf.getvalue(), max_side=256)
    assert part.problem is None and _decode(part.data_url).size == (64, 40)


def _bomb_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "empty"),
        (b"hello, not an image at all", "not an image"),
        (_png(300, 200)[:60], "cannot be decoded"),
        (_bomb_header(100_000, 100_000), "too large"),
    ],
)
def test_bytes_that_are_not_a_usable_image_give_a_problem(data, problem) -> None:
    part = image_part(data)
    assert part.data_url is None and problem in part.problem
