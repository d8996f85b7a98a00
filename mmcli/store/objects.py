"""Where a store's bytes live: named objects behind one small interface.

A store is a set of objects named by keys (`loan.toml`, `loan/step-0001.png`,
`.mm/history/loan/...`). Two backends hold them: `Folder`, a local directory (the
default), and `S3Objects` (`mmcli.store.s3`), a bucket on any S3-compatible server. Both
keep the same contract, checked by one test suite run against each:

- `get` returns an object's bytes with its version tag (an ETag), or raises
  `FileNotFoundError`; `head` the same without the bytes, or None.
- `put` overwrites; `put(create=True)` writes only an object that does not exist yet
  (`Exists` otherwise); `put(match=TAG)` replaces only the version `TAG` names (`Stale`
  otherwise). Conditional writes are what concurrent writers on many machines rely on to
  never lose each other's work; `mmcli.store.conditions` checks that a server honours them.
- `delete` removes an object (a missing one is no error); `list` names the objects under a
  prefix, recursively.

Keys are `/`-separated parts, each a plain name (no empty part, no `.` or `..`): no key
can name anything outside its store.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mmcli.errors import StoreError
from mmcli.store import storefs
from mmcli.store.storefs import UnsafePath


class Exists(StoreError):
    """A create-only write found the object already there."""


class Stale(StoreError):
    """A conditional write found another version than the one it was made from."""


@dataclass(frozen=True)
class Info:
    """One object as listed: its key, size in bytes, last change (seconds since the
    epoch) and version tag."""

    key: str
    size: int
    modified: float
    tag: str


@dataclass(frozen=True)
class Blob:
    data: bytes
    tag: str


def check_key(key: str) -> list[str]:
    """The parts of `key`; `StoreError` for a key that could name something outside the
    store (an empty part, `.`, `..`, a NUL, a backslash)."""
    parts = key.split("/")
    for part in parts:
        if part in ("", ".", "..") or "\0" in part or "\\" in part or len(part) > 255:
            raise StoreError(f"not an object name in a store: {key!r}")
    return parts


class Objects(ABC):
    """A store's objects; see the module's docstring for the contract."""

    where: str
    """Where the objects are, as a user would name it (a folder, `s3://bucket/prefix`)."""

    local: bool = False
    """True for a folder on this machine (locks and in-use marks can be kernel locks)."""

    @abstractmethod
    def get(self, key: str, limit: int | None = None) -> Blob:
        """The object's bytes (with `limit`: at most `limit + 1` of them, so a caller can
        tell it is bigger) and version tag; `FileNotFoundError` when it is absent."""

    @abstractmethod
    def head(self, key: str) -> Info | None: ...

    @abstractmethod
    def put(self, key: str, data: bytes, *, create: bool = False, match: str | None = None) -> str:
        """Write the object whole (readers see the old bytes or the new, never a mix) and
        return its new version tag. `create`: only if absent, else `Exists`. `match`: only
        if its version is still `match`, else `Stale` (also when it is gone)."""

    @abstractmethod
    def delete(self, key: str) -> None: ...

    @abstractmethod
    def listing(self, prefix: str = "") -> list[Info]:
        """The objects whose key starts with `prefix` (a folder: end it with `/`),
        sorted by key."""

    def url(self, key: str) -> str:
        """Where one object is, for messages."""
        return f"{self.where.rstrip('/')}/{key}"


class Folder(Objects):
    """Objects as files under a local directory, never through a link.

    Every part of a key is opened relative to the folder above it without following a
    link (`storefs`): a link planted anywhere in the store is refused with `UnsafePath`.
    The root itself may be a link (the user's own choice of store). Writes are atomic
    (a temporary file, fsync, rename); a create-only write links the temporary file into
    place, which fails when the name is taken; a conditional replace holds the store's
    write lock while it compares versions. A version tag is the file's inode, size and
    change time: a rename always gives a new inode.
    """

    local = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self.where = str(root.absolute())
        """The folder, as messages name it: in full, whatever folder mm was started in."""

    def _split(self, key: str) -> tuple[list[str], str]:
        parts = check_key(key)
        return parts[:-1], parts[-1]

    @staticmethod
    def _tag(st: os.stat_result) -> str:
        return f"{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns:x}"

    def get(self, key: str, limit: int | None = None) -> Blob:
        folders, name = self._split(key)
        with storefs.folder(self.root, folders) as dfd:
            fd = storefs.open_file(dfd, name, os.O_RDONLY, self.root / key)
        with os.fdopen(fd, "rb") as f:
            tag = self._tag(os.fstat(f.fileno()))
            data = f.read() if limit is None else f.read(limit + 1)
        return Blob(data, tag)

    def head(self, key: str) -> Info | None:
        folders, name = self._split(key)
        try:
            with storefs.folder(self.root, folders) as dfd:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            raise storefs.refused(self.root / key)
        return Info(key, st.st_size, st.st_mtime, self._tag(st))

    def put(self, key: str, data: bytes, *, create: bool = False, match: str | None = None) -> str:
        folders, name = self._split(key)
        self.root.mkdir(parents=True, exist_ok=True)
        with storefs.folder(self.root, folders, create=True) as dfd:
            tmp = f".{name}.{os.getpid()}.{storefs.new_token()}.tmp"

            def opener(path: str, flags: int) -> int:
                return storefs.open_file(dfd, path, flags | os.O_EXCL, self.root / key)

            try:
                with open(tmp, "wb", opener=opener) as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                    # Its version: the same file (inode) under its final name, whoever
                    # changes or removes that name afterwards.
                    tag = self._tag(os.fstat(f.fileno()))
                if create:
                    try:
                        os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                    except FileExistsError:
                        raise Exists(f"{self.url(key)}: already exists") from None
                elif match is not None:
                    with self._compare_lock():
                        now = self.head(key)
                        if now is None or now.tag != match:
                            raise Stale(f"{self.url(key)}: changed since it was read")
                        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                else:
                    os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
            with contextlib.suppress(OSError):
                os.fsync(dfd)
            return tag

    @contextlib.contextmanager
    def _compare_lock(self) -> Iterator[None]:
        with storefs.folder(self.root, [".mm", "locks"], create=True) as dfd:
            fd = storefs.open_file(dfd, "objects.lock", os.O_RDWR | os.O_CREAT, self.root)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def delete(self, key: str) -> None:
        folders, name = self._split(key)
        try:
            with storefs.folder(self.root, folders) as dfd:
                os.unlink(name, dir_fd=dfd)  # a link here is itself removed, never its target
        except FileNotFoundError:
            pass

    def listing(self, prefix: str = "") -> list[Info]:
        base, _, _ = prefix.rpartition("/")
        start = check_key(base) if base else []
        found: list[Info] = []
        self._walk(start, found)
        return sorted((i for i in found if i.key.startswith(prefix)), key=lambda i: i.key)

    def _walk(self, parts: list[str], found: list[Info]) -> None:
        folders: list[str] = []
        try:
            with storefs.folder(self.root, parts) as dfd, os.scandir(dfd) as it:
                for e in it:
                    if e.name.startswith(".") and e.name.endswith(".tmp"):
                        continue  # a write under way
                    if e.is_dir(follow_symlinks=False):
                        folders.append(e.name)
                    elif e.is_file(follow_symlinks=False):
                        st = e.stat(follow_symlinks=False)
                        key = "/".join([*parts, e.name])
                        found.append(Info(key, st.st_size, st.st_mtime, self._tag(st)))
        except (FileNotFoundError, NotADirectoryError, UnsafePath):
            return  # absent, or a link: nothing is listed through it
        for name in folders:
            self._walk([*parts, name], found)
