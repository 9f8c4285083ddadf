"""Screenshot facts: content hash, perceptual hash and size, from a file's bytes.

`decode_image` and `hash_image` are total: whatever the bytes (empty, random, truncated, a
header that claims 100000x100000 pixels), they return an `ImageFacts` with a status and a
message, never raise. `decode_image` is the decoding every reader of screenshots shares (the
format allow-list, the pixel cap); `hash_image` adds the perceptual hash.

The perceptual hash is imagehash's `phash` (hash_size 8), bit for bit, stored as a signed
64-bit integer so SQL can `bit_count(a XOR b)` it. It is computed from the one decoded image,
and its costly step is done faster than Pillow does it without changing a bit: phash shrinks
the grey image to 32x32 with Pillow's LANCZOS filter, which for a 1024x768 screenshot costs a
quarter of the decode (4.7 M scalar multiply-adds). `_Shrink` computes the same two fixed-point
passes as Pillow's `Resample.c` (same coefficients, same rounding and clipping) as banded
matrix products, exact because every product and partial sum is an integer small enough for
the float type used (below 2**24 in float32, splitting each weight in two; else float64).
Each image size is checked against Pillow once before it is trusted; on any difference, and
for images smaller than 256x256 or larger than 4K, Pillow's own resize is used.

PIL, numpy and scipy are imported on first use, so importing this module stays light.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
import sys
import threading
from typing import Any, NamedTuple

from deskscore.collectors.lfs import LFS_TODO, is_lfs_pointer, lfs_pointer

DEFAULT_MAX_PIXELS = 50_000_000
"""Refused above this (a decompression bomb): an 8K screen is 33 M pixels, and the limit stays
below Pillow's own warning threshold (89 M), so a file we accept never trips it."""
FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP")
"""The formats Pillow may try: screenshot formats only (no plugin that shells out, no TGA that
would take any bytes for an image)."""
STATUSES = ("ok", "corrupt", "truncated", "too_large", "not_an_image")

