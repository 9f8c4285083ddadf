"""One read-only view over a directory, a .zip, or any fsspec URL.

Readers only ever list relative POSIX paths and read bytes, so the same code serves a local
run folder, a published zip read in place (never unpacked), and remote storage. Anything that
would step outside the source (absolute or `..` member names, symlinks pointing out) is not
listed but reported in `problems`, as quarantine-shaped dicts; so is what cannot or should
not be read: FIFOs, sockets and devices, names that are not UTF-8, zips inside the source,
zip members `zipfile` cannot open (see `collectors.zip_repair`).

Every file is opened only if it is a regular file (checked on the opened descriptor, see
`collectors.files`) and not larger than `limits.FILE_BYTES`; `open()` streams it, so a reader
of lines never holds a whole trajectory, and `read_document` reads what is parsed whole
within `limits.DOCUMENT_BYTES`.
"""

from __future__ import annotations

import io
import os
import stat
import threading
import zipfile
from typing import Any, BinaryIO

from deskscore.collectors import limits
from deskscore.collectors.files import (
    FileTooLarge,
    NotRegularFile,
    escaped,
    kind_of,
    open_regular,
    storable,
)
from deskscore.collectors.lfs import LFS_POINTER, LFS_TODO, is_lfs_pointer, lfs_pointer
from deskscore.collectors.zip_index import Indexed, Listed, open_indexed, read_whole
from deskscore.collectors.zip_repair import open_tolerant

_ZIP_HINT = "check it with `unzip -t`, re-download or re-create it, and ingest again"

MAX_MEMBER_BYTES = limits.FILE_BYTES.default
"""Largest member a zip may unpack to by default (`limits.FILE_BYTES` is the one in force):
a run's biggest files (traj.jsonl, recordings) are far smaller, and a member declaring more
is refused rather than inflated."""
MAX_MEMBER_RATIO = 200
"""Largest compression ratio for members over `_RATIO_FLOOR` bytes: screenshots are PNG
(already compressed) and JSON lines shrink ~10x; a 1000x member is a zip bomb."""
_RATIO_FLOOR = 16 << 20
_BLOCK = 1 << 20


UNREADABLE = "unreadable_file"
TOO_LARGE = "too_large"
SPECIAL_FILE = "special_file"
UNDECODABLE_NAME = "undecodable_name"
NESTED_ARCHIVE = "nested_archive"


class SourceError(Exception):
    """A source, or one file in it, cannot be read; the message says what to do, `reason`
    is the quarantine reason of the file (unreadable_file, too_large, special_file)."""

    def __init__(
        self, uri: str, message: str, location: str | None = None, reason: str = UNREADABLE
    ) -> None:
        super().__init__(f"{uri}: {message}")
        self.uri = uri
        self.message = message
        self.location = location
        self.reason = reason


def _problem(location: str, reason: str, message: str) -> dict[str, Any]:
    return {"location": location, "reason": reason, "message": message, "excerpt": location[:200]}


def _nested(uri: str, name: str) -> dict[str, Any] | None:
    """The problem of a zip inside the source, which is listed but never opened."""
    if not name.lower().endswith(".zip"):
        return None
    return _problem(
        name,
        NESTED_ARCHIVE,
        f"{uri}!{name}: an archive inside the source is not opened; ingest it as a source of "
        "its own (unzip it, or name it: deskscore ingest PATH/*.zip)",
    )


def _too_large(uri: str, path: str, size: int | str, cap: int | None = None) -> SourceError:
    what = limits.FILE_BYTES.exceeded(f"{path} holds {size} bytes", cap)
    return SourceError(uri, what, path, TOO_LARGE)


