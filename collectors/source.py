"""One read-only view over a directory, a .zip, or any fsspec URL.

Readers only ever list relative POSIX paths and read bytes, so the same code serves a local
run folder, a published zip read in place (never unpacked), and remote storage. Anything that
would step outside the source (absolute or `..` member names, symlinks pointing out) is not
listed but reported in `problems`, as quarantine-shaped dicts.
"""

from __future__ import annotations

import os
import stat
import zipfile
from typing import Any, BinaryIO

_ZIP_HINT = "check it with `unzip -t`, re-download or re-create it, and ingest again"

MAX_MEMBER_BYTES = 1 << 30
"""Largest member a zip may unpack to: a run's biggest files (traj.jsonl, recordings) are far
smaller, and a member declaring more is refused rather than inflated into memory."""
MAX_MEMBER_RATIO = 200
"""Largest compression ratio for members over `_RATIO_FLOOR` bytes: screenshots are PNG
(already compressed) and JSON lines shrink ~10x; a 1000x member is a zip bomb."""
_RATIO_FLOOR = 16 << 20


class SourceError(Exception):
    """A source, or one file in it, cannot be read; the message says what to do."""

    def __init__(self, uri: str, message: str, location: str | None = None) -> None:
        super().__init__(f"{uri}: {message}")
        self.uri = uri
        self.message = message
        self.location = location


def _problem(location: str, reason: str, message: str) -> dict[str, Any]:
    return {"location": location, "reason": reason, "message": message, "excerpt": location[:200]}


def _unsafe_reason(name: str) -> str | None:
    """Why a member name could reach outside the source, or None when it is safe."""
    if "\\" in name:
        return "backslash in member path"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "absolute member path"
    if ".." in name.split("/"):
        return "'..' in member path"
    if "\x00" in name:
        return "NUL in member path"
    return None


def _is_macos_metadata(name: str) -> bool:
    return name.startswith("__MACOSX/") or "/__MACOSX/" in name


class Source:
    """Base of the three views: `files()` lists, `read_bytes()`/`size()` read one listed path."""

    uri: str
    kind: str
    problems: list[dict[str, Any]]

    def files(self) -> list[str]:
        raise NotImplementedError

    def read_bytes(self, path: str) -> bytes:
        raise NotImplementedError

    def size(self, path: str) -> int:
        raise NotImplementedError

    @property
    def name(self) -> str:
        """The source's basename (a display fallback for runs with no model level)."""
        base = self.uri.rstrip("/").rsplit("/", 1)[-1]
        if "://" in base or not base:
            base = self.uri
        return base[:-4] if base.lower().endswith(".zip") and len(base) > 4 else base

    def exists(self, path: str) -> bool:
        """Whether `path` is one of `files()` (a set is built once per source)."""
        listed = getattr(self, "_file_set", None)
        if listed is None:
            listed = self._file_set = frozenset(self.files())
        return path in listed

    def close(self) -> None:
        """Release open handles (zip files); reading after close is an error."""

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"


