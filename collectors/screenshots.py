"""Screenshot files of runs: opened, read, hashed and decoded as every reader must.

A step's screenshot is the file `steps.screenshot_path` inside the run's source
(`runs.source`, a folder, a zip or a URL). Whoever reads one (the hash job, the judge, the
report's thumbnails, a viewer) reads it through this module, so the rules stay one:

- sources are opened once and kept in a small cache (`SourceCache`): a zip's directory is
  parsed once, not per file;
- a file's key is the SHA-256 of its bytes (`read_screenshot`);
- it is decoded under the image rules of `collectors.images` (`decode_image`): a format
  allow-list, a pixel cap checked from the header before anything is decoded, a truncated
  file told apart from a damaged one, never an exception (`load_screenshot`,
  `open_screenshot`, `decode_screenshot`);
- many files are read, hashed and decoded on a thread pool (`ScreenshotPool`): Pillow,
  numpy and hashlib release the GIL, so threads use every core.

The rows these become in the warehouse are in `collectors.screenshot_tables`.
"""

from __future__ import annotations

import os
from collections import OrderedDict, deque
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple, Protocol, TypeVar

from deskscore.collectors.images import (
    DEFAULT_MAX_PIXELS,
    ImageFacts,
    content_hash,
    decode_image,
    hash_image,
)
from deskscore.collectors.source import Source, SourceError, open_source

OPEN_SOURCES = 8
"""Sources a cache keeps open (beyond these, the least recently used are closed)."""
EXCERPT_BYTES = 48
"""Bytes of a file shown in its quarantine row: hex with spaces, 143 characters."""


class SourceCache:
    """Open sources by URI, each listed once (reads of listed paths then skip per-file safety
    checks). Open sources from one thread; other threads may read from them. `prune` closes
    the least recently used beyond `keep`, when no read is in flight."""

    def __init__(self, keep: int = OPEN_SOURCES) -> None:
        self.keep = keep
        self._open: OrderedDict[str, Source] = OrderedDict()

    def get(self, uri: str) -> Source:
        """The source at `uri`, opened if need be; raises SourceError (not remembered: the
        next call tries again)."""
        if uri in self._open:
            self._open.move_to_end(uri)
            return self._open[uri]
        source = open_source(uri)
        source.files()
        self._open[uri] = source
        return source

    def read(self, uri: str, path: str) -> ScreenshotFile:
        """`read_screenshot` of `path` in the source at `uri` (runs.source)."""
        return read_screenshot(self.get(uri), path)

    def prune(self) -> None:
        while len(self._open) > self.keep:
            _, old = self._open.popitem(last=False)
            old.close()

    def close(self) -> None:
        for source in self._open.values():
            source.close()
        self._open.clear()

    def __enter__(self) -> SourceCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- one file


class ScreenshotFile(NamedTuple):
    """A screenshot file's bytes and their SHA-256 (the `content_hash` of its rows)."""

    path: str
    data: bytes
    content_hash: str


def read_screenshot(source: Source, path: str) -> ScreenshotFile:
    """The file at `path` (a steps.screenshot_path) of an open source; raises SourceError."""
    data = source.read_bytes(path)
    return ScreenshotFile(path, data, content_hash(data))


class Screenshot(NamedTuple):
    """A screenshot file decoded under the image rules."""

    path: str
    facts: ImageFacts
    """Content hash, size, format, status and why; phash is not computed (None)."""
    image: Any | None
    """The decoded Pillow image when facts.status is ok, else None."""


def load_screenshot(
    source: Source, path: str, *, max_pixels: int = DEFAULT_MAX_PIXELS
) -> Screenshot:
    """The file at `path` read and decoded under the image rules; raises SourceError only
    (an unusable image is a status in `facts`)."""
    file = read_screenshot(source, path)
    facts, image = decode_image(file.data, max_pixels=max_pixels, known_hash=file.content_hash)
    return Screenshot(path, facts, image)


class NotAnImage(ValueError):
    """A screenshot file that is not a usable image under the image rules."""

    def __init__(self, path: str, facts: ImageFacts) -> None:
        super().__init__(f"{path}: {facts.message}")
        self.facts = facts