def _unsafe_reason(name: str) -> str | None:
    """Why a member name could reach outside the source, or None when it is safe."""
    if "\\" in name:
        return "backslash in member path"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "absolute member path"
    if ".." in name and ".." in name.split("/"):
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

    def open(self, path: str) -> BinaryIO:
        """A stream of the file's bytes (errors while reading raise SourceError); sources
        that cannot stream hand over the bytes read whole."""
        return io.BytesIO(self.read_bytes(path))

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
    """A local folder; symlinks that resolve outside it are reported, not followed, unless
    `follow_links`: then every link is followed, as a tool reading the folder directly
    does (score.py, a drop-in for such a tool, on the user's own folder). Ingest does not
    follow them: an archive from elsewhere must not make it read the rest of the machine."""

    kind = "dir"

    def __init__(self, path: str, *, follow_links: bool = False) -> None:
        self.uri = os.path.abspath(path)
        self._root_real = os.path.realpath(self.uri)
        self._follow = follow_links
        self.problems = []
        self._files: list[str] | None = None
        self._listed: frozenset[str] = frozenset()
        self._real_dirs: dict[str, str] = {}
        if not os.path.isdir(self.uri):
            raise SourceError(self.uri, "is not a folder; give a run folder, a .zip or a URL")

    def _walk(self) -> list[str]:
        out: list[str] = []
        stack = [""]
        linked: set[str] = set()  # folders reached through a followed link, walked once each
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
                if not storable(e.name):
                    shown = escaped(child)
                    self.problems.append(
                        _problem(
                            shown,
                            UNDECODABLE_NAME,
                            f"{self.uri}!{shown}: the name is not valid UTF-8 (shown escaped); "
                            "it was not read: rename it and ingest again",
                        )
                    )
                    continue
                if e.is_symlink():
                    real = os.path.realpath(e.path)
                    if self._follow and os.path.isdir(real):
                        if real not in linked:  # a link back up the tree is walked once
                            linked.add(real)
                            stack.append(child)
                        continue
                    if not self._follow and not self._inside(e.path):
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
                    else:
                        try:
                            self._special(child, os.stat(real).st_mode)
                        except OSError as err:  # dangling, or a loop
                            self.problems.append(
                                _problem(
                                    child,
                                    UNREADABLE,
                                    f"{self.uri}!{child}: a symlink that leads to no file "
                                    f"({err.strerror}); it was not read: copy the file it "
                                    "pointed to in its place and ingest again",
                                )
                            )
                    continue
                if e.is_dir(follow_symlinks=False):
                    if e.name.endswith(".jsonl") or e.name == "result.txt":
                        self._special(child, stat.S_IFDIR)  # where a task's file is looked for
                    stack.append(child)
                elif e.is_file(follow_symlinks=False):
                    out.append(child)
                else:
                    try:
                        self._special(child, e.stat(follow_symlinks=False).st_mode)
                    except OSError:
                        continue  # gone since it was listed
        out.sort()
        for name in out:
            nested = _nested(self.uri, name)
            if nested:
                self.problems.append(nested)
        return out

    def _special(self, child: str, mode: int) -> None:
        self.problems.append(
            _problem(
                child,
                SPECIAL_FILE,
                f"{self.uri}!{child}: {kind_of(mode)}, not a regular file; it was not read",
            )
        )

    def files(self) -> list[str]:
        if self._files is None:
            self._files = self._walk()
            self._listed = frozenset(self._files)
        return list(self._files)

    def _inside(self, full: str) -> bool:
        real = self._realpath(full)
        return real == self._root_real or real.startswith(self._root_real + os.sep)

    def _realpath(self, full: str) -> str:
        """os.path.realpath(full), resolving each folder once: a run's files share a few
        folders, and resolving a deep path costs a system call per component (`full` holds
        no '..' or '.': `_unsafe_reason` refuses those first). A file that is itself a
        symlink is resolved whole."""
        folder, name = os.path.split(full)
        if not name or os.path.islink(full):
            return os.path.realpath(full)
        real = self._real_dirs.get(folder)
        if real is None:
            real = self._real_dirs[folder] = os.path.realpath(folder)
        return os.path.join(real, name)

    def _full(self, path: str) -> str:
        """The local path of a source path; anything that could lead outside is refused."""
        full = os.path.join(self.uri, path)
        if path not in self._listed and (
            _unsafe_reason(path) or not (self._follow or self._inside(full))
        ):
            raise SourceError(self.uri, f"refusing to read {path!r}: not a path inside the source")
        return full

    def open(self, path: str) -> BinaryIO:
        """The file, opened only if it is a regular file within `limits.FILE_BYTES`."""
        cap = limits.FILE_BYTES.value()
        try:
            return _Capped(open_regular(self._full(path), cap), cap, self.uri, path)
        except FileTooLarge as e:
            raise _too_large(self.uri, path, e.size, cap) from None
        except NotRegularFile as e:
            raise SourceError(self.uri, f"{e}; it was not read", path, SPECIAL_FILE) from None
        except OSError as e:
            raise SourceError(self.uri, f"cannot read {path}: {e}", path) from e

    def read_bytes(self, path: str) -> bytes:
        with self.open(path) as f:
            return f.read()

    def size(self, path: str) -> int:
        try:
            return os.stat(self._full(path)).st_size
        except OSError as e:
            raise SourceError(self.uri, f"cannot stat {path}: {e}", path) from e