class DirSource(Source):
    """A local folder; symlinks that resolve outside it are reported, not followed."""

    kind = "dir"

    def __init__(self, path: str) -> None:
        self.uri = os.path.abspath(path)
        self._root_real = os.path.realpath(self.uri)
        self.problems = []
        self._files: list[str] | None = None
        self._listed: frozenset[str] = frozenset()
        if not os.path.isdir(self.uri):
            raise SourceError(self.uri, "is not a folder; give a run folder, a .zip or a URL")

    def _walk(self) -> list[str]:
        out: list[str] = []
        stack = [""]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.uri, rel) if rel else self.uri
            try:
                entries = list(os.scandir(full))
            except OSError as e:
                self.problems.append(
                    _problem(rel or ".", "unreadable_folder", f"{self.uri}/{rel}: {e}")
                )
                continue
            for e in entries:
                child = f"{rel}/{e.name}" if rel else e.name
                if e.is_symlink():
                    real = os.path.realpath(e.path)
                    if not self._inside(e.path):
                        self.problems.append(
                            _problem(
                                child,
                                "unsafe_symlink",
                                f"{self.uri}!{child}: symlink points outside the source "
                                f"({real}); it was not followed",
                            )
                        )
                        continue
                    if os.path.isdir(real):
                        continue  # a link to a folder inside: its files are listed there
                    if os.path.isfile(real):
                        out.append(child)
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append(child)
                elif e.is_file(follow_symlinks=False):
                    out.append(child)
        out.sort()
        return out

    def files(self) -> list[str]:
        if self._files is None:
            self._files = self._walk()
            self._listed = frozenset(self._files)
        return list(self._files)

    def _inside(self, full: str) -> bool:
        real = os.path.realpath(full)
        return real == self._root_real or real.startswith(self._root_real + os.sep)

    def _full(self, path: str) -> str:
        """The local path of a source path; anything that could lead outside is refused."""
        full = os.path.join(self.uri, path)
        if path not in self._listed and (_unsafe_reason(path) or not self._inside(full)):
            raise SourceError(self.uri, f"refusing to read {path!r}: not a path inside the source")
        return full

    def read_bytes(self, path: str) -> bytes:
        try:
            with open(self._full(path), "rb") as f:
                return f.read()
        except OSError as e:
            raise SourceError(self.uri, f"cannot read {path}: {e}", path) from e

    def size(self, path: str) -> int:
        try:
            return os.stat(self._full(path)).st_size
        except OSError as e:
            raise SourceError(self.uri, f"cannot stat {path}: {e}", path) from e


class ZipSource(Source):
    """A zip read in place with `zipfile`: members are listed from the central directory and
    decompressed one at a time; nothing is extracted."""

    kind = "zip"

    def __init__(
        self,
        uri: str,
        fileobj: BinaryIO | None = None,
        max_member_bytes: int = MAX_MEMBER_BYTES,
    ) -> None:
        self.uri = uri if fileobj is not None else os.path.abspath(uri)
        self.problems = []
        self._fileobj = fileobj
        self._max_member = max_member_bytes
        try:
            self._zip = zipfile.ZipFile(fileobj if fileobj is not None else self.uri)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as e:
            if fileobj is not None:
                fileobj.close()
            raise SourceError(self.uri, f"not a readable zip archive ({e}); {_ZIP_HINT}") from e
        self._members: dict[str, zipfile.ZipInfo] = {}
        for info in self._zip.infolist():
            name = info.filename
            if info.is_dir() or _is_macos_metadata(name):
                continue
            reason = _unsafe_reason(name)
            if not reason and stat.S_ISLNK(info.external_attr >> 16):
                reason = "symlink member (it could point outside the archive)"
            if reason:
                self.problems.append(
                    _problem(
                        name,
                        "unsafe_member_path",
                        f"{self.uri}!{name}: {reason}; the member was not listed nor opened "
                        "(re-create the archive with relative paths)",
                    )
                )
                continue
            if name in self._members:
                self.problems.append(
                    _problem(
                        name,
                        "duplicate_member",
                        f"{self.uri}!{name}: the archive holds this name more than once; "
                        "the last copy is read",
                    )
                )
            self._members[name] = info
        self._files = sorted(self._members)

    def files(self) -> list[str]:
        return list(self._files)

    def _info(self, path: str) -> zipfile.ZipInfo:
        try:
            return self._members[path]
        except KeyError:
            raise SourceError(self.uri, f"no member {path!r} in the archive", path) from None

    def _refuse_bomb(self, path: str, info: zipfile.ZipInfo) -> None:
        """Refuse members that would inflate beyond the caps, before decompressing anything."""
        size, packed = info.file_size, max(info.compress_size, 1)
        why = None
        if size > self._max_member:
            why = f"declares {size} bytes unpacked, over the {self._max_member}-byte limit"
        elif size > _RATIO_FLOOR and size > MAX_MEMBER_RATIO * packed:
            why = f"inflates {size // packed}x ({packed} -> {size} bytes): a zip bomb"
        if why:
            raise SourceError(
                self.uri, f"member {path} {why}; it was not read (re-create the archive)", path
            )

    def read_bytes(self, path: str) -> bytes:
        info = self._info(path)
        self._refuse_bomb(path, info)
        try:
            with self._zip.open(info) as member:
                data = member.read(self._max_member + 1)
            if len(data) > self._max_member:  # a header that lied about the size
                raise ValueError(f"unpacks to more than {self._max_member} bytes")
            return data
        except Exception as e:  # bad CRC, encryption, unknown compression, truncated data
            raise SourceError(
                self.uri,
                f"member {path} cannot be read ({type(e).__name__}: {e}); {_ZIP_HINT}",
                path,
            ) from e

    def size(self, path: str) -> int:
        return self._info(path).file_size

    def close(self) -> None:
        self._zip.close()
        if self._fileobj is not None:
            self._fileobj.close()


