"""Screenshots: PNG bytes for a task's screen states, in the modes none, tiny, realistic, pool.

Identical states give identical bytes, so a looping agent's screenshots repeat exactly, as a
real desktop's do when an action changes nothing.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zlib
from typing import Any

from deskscore.collectors.synthetic.profiles import SCREEN
from deskscore.collectors.synthetic.seeds import rng as seeded_rng
from deskscore.scorers.domains import OSWORLD_DOMAINS

SCREENSHOT_MODES = ("none", "tiny", "realistic", "pool")


def _png(width: int, height: int, raw: bytes | bytearray) -> bytes:
    """A PNG from filtered RGB rows (each row starts with filter byte 0)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 1))
        + chunk(b"IEND", b"")
    )


class Shots:
    """Screenshot bytes by (task, state); identical states give identical bytes.

    tiny: 64x36, drawn straight into PNG rows with zlib (tens of thousands per demo, so no
    imaging library); realistic: 1280x720 desktops drawn with Pillow, imported only then;
    pool: realistic frames of the right size drawn once, `POOL` of them, and reused, for
    archives whose screenshots only need to weigh what real ones weigh (batch benchmarks).
    """

    TINY = (64, 36)
    POOL = 64

    def __init__(self, mode: str) -> None:
        if mode not in SCREENSHOT_MODES:
            raise ValueError(f"screenshots must be one of {SCREENSHOT_MODES}, not {mode!r}")
        self.mode = mode
        self._base: dict[str, Any] = {}
        self._pool: dict[int, bytes] = {}
        if mode in ("realistic", "pool"):
            from PIL import Image, ImageDraw  # only when full-size pictures are wanted

            self._image, self._draw = Image, ImageDraw

    def png(self, domain: str, task_id: str, state: int, cursor: tuple[int, int]) -> bytes:
        """The picture of a task's screen `state`, pointer at `cursor` (screen coordinates)."""
        if self.mode == "tiny":
            return self._tiny(domain, task_id, state, cursor)
        if self.mode == "pool":
            slot = seeded_rng("pool", domain, task_id, state).randrange(self.POOL)
            if slot not in self._pool:
                domain_of_slot = OSWORLD_DOMAINS[slot % len(OSWORLD_DOMAINS)]
                self._pool[slot] = self._realistic(domain_of_slot, f"pool{slot}", slot, cursor)
            return self._pool[slot]
        return self._realistic(domain, task_id, state, cursor)

    def _tiny(self, domain: str, task_id: str, state: int, cursor: tuple[int, int]) -> bytes:
        w, h = self.TINY
        stride = 1 + 3 * w
        base = self._base.get(domain)
        if base is None:
            hue = OSWORLD_DOMAINS.index(domain) if domain in OSWORLD_DOMAINS else 0
            row = b"\x00" + bytes((30 + 20 * hue % 200, 40, 90 + 13 * hue % 150)) * w
            top = b"\x00" + b"\x14\x14\x14" * w
            base = self._base[domain] = bytearray(top * 3 + row * (h - 3))
        raw = bytearray(base)
        r = hashlib.sha256(f"{task_id}\x1f{state}".encode()).digest()

        def rect(x0: int, y0: int, x1: int, y1: int, rgb: bytes) -> None:
            x0, x1 = max(0, x0), min(w, x1)
            for y in range(max(0, y0), min(h, y1)):
                at = y * stride + 1 + 3 * x0
                raw[at : at + 3 * (x1 - x0)] = rgb * (x1 - x0)

        x0, y0 = 2 + r[0] % 18, 4 + r[1] % 8  # the application window moves and resizes
        rect(x0, y0, x0 + 24 + r[2] % 16, y0 + 12 + r[3] % 10, b"\xeb\xeb\xeb")
        for i in range(2 + r[4] % 4):  # content bars
            a, b = r[5 + i] % 60, 4 + r[10 + i] % 28
            rect(a, b, a + 2 + r[15 + i] % 10, b + 2, bytes(r[20 + i : 23 + i]))
        cx, cy = cursor[0] * w // SCREEN[0], cursor[1] * h // SCREEN[1]
        rect(cx, cy, cx + 2, cy + 2, b"\xff\xff\xff")
        return _png(w, h, raw)

    def _realistic(self, domain: str, task_id: str, state: int, cursor: tuple[int, int]) -> bytes:
        w, h = 1280, 720
        base = self._base.get(task_id)
        if base is None:
            self._base.clear()
            hue = OSWORLD_DOMAINS.index(domain) if domain in OSWORLD_DOMAINS else 0
            base = self._image.new("RGB", (w, h), (44, 0, 30))
            d = self._draw.Draw(base)
            d.rectangle((0, 0, w, 24), fill=(29, 29, 29))
            d.rectangle((0, 24, 56, h), fill=(40, 40, 46))
            for i in range(9):
                d.rounded_rectangle(
                    (8, 36 + 56 * i, 48, 76 + 56 * i), 6, fill=(90 + 15 * i, 70, 160 - 10 * i)
                )
            d.rectangle((72, 40, w - 16, h - 16), fill=(250, 250, 250))
            d.rectangle((72, 40, w - 16, 72), fill=(60 + 18 * hue, 90, 140 + 8 * hue))
            d.rectangle((72, 72, w - 16, 108), fill=(232, 232, 236))
            for i in range(16):
                d.rectangle((84 + 34 * i, 78, 108 + 34 * i, 102), fill=(180, 186, 196))
            if domain == "libreoffice_calc":
                for y in range(130, h - 20, 22):
                    d.line((72, y, w - 16, y), fill=(215, 215, 215))
                for x in range(130, w - 16, 96):
                    d.line((x, 108, x, h - 16), fill=(215, 215, 215))
            self._base[task_id] = base
        img = base.copy()
        d = self._draw.Draw(img)
        rng = seeded_rng("real", task_id, state)
        for i in range(rng.randint(4, 18)):
            y = 126 + 24 * i
            if y > h - 40:
                break
            d.rectangle((100, y, 100 + rng.randint(120, 900), y + 10), fill=(70, 70, 80))
        if rng.random() < 0.3:
            x0, y0 = rng.randint(300, 700), rng.randint(180, 360)
            d.rectangle((x0, y0, x0 + 420, y0 + 240), fill=(242, 242, 242), outline=(120, 120, 120))
            d.rectangle((x0 + 300, y0 + 196, x0 + 400, y0 + 226), fill=(60, 110, 200))
        cx, cy = cursor[0] * w // SCREEN[0], cursor[1] * h // SCREEN[1]
        d.polygon(((cx, cy), (cx, cy + 18), (cx + 5, cy + 13), (cx + 12, cy + 13)), fill=(0, 0, 0))
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=1)
        return buf.getvalue()