class ZipSource(Source):
    """A zip read in place with `zipfile`: members are listed from the central directory and
    decompressed one at a time; nothing is extracted. A plain archive opened here by path is
    listed without a `ZipInfo` per image member (`collectors.zip_index`); one given as a file
    object, or any other archive, is opened by `zipfile` (and `zip_repair`) whole."""

    kind = "zip"

    def __init__(
        self,
        uri: str,
        fileobj: BinaryIO | None = None,
        max_member_bytes: int = MAX_MEMBER_BYTES,
    ) -> None:
        self.uri = uri if fileobj is not None else os.path.abspath(uri)
        self.problems = []
        self._max_member = min(max_member_bytes, limits.FILE_BYTES.value())
        self._whole_zip: zipfile.ZipFile | None = None
        self._whole_file: BinaryIO | None = None
        self._whole_lock = threading.Lock()
        indexed = None
        if fileobj is None:
            try:
                fileobj = open_regular(self.uri)
            except OSError as e:
                raise SourceError(self.uri, f"cannot open the archive ({e})") from e
            indexed = self._indexed(fileobj)
        self._fileobj = fileobj
        self._indexed_zip = indexed
        if indexed is not None:
            self._zip = indexed.zip
            bad: list[Any] = []
            names, attrs = indexed.names, indexed.external_attrs
            # a member in the view opens by its ZipInfo, another by its index (`_info`)
            openers: Any = [indexed.infos.get(i, i) for i in range(len(names))]
        else:
            try:
                self._zip, bad = open_tolerant(fileobj)
            except (
                zipfile.BadZipFile,
                zipfile.LargeZipFile,
                OSError,
                EOFError,
                ValueError,
                NotImplementedError,
            ) as e:
                fileobj.close()
                raise SourceError(self.uri, f"not a readable zip archive ({e}); {_ZIP_HINT}") from e
            openers = self._zip.infolist()
            names = [info.filename for info in openers]
            attrs = [info.external_attr for info in openers]
        left_out = {b.index: b for b in bad}
        self._members: dict[str, zipfile.ZipInfo | int] = {}
        for index, name in enumerate(names):
            if index in left_out:
                b = left_out[index]
                self.problems.append(
                    _problem(
                        b.name,
                        b.reason,
                        f"{self.uri}!{b.name}: {b.what}; the member was not read (the others "
                        "were); re-create the archive",
                    )
                )
                continue
            if not name:  # zipfile's own is_dir() fails on it
                self.problems.append(
                    _problem(
                        name,
                        "unsafe_member_path",
                        f"{self.uri}: a member without a name; it was not read (the others were)",
                    )
                )
                continue
            if name.endswith("/") or _is_macos_metadata(name):  # ZipInfo.is_dir()
                continue
            reason = _unsafe_reason(name)
            if not reason and stat.S_ISLNK(attrs[index] >> 16):
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
            self._members[name] = openers[index]
        self._files = sorted(self._members)
        for name in self._files:
            nested = _nested(self.uri, name)
            if nested:
                self.problems.append(nested)

    @staticmethod
    def _indexed(fileobj: BinaryIO) -> Indexed | None:
        """The archive listed by `zip_index` when it is plain, else None (and when reading
        it fails: `zipfile` then says what is wrong)."""
        try:
            return open_indexed(fileobj)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError):
            return None

    def files(self) -> list[str]:
        return list(self._files)

    def _info(self, path: str) -> zipfile.ZipInfo | Listed:
        try:
            info = self._members[path]
        except KeyError:
            raise SourceError(self.uri, f"no member {path!r} in the archive", path) from None
        if type(info) is int:  # listed by zip_index, not in its view
            return self._indexed_zip.listed(info)  # type: ignore[union-attr]
        return info  # type: ignore[return-value]

    def _whole(self) -> zipfile.ZipFile:
        """A `zipfile.ZipFile` of the whole archive (for the members `zip_index` leaves out of
        its view), made on first need, over a file of its own: threads may read members of
        both at once, and two ZipFiles sharing one file position would mix their reads."""
        with self._whole_lock:
            if self._whole_zip is None:
                whole = open_regular(self.uri)
                try:
                    self._whole_zip, _ = open_tolerant(whole)
                except BaseException:
                    whole.close()
                    raise
                self._whole_file = whole
            return self._whole_zip

    def _refuse_bomb(self, path: str, info: zipfile.ZipInfo | Listed) -> None:
        """Refuse members that would inflate beyond the caps, before decompressing anything."""
        size, packed = info.file_size, max(info.compress_size, 1)
        why = None
        if size > self._max_member:
            raise _too_large(self.uri, path, size, self._max_member)
        if size > _RATIO_FLOOR and size > MAX_MEMBER_RATIO * packed:
            why = f"inflates {size // packed}x ({packed} -> {size} bytes): a zip bomb"
            raise SourceError(
                self.uri, f"member {path} {why}; it was not read (re-create the archive)", path
            )

    def open(self, path: str) -> BinaryIO:
        """The member, decompressed as it is read; what goes wrong while reading (bad CRC,
        encryption, unknown compression, a size that lied) raises SourceError."""
        info = self._info(path)
        self._refuse_bomb(path, info)
        if self._indexed_zip is not None and isinstance(info, zipfile.ZipInfo):
            data = read_whole(self._fileobj, info)
            if data is not None:
                return io.BytesIO(data)
        try:
            # an image is not in zip_index's view: read from the whole archive
            whole = isinstance(info, Listed)
            member = self._whole().open(path) if whole else self._zip.open(info)
        except Exception as e:  # encryption, unknown compression, a bad local header
            raise self._unreadable(path, e) from e
        return _Capped(member, self._max_member, self.uri, path, self._unreadable)

    def _unreadable(self, path: str, e: Exception) -> SourceError:
        if isinstance(e, RuntimeError) and "encrypted" in str(e):  # zipfile's words for it
            why = ("is encrypted (password-protected) and was not read: unzip the archive with "
                   "its password and ingest the folder, or re-create it without one")  # fmt: skip
            return SourceError(self.uri, f"member {path} {why}", path)
        return SourceError(
            self.uri, f"member {path} cannot be read ({type(e).__name__}: {e}); {_ZIP_HINT}", path
        )

    def read_bytes(self, path: str) -> bytes:
        with self.open(path) as member:
            return member.read()

    def size(self, path: str) -> int:
        return self._info(path).file_size

    def close(self) -> None:
        self._zip.close()
        if self._whole_zip is not None:
            self._whole_zip.close()
        if self._whole_file is not None:
            self._whole_file.close()
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
            if not storable(rel):
                shown = escaped(rel)
                self.problems.append(
                    _problem(
                        shown,
                        UNDECODABLE_NAME,
                        f"{uri}!{shown}: the name is not valid "
                        "UTF-8 (shown escaped); it was not read: rename it",
                    )
                )
                continue
            reason = _unsafe_reason(rel)
            if reason:
                self.problems.append(
                    _problem(rel, "unsafe_member_path", f"{uri}!{rel}: {reason}; not listed")
                )
                continue
            self._sizes[rel] = int(info.get("size") or 0)
        self._files = sorted(self._sizes)
        for name in self._files:
            nested = _nested(uri, name)
            if nested:
                self.problems.append(nested)
        if not self._files and not self._fs.isdir(root):
            raise SourceError(uri, "nothing found at this URL; check the path")

    def files(self) -> list[str]:
        return list(self._files)

    def open(self, path: str) -> BinaryIO:
        if path not in self._sizes:
            raise SourceError(self.uri, f"no file {path!r} in the source", path)
        cap = limits.FILE_BYTES.value()
        if self._sizes[path] > cap:
            raise _too_large(self.uri, path, self._sizes[path], cap)
        full = f"{self._root}/{path}" if self._root else path
        try:
            stream = self._fs.open(full, "rb")
        except Exception as e:
            raise self._unreadable(path, e) from e
        return _Capped(stream, cap, self.uri, path, self._unreadable)

    def _unreadable(self, path: str, e: Exception) -> SourceError:
        return SourceError(self.uri, f"cannot read {path} ({type(e).__name__}: {e})", path)

    def read_bytes(self, path: str) -> bytes:
        with self.open(path) as f:
            return f.read()

    def size(self, path: str) -> int:
        try:
            return self._sizes[path]
        except KeyError:
            raise SourceError(self.uri, f"no file {path!r} in the source", path) from None