class FsspecSource(Source):
    """Any fsspec filesystem (memory://, file://, s3://, gs://, ...), listed once with find()."""

    kind = "fsspec"

    def __init__(self, uri: str) -> None:
        import fsspec.core

        self.uri = uri
        self.problems = []
        try:
            self._fs, root = fsspec.core.url_to_fs(uri)
            root = root.rstrip("/")
            found = self._fs.find(root, detail=True)
        except Exception as e:
            raise SourceError(
                uri, f"cannot list ({type(e).__name__}: {e}); check the URL and credentials"
            ) from e
        self._root = root
        self._sizes: dict[str, int] = {}
        prefix = root + "/" if root else ""
        for full, info in found.items():
            if info.get("type", "file") != "file":
                continue
            full = full.rstrip("/")
            rel = full[len(prefix) :] if prefix and full.startswith(prefix) else full.lstrip("/")
            if not rel:
                continue
            reason = _unsafe_reason(rel)
            if reason:
                self.problems.append(
                    _problem(rel, "unsafe_member_path", f"{uri}!{rel}: {reason}; not listed")
                )
                continue
            self._sizes[rel] = int(info.get("size") or 0)
        self._files = sorted(self._sizes)
        if not self._files and not self._fs.isdir(root):
            raise SourceError(uri, "nothing found at this URL; check the path")

    def files(self) -> list[str]:
        return list(self._files)

    def read_bytes(self, path: str) -> bytes:
        if path not in self._sizes:
            raise SourceError(self.uri, f"no file {path!r} in the source", path)
        full = f"{self._root}/{path}" if self._root else path
        try:
            return self._fs.cat_file(full)
        except Exception as e:
            raise SourceError(
                self.uri, f"cannot read {path} ({type(e).__name__}: {e})", path
            ) from e

    def size(self, path: str) -> int:
        try:
            return self._sizes[path]
        except KeyError:
            raise SourceError(self.uri, f"no file {path!r} in the source", path) from None


def _is_url(uri: str) -> bool:
    head, sep, _ = uri.partition("://")
    return bool(sep) and head.replace("+", "").replace("-", "").replace(".", "").isalnum()


def open_source(uri: str) -> Source:
    """Open a run folder, a .zip (read in place) or an fsspec URL; raise SourceError if unreadable.

    A URL ending in .zip is opened through fsspec as a random-access file and read with
    zipfile, so only the central directory and the members asked for are fetched.
    """
    uri = os.fspath(uri)
    if _is_url(uri):
        if uri.lower().rstrip("/").endswith(".zip"):
            import fsspec

            try:
                fileobj = fsspec.open(uri.rstrip("/"), "rb").open()
            except Exception as e:
                raise SourceError(
                    uri, f"cannot open ({type(e).__name__}: {e}); check the URL"
                ) from e
            return ZipSource(uri, fileobj)
        return FsspecSource(uri)
    if os.path.isdir(uri):
        return DirSource(uri)
    if os.path.isfile(uri):
        return ZipSource(uri)
    raise SourceError(os.path.abspath(uri), "no such folder or file; check the path")
