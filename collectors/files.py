"""Local files as readers may open them: regular files only, and names that can be stored.

A FIFO, socket or device named like a trajectory or a screenshot would block a reader forever
(or read a device), so a file is opened without blocking and checked on the opened descriptor
(what is checked is what is read, even if the name was swapped since it was listed). A name
that is not valid UTF-8 (Linux allows any bytes) cannot be stored in a Parquet string column
nor printed; it is shown escaped (`caf\\xe9.zip`) and the file is left out.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder: it was not read."""


class FileTooLarge(OSError):
    """The file holds more bytes than the cap it was opened with."""

    def __init__(self, path: str, size: int) -> None:
        super().__init__(f"{escaped(path)}: {size} bytes")
        self.size = size


def kind_of(mode: int) -> str:
    """What a file of this st_mode is, in words ('a FIFO (named pipe)', ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str, max_bytes: int | None = None) -> BinaryIO:
    """Open a regular file for reading; NotRegularFile for anything else (never blocks on a
    FIFO or a device), FileTooLarge when it holds more than `max_bytes`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{escaped(path)} is {kind_of(st.st_mode)}, not a regular file")
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLarge(path, st.st_size)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file (see `open_regular`); a file that grew past `max_bytes`
    since it was opened is FileTooLarge too."""
    with open_regular(path, max_bytes) as f:
        data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise FileTooLarge(path, len(data))
    return data


def storable(name: str) -> bool:
    """Whether a name (as os functions give it: undecodable bytes as surrogates) is valid
    UTF-8, so it can be stored and printed."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(name: str) -> str:
    """A name that can be stored and printed: undecodable bytes as \\xNN escapes."""
    if storable(name):
        return name
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte decodes to (from JSON text, say)
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def escaped_bytes(raw: bytes) -> str:
    """A name given as bytes (a zip member's), with bytes that are not UTF-8 as \\xNN."""
    return raw.decode("utf-8", "backslashreplace")


__all__ = [
    "FileTooLarge",
    "NotRegularFile",
    "escaped",
    "escaped_bytes",
    "kind_of",
    "open_regular",
    "read_regular",
    "storable",
]