class _Capped(io.RawIOBase):
    """A stream that raises SourceError instead of reading past `cap` bytes (a zip header or
    a listing that lied about the size, a file growing while read) and for any error of the
    stream beneath (bad CRC, truncated data, a lost connection)."""

    def __init__(self, inner: Any, cap: int, uri: str, path: str, unreadable: Any = None) -> None:
        super().__init__()
        self._inner, self._cap, self._uri, self._path = inner, cap, uri, path
        self._unreadable = unreadable
        self._read = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:  # to the end, a block at a time (never one huge buffer)
            chunks = []
            while data := self.read(_BLOCK):
                chunks.append(data)
            return b"".join(chunks)
        try:
            data = self._inner.read(min(size, self._cap + 1 - self._read))
        except Exception as e:
            if self._unreadable is None:
                raise SourceError(self._uri, f"cannot read {self._path}: {e}", self._path) from e
            raise self._unreadable(self._path, e) from e
        self._read += len(data)
        if self._read > self._cap:
            raise _too_large(self._uri, self._path, f"more than {self._cap}", self._cap)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


def read_document(source: Source, path: str) -> bytes:
    """The bytes of a file that is parsed whole (JSON, CSV, text): SourceError (reason
    too_large) beyond `limits.DOCUMENT_BYTES`, checked on the listed size before reading, and
    (reason lfs_pointer) for a Git LFS pointer in the file's place."""
    cap = limits.DOCUMENT_BYTES.value()
    try:
        size = source.size(path)
    except (SourceError, NotImplementedError):
        size = None
    if size is not None and size > cap:
        raise SourceError(
            source.uri, limits.DOCUMENT_BYTES.exceeded(f"{path} holds {size} bytes"), path,
            TOO_LARGE,
        )  # fmt: skip
    data = source.read_bytes(path)
    if len(data) > cap:
        raise SourceError(
            source.uri, limits.DOCUMENT_BYTES.exceeded(f"{path} holds {len(data)} bytes"), path,
            TOO_LARGE,
        )  # fmt: skip
    if is_lfs_pointer(data):
        raise SourceError(source.uri, f"{lfs_pointer(path, data)}; {LFS_TODO}", path, LFS_POINTER)
    return data