def open_screenshot(source: Source, path: str, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> Any:
    """The decoded Pillow image of `path` (usable in a `with`); raises SourceError when the
    file cannot be read, NotAnImage when it is not a usable image."""
    shot = load_screenshot(source, path, max_pixels=max_pixels)
    if shot.image is None:
        raise NotAnImage(path, shot.facts)
    return shot.image


class Decoded(NamedTuple):
    """A file's facts (perceptual hash included) and its first bytes, for a quarantine row."""

    facts: ImageFacts
    excerpt: str


def decode_screenshot(
    data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS, known_hash: str | None = None
) -> Decoded:
    """`hash_image` of a file's bytes, with their excerpt; never raises."""
    facts = hash_image(data, max_pixels=max_pixels, known_hash=known_hash)
    return Decoded(facts, data[:EXCERPT_BYTES].hex(" "))


# --------------------------------------------------------------------------- many files


class FileRef(Protocol):
    """A file to read: its source's URI and its path there."""

    @property
    def source(self) -> str: ...

    @property
    def path(self) -> str: ...


Ref = TypeVar("Ref", bound=FileRef)


class Hashed(NamedTuple):
    """A file read and hashed (`ScreenshotPool.hash_files`), or why it could not be read."""

    path: str
    content_hash: str | None
    error: SourceError | None


class HashedDecoded(NamedTuple):
    """A file decoded while it was hashed (`ScreenshotPool.hash_files`)."""

    path: str
    decoded: Decoded


def pool_threads(threads: int | None) -> int:
    """Threads of a pool: `threads`, or by default the CPU count, 2 to 8."""
    return threads if threads and threads > 0 else max(2, min(8, os.cpu_count() or 2))


def keep_image_blocks(threads: int) -> None:
    """Let Pillow keep a few freed image blocks for the next decode (its documented block
    allocator setting; default 0). Without them, each screenshot's memory is handed back to
    the system and faulted in again: about 2000 page faults, 4 ms per 1024x768 screenshot
    on a 2-core VM, more than the whole perceptual hash costs."""
    from PIL import Image

    wanted = 4 * threads
    if Image.core.get_blocks_max() < wanted:
        Image.core.set_blocks_max(wanted)


def _in_order(
    pool: ThreadPoolExecutor, fn: Callable[[Any], Any], items: Iterable[Any], window: int
) -> Iterator[Any]:
    """fn over items on the pool, results in input order, at most `window` in flight, so the
    items (file bytes read by the calling thread) never pile up in memory."""
    pending: deque[Future[Any]] = deque()
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


class ScreenshotPool:
    """Screenshot files read, hashed and decoded on a pool of threads, their sources cached.

    Results come back in input order, with a bounded number of files in flight, so memory
    stays flat whatever the number of files. Use from one thread; `close` when done.
    `threads`: pool size (default `pool_threads`); `max_pixels`: images above it are not
    decoded (status too_large).
    """

    def __init__(self, threads: int | None = None, max_pixels: int = DEFAULT_MAX_PIXELS) -> None:
        self.threads = pool_threads(threads)
        self.max_pixels = max_pixels
        self.sources = SourceCache()
        self._pool = ThreadPoolExecutor(self.threads)
        keep_image_blocks(self.threads)

    def close(self) -> None:
        self._pool.shutdown()
        self.sources.close()

    def __enter__(self) -> ScreenshotPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def hash_files(
        self,
        source: Source,
        paths: Iterable[str],
        *,
        decode_new: bool = False,
        known: Container[str] = frozenset(),
    ) -> Iterator[Hashed | HashedDecoded]:
        """A `Hashed` per path, in order. With `decode_new`, each content not `known` is also
        decoded, once, from the bytes just read, and comes back as a `HashedDecoded` some time
        after its `Hashed`; without it, the bytes are dropped at once."""

        def read(path: str) -> tuple[str, ScreenshotFile | SourceError]:
            try:
                file = read_screenshot(source, path)
            except SourceError as e:
                return path, e
            return path, file if decode_new else file._replace(data=b"")

        def decode(file: ScreenshotFile) -> HashedDecoded:
            decoded = decode_screenshot(
                file.data, max_pixels=self.max_pixels, known_hash=file.content_hash
            )
            return HashedDecoded(file.path, decoded)

        claimed: set[str] = set()
        decoding: deque[Future[HashedDecoded]] = deque()
        for path, result in _in_order(self._pool, read, paths, 4 * self.threads):
            if isinstance(result, SourceError):
                yield Hashed(path, None, result)
                continue
            digest = result.content_hash
            yield Hashed(path, digest, None)
            if decode_new and digest not in known and digest not in claimed:
                claimed.add(digest)
                decoding.append(self._pool.submit(decode, result))
                while len(decoding) > 2 * self.threads + 2:
                    yield decoding.popleft().result()
        while decoding:
            yield decoding.popleft().result()

    def decode_files(self, refs: Sequence[Ref]) -> Iterator[tuple[Ref, Decoded | SourceError]]:
        """Each file read and decoded (its hash computed again: compare it to the one expected
        to catch a file that changed), in order; a source or file that cannot be read gives
        its SourceError."""
        self.sources.prune()
        sources: dict[str, Source | SourceError] = {}
        for uri in {ref.source for ref in refs}:
            try:
                sources[uri] = self.sources.get(uri)
            except SourceError as e:
                sources[uri] = e

        def decode(ref: Ref) -> tuple[Ref, Decoded | SourceError]:
            source = sources[ref.source]
            if isinstance(source, SourceError):
                return ref, source
            try:
                data = source.read_bytes(ref.path)
            except SourceError as e:
                return ref, e
            return ref, decode_screenshot(data, max_pixels=self.max_pixels)

        yield from _in_order(self._pool, decode, refs, 2 * self.threads + 2)


__all__ = [
    "EXCERPT_BYTES",
    "OPEN_SOURCES",
    "Decoded",
    "FileRef",
    "Hashed",
    "HashedDecoded",
    "NotAnImage",
    "Screenshot",
    "ScreenshotFile",
    "ScreenshotPool",
    "SourceCache",
    "decode_screenshot",
    "keep_image_blocks",
    "load_screenshot",
    "open_screenshot",
    "pool_threads",
    "read_screenshot",
]