_MASK64 = (1 << 64) - 1
_ADDRESS = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MAGIC = (
    (_PNG_SIGNATURE, "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
)


class ImageFacts(NamedTuple):
    """What one screenshot file is: the columns of a `screenshots` row, plus a message."""

    content_hash: str
    phash: int | None
    """imagehash.phash as a signed 64-bit integer (two's complement); None unless status is ok."""
    width: int | None
    """Pixels, from the header when known, even when the image could not be decoded."""
    height: int | None
    n_bytes: int
    format: str | None
    """As read from the content (PNG, JPEG, ...), never from the file name."""
    status: str
    message: str | None
    """Why the status is not ok, for people; None when it is."""


def content_hash(data: bytes) -> str:
    """SHA-256 of the bytes, hex: the key of a screenshot, exact where phash is not."""
    return hashlib.sha256(data).hexdigest()


def phash_to_int(value: Any) -> int:
    """imagehash's 64-bit hash (an ImageHash or its 16-digit hex) as a signed 64-bit integer.

    The first bit of the hash is the most significant, as imagehash prints it; values with that
    bit set become negative, so they fit a BIGINT column.
    """
    unsigned = int(str(value), 16)
    if not 0 <= unsigned <= _MASK64:
        raise ValueError(f"not a 64-bit hash: {value!r}")
    return unsigned - (1 << 64) if unsigned >> 63 else unsigned


def int_to_phash_hex(value: int) -> str:
    """The signed integer back to imagehash's hex (`imagehash.hex_to_hash` reads it)."""
    return f"{value & _MASK64:016x}"


def hamming(a: int, b: int) -> int:
    """Bits that differ between two stored phashes (imagehash's `h1 - h2`)."""
    return ((a ^ b) & _MASK64).bit_count()


def sniff_format(data: bytes) -> str | None:
    """The image format the first bytes announce, or None."""
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def _le(data: bytes, at: int, size: int, signed: bool = False) -> int:
    return int.from_bytes(data[at : at + size], "little", signed=signed)


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's first start-of-frame marker, walking the segments."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            at += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if at + 9 > len(data):
                return None
            return int.from_bytes(data[at + 7 : at + 9], "big"), int.from_bytes(
                data[at + 5 : at + 7], "big"
            )
        if marker == 0xDA:  # scan data before any frame header
            return None
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:
        return 1 + _le(data, 24, 3), 1 + _le(data, 27, 3)
    if kind == b"VP8L" and len(data) >= 25:
        bits = _le(data, 21, 4)
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if kind == b"VP8 " and len(data) >= 30:
        return _le(data, 26, 2) & 0x3FFF, _le(data, 28, 2) & 0x3FFF
    return None


def header_size(data: bytes, fmt: str | None) -> tuple[int, int] | None:
    """(width, height) as the header of a PNG, JPEG, WebP, GIF or BMP states it, read without
    any imaging library, so a decompression bomb is refused before Pillow sees it."""
    if fmt == "PNG":
        if len(data) < 24 or data[12:16] != b"IHDR":
            return None
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    if fmt == "JPEG":
        return _jpeg_size(data)
    if fmt == "WEBP":
        return _webp_size(data)
    if fmt == "GIF" and len(data) >= 10:
        return _le(data, 6, 2), _le(data, 8, 2)
    if fmt == "BMP" and len(data) >= 26:
        if _le(data, 14, 4) == 12:  # OS/2 core header: 16-bit sizes
            return _le(data, 18, 2), _le(data, 20, 2)
        return abs(_le(data, 18, 4, signed=True)), abs(_le(data, 22, 4, signed=True))
    return None


def _png_truncated(data: bytes) -> bool:
    """Whether a PNG's chunk list runs past the end of the bytes (cut off), rather than
    holding bad data: each chunk is length, type, data, CRC."""
    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        at += 12 + length
        if at > len(data):
            return True
        if kind == b"IEND":
            return False
    return True


def _looks_truncated(data: bytes, fmt: str | None, error: BaseException) -> bool:
    text = str(error).lower()
    if isinstance(error, EOFError) or "truncated" in text:
        return True
    if fmt == "PNG":
        return _png_truncated(data)
    if fmt == "JPEG":
        return not data.rstrip(b"\x00").endswith(b"\xff\xd9")
    return False


def _failed(
    digest: str,
    data: bytes,
    fmt: str | None,
    size: tuple[int, int] | None,
    error: BaseException,
    doing: str,
) -> ImageFacts:
    status = "truncated" if _looks_truncated(data, fmt, error) else "corrupt"
    what = f"{fmt} file" if fmt else "file"
    text = _ADDRESS.sub("the bytes", str(error))  # no memory address: messages are stable
    detail = f"{type(error).__name__}: {text}" if text else type(error).__name__
    cut = "cut off" if status == "truncated" else "damaged"
    message = f"{what} of {len(data)} bytes is {cut}; {doing} failed ({detail})"
    w, h = size or (None, None)
    return ImageFacts(digest, None, w, h, len(data), fmt, status, message)


def _too_large(
    digest: str, n: int, fmt: str | None, w: int | None, h: int | None, max_pixels: int
) -> ImageFacts:
    claimed = f"{w}x{h} ({w * h} pixels)" if w is not None and h is not None else "its size"
    message = (
        f"header claims {claimed}, above the limit of {max_pixels} pixels: not decoded "
        "(a decompression bomb, or a screenshot far larger than any screen)"
    )
    return ImageFacts(digest, None, w, h, n, fmt, "too_large", message)


def _pil() -> Any:
    from PIL import Image

    return Image


class DecodedImage(NamedTuple):
    """An image decoded under the image rules, or why it was not."""

    facts: ImageFacts
    """As `hash_image` gives them, but phash is None: it is not computed here."""
    image: Any | None
    """The loaded Pillow image when facts.status is ok, else None."""


def decode_image(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, known_hash: str | None = None
) -> DecodedImage:
    """One screenshot file's bytes decoded under the rules every reader of screenshots shares:
    only the `FORMATS`, nothing above `max_pixels`, a truncated or damaged file told apart;
    never raises.

    The pixel count is checked before anything is decoded: from the header, read here
    (Pillow never sees a bomb of a format it may open), then from Pillow's lazy open, which
    reads headers only; Pillow's own DecompressionBombError is caught as well.
    `known_hash`: the bytes' SHA-256, when the caller has just computed it (saves a pass).
    """
    import io

    digest = known_hash or content_hash(data)
    n = len(data)
    if n == 0:
        facts = ImageFacts(
            digest, None, None, None, 0, None, "not_an_image", "empty file (0 bytes)"
        )
        return DecodedImage(facts, None)
    fmt = sniff_format(data)
    size = header_size(data, fmt)
    if fmt == "PNG" and size is None:
        error = EOFError("ends inside the PNG header") if n < 24 else ValueError("no IHDR chunk")
        return DecodedImage(_failed(digest, data, fmt, None, error, "reading the header"), None)
    if size is not None and size[0] * size[1] > max_pixels:
        return DecodedImage(_too_large(digest, n, fmt, size[0], size[1], max_pixels), None)
    try:
        im = _pil().open(io.BytesIO(data), formats=FORMATS)
    except Exception as e:
        name = type(e).__name__
        if name.startswith("DecompressionBomb"):
            facts = _too_large(digest, n, fmt, *(size or (None, None)), max_pixels)
        elif name == "UnidentifiedImageError" and fmt is None:
            first = data[:16].hex(" ")
            message = f"not a {', '.join(FORMATS)} image ({n} bytes, starting {first})"
            if is_lfs_pointer(data):  # a clone made without `git lfs`
                message = f"{lfs_pointer('the file', data)}; {LFS_TODO}"
            facts = ImageFacts(digest, None, None, None, n, None, "not_an_image", message)
        else:
            facts = _failed(digest, data, fmt, size, e, "reading the header")
        return DecodedImage(facts, None)
    fmt = im.format or fmt
    width, height = im.size
    if width * height > max_pixels:
        return DecodedImage(_too_large(digest, n, fmt, width, height, max_pixels), None)
    try:
        im.load()
    except MemoryError:
        message = f"ran out of memory decoding {width}x{height} pixels: not decoded"
        facts = ImageFacts(digest, None, width, height, n, fmt, "too_large", message)
        return DecodedImage(facts, None)
    except Exception as e:
        if type(e).__name__.startswith("DecompressionBomb"):
            return DecodedImage(_too_large(digest, n, fmt, width, height, max_pixels), None)
        return DecodedImage(_failed(digest, data, fmt, (width, height), e, "decoding"), None)
    return DecodedImage(ImageFacts(digest, None, width, height, n, fmt, "ok", None), im)


def hash_image(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, known_hash: str | None = None
) -> ImageFacts:
    """Facts about one screenshot file's bytes, perceptual hash included; never raises.

    `decode_image` decodes it (same `max_pixels` and `known_hash`); phash is computed from
    that one decoded image.
    """
    facts, im = decode_image(data, max_pixels=max_pixels, known_hash=known_hash)
    if im is None:
        return facts
    try:
        value = phash_of(im)
    except Exception as e:
        size = (facts.width, facts.height)
        return _failed(
            facts.content_hash, data, facts.format, size, e, "computing the perceptual hash"
        )
    return facts._replace(phash=value)


def phash_of(image: Any) -> int:
    """imagehash.phash(image) (hash_size 8, highfreq_factor 4) as a signed 64-bit integer.

    The same steps as imagehash: grey (Pillow), 32x32 LANCZOS, 2-D DCT-II (scipy.fftpack),
    the 8x8 low frequencies against their median, bits in row order, first bit highest.
    """
    import numpy as np
    import scipy.fftpack

    grey = image.convert("L")  # a new image, in memory Pillow allocated
    pixels = shrink_32(grey, _converted=True)
    dct = scipy.fftpack.dct(scipy.fftpack.dct(pixels, axis=0), axis=1)
    low = dct[:8, :8]
    bits = np.packbits((low > np.median(low)).reshape(-1))
    return int.from_bytes(bits.tobytes(), "big", signed=True)


# --------------------------------------------------------------------------- the 32x32 shrink

_SIDE = 32
_PRECISION_BITS = 32 - 8 - 2  # Resample.c: 8 bits of result, 2 for overflow
_HALF = float(1 << (_PRECISION_BITS - 1))
_SCALE = 1.0 / (1 << _PRECISION_BITS)
_FAST_MIN_PIXELS = 1 << 16
"""Below this Pillow's resize takes microseconds; the matrix path is for screenshots."""
_FAST_MAX_PIXELS = 1 << 24
"""Above this (beyond 4K screens) Pillow's resize is used: the matrix path's float copy of
the image would cost a thread 4 bytes per pixel."""
_SINGLE_THREAD_GEMM = 250_000
"""OpenBLAS multithreads a product above m*n*k = 262144; the pool already uses every core,
so blocks are kept below it."""
_GEMM_COLUMNS = 8
"""Columns of each band's product: narrow bands skip most zero weights, wide ones use BLAS
better; 8 measured best for 1024 and 1920 pixel widths."""


def _lanczos(x: float) -> float:
    """Resample.c's lanczos_filter, operation for operation (same doubles, same libm sin)."""

    def sinc(v: float) -> float:
        if v == 0.0:
            return 1.0
        v = v * math.pi
        return math.sin(v) / v

    if -3.0 <= x < 3.0:
        return sinc(x) * sinc(x / 3)
    return 0.0


def _coefficients(in_size: int, out_size: int) -> list[tuple[int, list[int]]]:
    """Resample.c's precompute_coeffs + normalize_coeffs_8bpc for LANCZOS over the full
    image: per output pixel, the first input index and the fixed-point weights."""
    scale = float(in_size) / out_size
    filterscale = max(scale, 1.0)
    support = 3.0 * filterscale
    ss = 1.0 / filterscale
    out = []
    for xx in range(out_size):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size) - xmin
        weights = [_lanczos((x + xmin - center + 0.5) * ss) for x in range(xmax)]
        total = 0.0
        for w in weights:
            total += w
        fixed = []
        for w in weights:
            if total != 0.0:
                w = w / total
            fixed.append(int((-0.5 if w < 0 else 0.5) + w * (1 << _PRECISION_BITS)))
        out.append((xmin, fixed))
    return out


