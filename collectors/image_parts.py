"""Screenshots as image parts of a model request: downscaled, re-encoded, as data URLs.

A judge or agent request carries a few screenshots inline (base64 data URLs, the form every
OpenAI-compatible endpoint accepts). Full screenshots would make requests of several MB that
endpoints reject or bill by the tile, so each is shrunk to fit `MAX_SIDE` and re-encoded as
JPEG, which keeps UI text legible at a tenth of the PNG's size. The size is checked from the
header before Pillow decodes anything (a decompression bomb is never allocated), and no input
raises: a file that is not a usable image comes back as a problem to report.

Pillow is imported on first use.
"""

from __future__ import annotations

import base64
import io
from typing import NamedTuple

from deskscore.collectors.images import DEFAULT_MAX_PIXELS, FORMATS, header_size, sniff_format

MAX_SIDE = 1024
"""Longest side of an image sent: 1920x1080 becomes 1024x576, legible and small."""
JPEG_QUALITY = 85


class ImagePart(NamedTuple):
    """A screenshot ready to send, or why it cannot be."""

    data_url: str | None
    """data:image/jpeg;base64,...; None when the bytes are not a usable image."""
    width: int | None
    """Pixels sent (after downscaling)."""
    height: int | None
    problem: str | None
    """Why there is no data_url, for people."""


def image_part(
    data: bytes, *, max_side: int = MAX_SIDE, max_pixels: int = DEFAULT_MAX_PIXELS
) -> ImagePart:
    """The screenshot's bytes shrunk to fit `max_side` x `max_side`, as a JPEG data URL."""
    if not data:
        return ImagePart(None, None, None, "empty file")
    fmt = sniff_format(data)
    if fmt is None:
        return ImagePart(None, None, None, f"not an image ({len(data)} bytes)")
    size = header_size(data, fmt)
    if size is not None and size[0] * size[1] > max_pixels:
        return ImagePart(None, None, None, f"{fmt} header claims {size[0]}x{size[1]}: too large")
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data), formats=FORMATS) as im:
            if im.size[0] * im.size[1] > max_pixels:
                return ImagePart(None, None, None, f"{fmt} of {im.size[0]}x{im.size[1]}: too large")
            im.draft("RGB", (max_side, max_side))  # JPEG: decode at a reduced scale
            rgb = im.convert("RGB")
        rgb.thumbnail((max_side, max_side))
        buf = io.BytesIO()
        rgb.save(buf, format="JPEG", quality=JPEG_QUALITY)
    except Exception as e:  # truncated, corrupt, a bomb Pillow itself caught, ...
        return ImagePart(None, None, None, f"{fmt} file cannot be decoded ({type(e).__name__})")
    url = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return ImagePart(url, rgb.width, rgb.height, None)


__all__ = ["JPEG_QUALITY", "MAX_SIDE", "ImagePart", "image_part"]
