"""A step's screenshot as the viewer serves it: found through the warehouse, read and checked
as `deskscore hash` reads it.

The request names an episode and a step index, never a path: the file is the one the
warehouse records for that step (Store.screenshot_ref), read from the run's source through
collectors.screenshots (a folder, a zip member or an fsspec URL, with the sources' own
refusals of paths outside them) and decoded under collectors.images' rules (format allow-list,
pixel cap). Only a file that decodes as an allowed image format is served, with the type its
content has, whatever its name says.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

from deskscore.collectors.images import decode_image
from deskscore.collectors.screenshots import SourceCache, read_screenshot
from deskscore.collectors.source import SourceError

MEDIA_TYPES = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "WEBP": "image/webp",
    "GIF": "image/gif",
    "BMP": "image/bmp",
}
"""Pillow's format names (collectors.images.FORMATS) as HTTP media types."""


class Served(NamedTuple):
    """A screenshot's bytes and media type."""

    data: bytes
    media_type: str


class Refused(Exception):
    """A screenshot that is not served, and why (for the 404 body: no path of this machine)."""


class Screenshots:
    """Reads screenshots of runs' sources, each source opened once (SourceCache)."""

    def __init__(self) -> None:
        self.cache = SourceCache()
        self.lock = threading.Lock()

    def read(self, source: str, path: str) -> Served:
        """The screenshot at `path` in `source`; Refused when it cannot be read or is not an
        image the rules accept."""
        try:
            with self.lock:  # the cache opens sources from one thread at a time
                src = self.cache.get(source)
                self.cache.prune()
            file = read_screenshot(src, path)
        except SourceError:
            raise Refused("the screenshot cannot be read from the run's source") from None
        facts, image = decode_image(file.data, known_hash=file.content_hash)
        if image is None or facts.format not in MEDIA_TYPES:
            raise Refused(f"not a screenshot: {facts.status}")
        image.close()
        return Served(file.data, MEDIA_TYPES[facts.format])

    def close(self) -> None:
        with self.lock:
            self.cache.close()
