"""Files inside the store, never through a link.

Everything `mm` reads, writes or deletes inside a store goes through here: each folder
on the way down from the store's root is opened with O_NOFOLLOW|O_DIRECTORY relative to
the one above it, and each file with O_NOFOLLOW relative to its folder. A symbolic link
planted anywhere inside the store (a thumbnail folder pointing at the user's home, a
history file pointing at ~/.bashrc) is refused with `UnsafePath`, a one-line error naming
it; nothing is ever read, written or deleted through it. The root itself may be a link
(`--store` or `MM_HOME` is the user's own choice).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from mmcli.errors import StoreError
from mmcli.store.fields import is_plain_file_name

NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW


class UnsafePath(StoreError):
    """A path inside the store is a symbolic link or not what it should be."""


def refused(path: Path, e: OSError | None = None, what: str = "a plain file") -> UnsafePath:
    """The error for `path`, found a link (ELOOP) or something other than `what`."""
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return UnsafePath(f"{path}: is a symbolic link; mm never follows links in the store")
    if e is not None and e.errno == errno.ELOOP:
        return UnsafePath(f"{path}: is a symbolic link; mm never follows links in the store")
    return UnsafePath(f"{path}: is not {what}; refusing to use it")


def _unsafe(e: OSError) -> bool:
    return e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO)


@contextlib.contextmanager
def folder(root: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """A descriptor of the folder `root/parts...`, each part opened without following a
    link (created, mode 0755 less umask, when `create`). `FileNotFoundError` when a part is
    missing and not created; `UnsafePath` for a link or a non-folder on the way."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    path = root
    try:
        for part in parts:
            path = path / part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, DIRECTORY, dir_fd=fd)
            except OSError as e:
                if _unsafe(e):
                    raise refused(path, e, "a folder") from None
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def open_file(dir_fd: int, name: str, flags: int, path: Path, mode: int = 0o644) -> int:
    """`os.open` of `name` in the folder `dir_fd`, refusing a link or a non-regular file."""
    try:
        fd = os.open(name, flags | NOFOLLOW | os.O_NONBLOCK, mode, dir_fd=dir_fd)
    except OSError as e:
        if _unsafe(e):
            raise refused(path, e) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise refused(path)
    return fd


def read_bytes(root: Path, parts: Sequence[str], name: str, limit: int | None = None) -> bytes:
    """The bytes of `root/parts.../name`, never through a link (`limit`: at most that
    many, plus one so a caller can tell the file is bigger)."""
    with folder(root, parts) as dfd:
        fd = open_file(dfd, name, os.O_RDONLY, root.joinpath(*parts, name))
    with os.fdopen(fd, "rb") as f:
        return f.read() if limit is None else f.read(limit + 1)


def read_tail(root: Path, parts: Sequence[str], name: str, limit: int) -> bytes:
    """At most the last `limit` bytes of `root/parts.../name`, never through a link,
    starting at a line's start (a history far bigger than any mm writes is not read
    whole)."""
    with folder(root, parts) as dfd:
        fd = open_file(dfd, name, os.O_RDONLY, root.joinpath(*parts, name))
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= limit:
            return f.read(limit)
        f.seek(size - limit)
        data = f.read(limit)
        return data[data.find(b"\n") + 1 :] if b"\n" in data else b""


def read_plain(directory: Path, name: str) -> bytes | None:
    """The bytes of the file `name` in `directory`, or None when `name` is not a plain
    file name, or the file is missing, unreadable or reached through a link."""
    if not is_plain_file_name(name):
        return None
    try:
        return read_bytes(directory.parent, [directory.name], name)
    except (OSError, UnsafePath):
        return None


def append(root: Path, parts: Sequence[str], name: str, data: bytes) -> None:
    """Append `data` to `root/parts.../name` (created), never through a link."""
    with folder(root, parts, create=True) as dfd:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        fd = open_file(dfd, name, flags, root.joinpath(*parts, name))
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def files(dir_fd: int) -> list[os.DirEntry[str]]:
    """The regular files in the folder `dir_fd` (links and folders left out)."""
    with os.scandir(dir_fd) as it:
        return [e for e in it if e.is_file(follow_symlinks=False)]


def check_folder(root: Path, parts: Sequence[str]) -> bool:
    """True when `root/parts...` is a real folder, False when it is absent; `UnsafePath`
    when it (or a folder on the way) is a link or not a folder."""
    try:
        with folder(root, parts):
            return True
    except FileNotFoundError:
        return False


def new_token() -> str:
    return secrets.token_hex(4)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old bytes or the new, never a mix."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{new_token()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def os_reason(e: OSError) -> str:
    """A short reason for a failed write: what a user can act on (disk full, read-only)."""
    if e.errno == errno.ENOSPC:
        return "disk full"
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "store is read-only"
    return e.strerror or str(e)
