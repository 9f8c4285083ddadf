"""Many archives at once: which sources an ingest names, how each is stamped, and a digest of
what was read from it.

A release is hundreds of zips in a folder or a bucket; users name them with a glob
(`'runs/*.zip'`, `'s3://bucket/osworld/*.zip'`) or a list file (`@archives.txt`, one per line).
A stamp is what a listing says about a source without reading it (size and mtime, or the
object store's ETag); an unchanged stamp lets ingest skip the source. The digest of the bytes
actually read tells an unchanged run from a changed one when the stamp moved (a touched file,
a re-upload of the same bytes).
"""

from __future__ import annotations

import glob
import hashlib
import io
import os
from collections.abc import Iterable
from typing import Any, BinaryIO

from deskscore.collectors.files import escaped, read_regular
from deskscore.collectors.source import Source, _is_url

_GLOB_CHARS = frozenset("*?[")


class SourceListError(ValueError):
    """A source argument names nothing (an empty glob, a missing list file)."""


def _is_glob(text: str) -> bool:
    return any(c in _GLOB_CHARS for c in text)


def canonical_uri(uri: str) -> str:
    """The URI a source is recorded under (`runs.source`): local paths absolute, URLs as given;
    a name that is not UTF-8 in its escaped form (`files.escaped`), which cannot be opened but
    can be stored and shown: `open_source` then says the name is the fault."""
    uri = os.fspath(uri)
    return escaped(uri if _is_url(uri) else os.path.abspath(uri))


def _list_file(path: str) -> list[str]:
    """Sources named in a list file: one per line; blank lines and '#' comments skipped;
    relative paths are relative to the list file."""
    try:
        lines = read_regular(path, 64 << 20).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:  # a FIFO or a device is not read
        raise SourceListError(f"{escaped(path)}: cannot read the list file ({e})") from None
    base = os.path.dirname(os.path.abspath(path))
    out = []
    for line in lines:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        out.append(text if _is_url(text) or os.path.isabs(text) else os.path.join(base, text))
    return out


def _expand_glob(pattern: str) -> list[str]:
    if _is_url(pattern):
        import fsspec.core

        fs, path = fsspec.core.url_to_fs(pattern)
        protocol = pattern.split("://", 1)[0]
        return sorted(f"{protocol}://{p.lstrip('/')}" for p in fs.glob(path))
    return sorted(glob.glob(pattern, recursive=True))


def expand_sources(args: Iterable[str]) -> list[str]:
    """Every source the arguments name, canonical, once each, in a stable order.

    `@FILE` reads a list file; an argument with `*`, `?` or `[` that is not an existing path
    is a glob (local or fsspec); anything else is one source (a folder, a zip, a URL) and is checked when it is opened.
    Raises SourceListError for a glob that matches nothing or an unreadable list file, so a
    typo is not taken for an empty release.
    """
    seen: dict[str, None] = {}
    for arg in args:
        arg = os.fspath(arg)
        if arg.startswith("@"):
            items = _list_file(arg[1:])
        elif _is_glob(arg) and not os.path.lexists(arg):  # a path named with `[` is a path
            items = _expand_glob(arg)
            if not items:
                raise SourceListError(f"{arg}: the pattern matches no file or folder")
        else:
            items = [arg]
        for item in items:
            if _is_glob(item) and not os.path.exists(item):
                for found in _expand_glob(item):  # a glob inside a list file
                    seen.setdefault(canonical_uri(found), None)
                continue
            seen.setdefault(canonical_uri(item), None)
    return list(seen)


def _dir_stamp(path: str) -> str:
    """Digest of every file's relative path, size and mtime under a folder (a listing, no reads).

    A file's relative path is its folder's path past the root's, as `os.walk` joined it
    (`os.path.relpath` normalised the same text, at a third of a run folder's 14 ms), and
    each folder's lines are hashed at once (what they hold follows the largest folder, which
    `os.walk` lists whole anyway, not the whole tree): the digest is the one stamps have
    always had."""
    h = hashlib.sha1()
    cut = len(os.path.join(path, ""))
    for root, dirs, files in os.walk(path):
        dirs.sort()
        folder = os.path.join(root, "")
        rel = folder[cut:]
        lines = []
        for name in sorted(files):
            try:
                st = os.stat(folder + name)
            except OSError:
                continue
            lines.append(f"{rel}{name}\x00{st.st_size}\x00{st.st_mtime_ns}\n")
        h.update("".join(lines).encode("utf-8", "replace"))
    return "dir:" + h.hexdigest()


def _url_stamp(uri: str) -> str | None:
    import fsspec.core

    fs, path = fsspec.core.url_to_fs(uri)
    h = hashlib.sha1()
    found = fs.find(path, detail=True) if fs.isdir(path) else {path: fs.info(path)}
    for name in sorted(found):
        info = found[name]
        tag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or info.get("mtime")
        h.update(f"{name}\x00{info.get('size')}\x00{tag}\n".encode("utf-8", "replace"))
    return "url:" + h.hexdigest()


def source_stamp(uri: str) -> str | None:
    """What a listing says about a source, or None when it cannot be listed (then it is read).

    A file (zip): its size and modification time. A folder: path, size and mtime of every
    file in it. A URL: size and ETag (or the store's checksum or mtime) of each object.
    """
    try:
        if _is_url(uri):
            return _url_stamp(uri)
        if os.path.isdir(uri):
            return _dir_stamp(uri)
        st = os.stat(uri)
        return f"file:{st.st_size}:{st.st_mtime_ns}"
    except Exception:  # a source that cannot be listed is simply read (and reported) again
        return None


class DigestingSource(Source):
    """A source that remembers the sha1 of every file read through it, for a content digest
    of exactly what a run's tables were made from."""

    def __init__(self, inner: Source) -> None:
        self._inner = inner
        self.uri = inner.uri
        self.kind = inner.kind
        self.problems = inner.problems
        self._digests: dict[str, str] = {}

    def files(self) -> list[str]:
        return self._inner.files()

    def exists(self, path: str) -> bool:
        return self._inner.exists(path)

    def read_bytes(self, path: str) -> bytes:
        data = self._inner.read_bytes(path)
        self._digests[path] = hashlib.sha1(data).hexdigest()
        return data

    def open(self, path: str) -> BinaryIO:
        """The inner stream; the sha1 of the bytes read through it counts once it is closed."""
        return _Digesting(self._inner.open(path), lambda sha1: self.note(path, sha1))

    def size(self, path: str) -> int:
        return self._inner.size(path)

    def note(self, path: str, sha1: str) -> None:
        """Count a file a reader read without read_bytes (handed to a library by its local
        path, as inspect_ai logs are) by the sha1 of its bytes."""
        self._digests[path] = sha1

    def digest(self, *extra: str) -> str:
        """sha1 over the (path, sha1) of every file read, in path order, and `extra` strings."""
        h = hashlib.sha1()
        for text in extra:
            h.update(text.encode("utf-8", "surrogateescape") + b"\n")
        for path in sorted(self._digests):
            h.update(f"{path}\x00{self._digests[path]}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()


class _Digesting(io.RawIOBase):
    """A stream that hashes what is read through it and reports the sha1 when closed."""

    def __init__(self, inner: BinaryIO, done: Any) -> None:
        super().__init__()
        self._inner, self._done = inner, done
        self._sha1 = hashlib.sha1()

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        data = self._inner.read(size)
        self._sha1.update(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
            self._done(self._sha1.hexdigest())
        super().close()