def _is_url(uri: str) -> bool:
    head, sep, _ = uri.partition("://")
    return bool(sep) and head.replace("+", "").replace("-", "").replace(".", "").isalnum()


def open_source(uri: str, *, follow_links: bool = False) -> Source:
    """Open a run folder, a .zip (read in place) or an fsspec URL; raise SourceError if unreadable.

    A URL ending in .zip is opened through fsspec as a random-access file and read with
    zipfile, so only the central directory and the members asked for are fetched.
    `follow_links`: a folder's symlinks are followed wherever they point (see DirSource).
    """
    uri = os.fspath(uri)
    if not uri:
        raise SourceError("''", "an empty path: give a run folder, a .zip or a URL")
    if not storable(uri):
        raise SourceError(escaped(uri), _UNDECODABLE_SOURCE, reason=UNDECODABLE_NAME)
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
        return DirSource(uri, follow_links=follow_links)
    if os.path.isfile(uri):
        return ZipSource(uri)
    if os.path.islink(uri):  # a link that leads nowhere: say why (a loop, a missing target)
        try:
            os.stat(uri)
        except OSError as e:
            raise SourceError(
                os.path.abspath(uri), f"is a symbolic link that cannot be followed ({e.strerror})"
            ) from None
    if os.path.exists(uri):
        raise SourceError(
            os.path.abspath(uri),
            f"is {kind_of(os.stat(uri).st_mode)}: give a run folder, a .zip or a URL",
            reason=SPECIAL_FILE,
        )
    if _names_undecodable(os.path.abspath(uri)):
        raise SourceError(os.path.abspath(uri), _UNDECODABLE_SOURCE, reason=UNDECODABLE_NAME)
    raise SourceError(os.path.abspath(uri), "no such folder or file; check the path")


_UNDECODABLE_SOURCE = (
    "its name is not valid UTF-8 (shown here escaped) and cannot be stored; rename it (e.g. "
    "with `convmv` or `mv`) and ingest it again"
)


def _names_undecodable(path: str) -> bool:
    """Whether `path` is the escaped form (`files.escaped`) of a path that exists: how a
    source whose name is not UTF-8 reaches here once listed (`archives.expand_sources`)."""
    if "\\x" not in path:
        return False
    real = os.sep
    for part in path.strip(os.sep).split(os.sep):
        here = os.path.join(real, part)
        if os.path.lexists(here):
            real = here
            continue
        try:
            names = os.listdir(real)
        except OSError:
            return False
        match = next((n for n in names if not storable(n) and escaped(n) == part), None)
        if match is None:
            return False
        real = os.path.join(real, match)
    return real != os.sep and os.path.lexists(real)