def _float32_shift(coeffs: list[tuple[int, list[int]]]) -> int | None:
    """A bit position s that splits every weight k into k1 = k >> s and k0 = k - (k1 << s)
    such that, for pixels <= 255, every product and every partial sum of sum(a * k1) and
    sum(a * k0) is an integer below 2**24, hence exact in float32 whatever the order of
    summation (or None: the pass stays in float64, where 2**53 leaves room for any size)."""
    for s in range(1, _PRECISION_BITS + 1):
        high = max(sum(abs(k >> s) for k in w) for _, w in coeffs)
        low = max(sum(k - ((k >> s) << s) for k in w) for _, w in coeffs)
        if 255 * max(high, low) < 1 << 24:
            return s
    return None


class _Band(NamedTuple):
    lo: int
    hi: int
    weights: Any
    """(hi - lo, group) float64 weights, or (hi - lo, 2 * group) float32: k1 then k0."""


class _Horizontal:
    """Resample.c's horizontal 8-bit pass to 32 columns, `clip8((sum(a * k) + half) >> 22)`
    per output, as banded matrix products: each band of outputs reads only the inputs its
    weights cover, and every product lands in one array, combined once at the end."""

    def __init__(self, in_size: int) -> None:
        import numpy as np

        coeffs = _coefficients(in_size, _SIDE)
        self.shift = _float32_shift(coeffs)
        self.dtype = np.float64 if self.shift is None else np.float32
        self.group = _GEMM_COLUMNS // (1 if self.shift is None else 2)
        self.bands = []
        for first in range(0, _SIDE, self.group):
            part = coeffs[first : first + self.group]
            lo = min(xmin for xmin, _ in part)
            hi = max(xmin + len(w) for xmin, w in part)
            fixed = np.zeros((hi - lo, len(part)), dtype=np.int64)
            for j, (xmin, w) in enumerate(part):
                fixed[xmin - lo : xmin - lo + len(w), j] = w
            if self.shift is None:
                weights = fixed.astype(np.float64)
            else:
                high = fixed >> self.shift
                weights = np.concatenate([high, fixed - (high << self.shift)], axis=1)
                weights = weights.astype(np.float32)
            self.bands.append(_Band(lo, hi, np.ascontiguousarray(weights)))

    def __call__(self, pixels: Any) -> Any:
        """(n, in_size) uint8 -> (n, 32) uint8."""
        import numpy as np

        a = pixels.astype(self.dtype)
        n = a.shape[0]
        cols = _GEMM_COLUMNS
        parts = np.empty((n, len(self.bands) * cols), dtype=self.dtype)
        for b, band in enumerate(self.bands):
            width = band.hi - band.lo
            out = parts[:, b * cols : (b + 1) * cols]
            rows = _rows_per_product(n, width * cols)
            full = n - n % rows
            if full:
                view = a[:full, band.lo : band.hi].reshape(full // rows, rows, width)
                out[:full] = np.matmul(view, band.weights).reshape(full, cols)
            if full < n:
                out[full:] = a[full:, band.lo : band.hi] @ band.weights
        if self.shift is None:
            sums = parts
        else:
            split = parts.reshape(n, len(self.bands), 2, self.group)
            sums = split[:, :, 0, :].astype(np.float64)
            sums *= float(1 << self.shift)
            sums = (sums + split[:, :, 1, :]).reshape(n, _SIDE)
        return np.clip(np.floor((sums + _HALF) * _SCALE), 0.0, 255.0).astype(np.uint8)


def _rows_per_product(n: int, per_row: int) -> int:
    """Rows per matrix product: below OpenBLAS's threading threshold, dividing n if possible."""
    limit = min(n, max(1, _SINGLE_THREAD_GEMM // per_row))
    for rows in range(limit, limit // 2, -1):
        if n % rows == 0:
            return rows
    return limit


class _Vertical:
    """Resample.c's vertical 8-bit pass from (height, n) to (32, n): one dense float64
    product (exact: sums stay far below 2**53), over the horizontal pass's (height, 32)
    result, or over the whole image when Pillow runs this pass first."""

    def __init__(self, in_size: int) -> None:
        import numpy as np

        weights = np.zeros((_SIDE, in_size))
        for yy, (ymin, w) in enumerate(_coefficients(in_size, _SIDE)):
            weights[yy, ymin : ymin + len(w)] = w
        self.weights = weights

    def __call__(self, tall: Any) -> Any:
        """(in_size, n) uint8 -> (32, n) uint8."""
        import numpy as np

        t = tall.astype(np.float64)
        rows = _rows_per_product(_SIDE, t.shape[0] * t.shape[1])
        full = _SIDE - _SIDE % rows
        sums = np.empty((_SIDE, t.shape[1]))
        block = self.weights[:full].reshape(full // rows, rows, -1)
        sums[:full] = np.matmul(block, t).reshape(full, t.shape[1])
        if full < _SIDE:
            sums[full:] = self.weights[full:] @ t
        return np.clip(np.floor((sums + _HALF) * _SCALE), 0.0, 255.0).astype(np.uint8)


class _Shrink:
    """Pillow's `resize((32, 32), LANCZOS)` of an 'L' image of one size: Resample.c's
    horizontal pass over every row, then its vertical pass over that result; or the vertical
    pass first, which Pillow 13 runs for some sizes (`_checked_shrink` finds which)."""

    def __init__(self, horizontal: _Horizontal, vertical: _Vertical, vertical_first: bool) -> None:
        self.horizontal = horizontal
        self.vertical = vertical
        self.vertical_first = vertical_first

    def __call__(self, pixels: Any) -> Any:
        if self.vertical_first:
            return self.horizontal(self.vertical(pixels))
        return self.vertical(self.horizontal(pixels))


_shrinks: dict[tuple[int, int], _Shrink | None] = {}
_shrinks_lock = threading.Lock()


def _pillow_shrink(grey: Any) -> Any:
    import numpy as np

    return np.asarray(grey.resize((_SIDE, _SIDE), _pil().Resampling.LANCZOS))


def _checked_shrink(width: int, height: int) -> _Shrink | None:
    """The matrix shrink for this size, its passes in the order that reproduces Pillow on
    probe images; None when neither order does."""
    import numpy as np

    image_mod = _pil()
    rng = np.random.default_rng(width * 100_003 + height)
    ramp = np.add.outer(
        (np.arange(height) % 256).astype(np.uint8), (np.arange(width) % 256).astype(np.uint8)
    )  # uint8: wraps around
    probes = [rng.integers(0, 256, (height, width), dtype=np.uint8), ramp, 255 - ramp]
    greys = [image_mod.fromarray(probe, "L") for probe in probes]
    expected = [_pillow_shrink(grey) for grey in greys]
    horizontal, vertical = _Horizontal(width), _Vertical(height)
    for vertical_first in (False, True):
        shrink = _Shrink(horizontal, vertical, vertical_first)
        if all(
            np.array_equal(shrink(np.asarray(grey)), want)
            for grey, want in zip(greys, expected, strict=True)
        ):
            return shrink
    return None


def _matrix_size(width: int, height: int) -> bool:
    return (
        width > _SIDE and height > _SIDE and _FAST_MIN_PIXELS <= width * height <= _FAST_MAX_PIXELS
    )


def matrix_shrink_used(width: int, height: int) -> bool:
    """Whether images of this size are shrunk by the matrix passes (checked against Pillow on
    first use), rather than by Pillow's own resize."""
    return _matrix_size(width, height) and _shrink_for(width, height) is not None


def _shrink_for(width: int, height: int) -> _Shrink | None:
    key = (width, height)
    if key not in _shrinks:
        with _shrinks_lock:
            if key not in _shrinks:
                _shrinks[key] = _checked_shrink(width, height)
    return _shrinks[key]


def shrink_32(grey: Any, *, _converted: bool = False) -> Any:
    """`grey.resize((32, 32), LANCZOS)` of an 'L' image as a uint8 array, bit for bit."""
    import numpy as np

    width, height = grey.size
    if not _matrix_size(width, height):
        return _pillow_shrink(grey)
    shrink = _shrink_for(width, height)
    if shrink is None:
        return _pillow_shrink(grey)
    return shrink(_pixels(grey) if _converted else np.asarray(grey))


def _pixels(grey: Any) -> Any:
    """The pixels of an 'L' image that `convert` just made, as a (height, width) uint8 array:
    a view of Pillow's memory through the Arrow C interface when pyarrow is already loaded
    (Pillow >= 11.2), else a copy; the view saves a pass over the image. Only for images in
    memory Pillow allocated: Pillow 12 crashes exporting one that wraps foreign memory
    (`Image.fromarray`), which is why it is kept off the public `shrink_32` path."""
    import numpy as np

    pa = sys.modules.get("pyarrow")
    width, height = grey.size
    if pa is not None and not grey.readonly and hasattr(grey, "__arrow_c_array__"):
        try:
            array = pa.array(grey)
            if array.offset == 0 and len(array) == width * height:
                data = np.frombuffer(array.buffers()[1], dtype=np.uint8, count=width * height)
                return data.reshape(height, width)
        except Exception:
            pass  # a multi-block image, an older Pillow: the copy below
    return np.asarray(grey)
