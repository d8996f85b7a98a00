"""Where recordings live on disk.

Layout of a store directory:

    NAME.toml            the recording (see codec.py), the only file replay trusts
    NAME/                its thumbnails (PNG), referenced by the TOML
    .mm/locks/NAME.lock  serializes writers of NAME
    .mm/history/NAME.jsonl  one line per replay (appended)
    .mm/index.json       a cache of what each document says, for `mm ls` (rebuilt at will)

Every write of a recording is atomic: a temporary file in the same directory, fsync,
rename. Thumbnails are written first under fresh names and the old ones removed only
after the new TOML is in place, so a crash at any point leaves the previous recording
whole.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcli import codec
from mmcli.errors import (
    InvalidName,
    LockBusy,
    RecordingCorrupt,
    RecordingExists,
    RecordingNotFound,
    StoreError,
)
from mmcli.locking import acquire
from mmcli.model import Recording

NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
MAX_NAME = 100
SUFFIX = ".toml"
KIND_LINE = re.compile(r'^kind\s*=\s*"([a-z]+)"', re.MULTILINE)


def validate_name(name: str) -> str:
    """Return `name` if it is a valid recording name, else raise `InvalidName`."""
    shown = name if len(name) <= 40 else name[:40] + "..."
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidName(
            f"invalid recording name {shown!r}: use letters, digits, '.', '_' and '-' only"
        )
    if len(name) > MAX_NAME:
        raise InvalidName(f"recording name too long ({len(name)} > {MAX_NAME} characters)")
    if set(name) == {"."}:
        raise InvalidName(f"invalid recording name {name!r}")
    # NAME/ holds a recording's thumbnails: a name ending in .toml would share its folder
    # with another recording's file, and .mm/ is the store's own bookkeeping.
    if name.endswith(SUFFIX) or name == ".mm":
        raise InvalidName(
            f"invalid recording name {name!r}: '.mm' and names ending in '{SUFFIX}' are reserved"
        )
    return name


def is_valid_name(name: str) -> bool:
    """Whether `name` is a recording name `validate_name` accepts (for listings)."""
    try:
        validate_name(name)
    except InvalidName:
        return False
    return True


def default_store_path(store: Path | str | None = None) -> Path:
    """The one place that decides where recordings live: `--store`, `MM_HOME`, `./recordings`."""
    if store:
        return Path(store)
    env = os.environ.get("MM_HOME")
    if env:
        return Path(env)
    return Path("recordings")


@dataclass(frozen=True)
class Entry:
    """A recording file as listed, loaded or not."""

    name: str
    path: Path
    size: int
    modified: float
    recording: Recording | None = None
    error: str | None = None


class Store:
    def __init__(self, root: Path | str | None = None) -> None:
        self.root = default_store_path(root)

    # ---- paths -------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        return self.root / (validate_name(name) + SUFFIX)

    def thumbs_dir(self, name: str) -> Path:
        return self.root / validate_name(name)

    def _meta(self, *parts: str) -> Path:
        return self.root.joinpath(".mm", *parts)

    def exists(self, name: str) -> bool:
        return self.path(name).is_file()

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = []
        for p in self.root.iterdir():
            stem = p.name[: -len(SUFFIX)]
            if p.name.endswith(SUFFIX) and is_valid_name(stem) and p.is_file():
                found.append(stem)
        return sorted(found)

    # ---- reading -----------------------------------------------------------------------

    def load(self, name: str) -> Recording:
        path = self.path(name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise RecordingNotFound(f"no recording named {name!r} in {self.root}") from None
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordingCorrupt(f"{path}: not UTF-8 text") from None
        recording = codec.loads(text, str(path))
        if recording.name != name:
            raise RecordingCorrupt(f"{path}: holds recording {recording.name!r}, not {name!r}")
        return recording

    def entries(self) -> list[Entry]:
        """Every recording in the store, the unreadable ones with their error."""
        out = []
        for name in self.names():
            path = self.path(name)
            try:
                st = path.stat()
            except OSError:
                continue
            try:
                rec, err = self.load(name), None
            except (RecordingCorrupt, StoreError, RecordingNotFound) as e:
                rec, err = None, str(e)
            out.append(
                Entry(name, path, st.st_size + self.thumbs_size(name), st.st_mtime, rec, err)
            )
        return out

    def kind(self, name: str) -> str:
        """ "sdk" for a document written by `mmcli.Engine`, else "cli" (without parsing it)."""
        path = self.path(name)
        try:
            with open(path, "rb") as f:
                head = f.read(4096).decode("utf-8", "replace")
        except FileNotFoundError:
            raise RecordingNotFound(f"no recording named {name!r} in {self.root}") from None
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        top = head.split("\n[", 1)[0]
        found = KIND_LINE.search(top)
        return found.group(1) if found else "cli"

    def thumbs_size(self, name: str) -> int:
        try:
            with os.scandir(self.thumbs_dir(name)) as entries:
                return sum(e.stat().st_size for e in entries if e.is_file())
        except (FileNotFoundError, NotADirectoryError):
            return 0

    # ---- writing -----------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, name: str, timeout: float = 10.0) -> Iterator[None]:
        """Hold the writer lock of `name`; waits up to `timeout` seconds."""
        validate_name(name)
        path = self._meta("locks", name + ".lock")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StoreError(
                f"{self.root}: cannot lock {name!r} for writing ({os_reason(e)})"
            ) from None
        try:
            if not acquire(fd, timeout):
                raise LockBusy(f"recording {name!r} is being written by another mm process")
            yield
        finally:
            os.close(fd)

    def save(
        self,
        recording: Recording,
        thumbnails: Mapping[str, bytes] | None = None,
        *,
        overwrite: bool = True,
        expect_absent: bool = False,
    ) -> Path:
        """Write `recording` atomically, with its new thumbnails (file name -> PNG bytes).

        The caller holds `lock(name)`. With `expect_absent`, a recording that appeared
        since the caller checked is not replaced (`RecordingExists`).
        """
        name = recording.name
        path = self.path(name)
        if (expect_absent or not overwrite) and path.exists():
            raise RecordingExists(
                f"recording {name!r} already exists in {self.root}; use --overwrite to replace it"
            )
        text = codec.dumps(recording)
        tdir = self.thumbs_dir(name)
        fresh_dir = not tdir.is_dir()
        fresh = [n for n in thumbnails or {} if not (tdir / n).exists()]
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if thumbnails:
                tdir.mkdir(exist_ok=True)
                for file_name, data in thumbnails.items():
                    atomic_write(tdir / file_name, data)
            atomic_write(path, text.encode("utf-8"))
        except OSError as e:
            # The previous TOML is in place: take back the new files it does not know.
            for file_name in fresh:
                with contextlib.suppress(OSError):
                    (tdir / file_name).unlink()
            if fresh_dir:
                with contextlib.suppress(OSError):
                    tdir.rmdir()
            raise StoreError(
                f"{path}: cannot save ({os_reason(e)}); the previous version is intact"
            ) from None
        self._collect_thumbnails(recording)
        from mmcli.catalog import note_saved  # the listing index; catalog imports store

        note_saved(self, recording)
        return path

    def _collect_thumbnails(self, recording: Recording) -> None:
        tdir = self.thumbs_dir(recording.name)
        if not tdir.is_dir():
            return
        keep = {s.thumbnail for s in recording.steps if s.thumbnail}
        keep.update(recording.extra.get("thumbnails_kept", []))
        for p in tdir.iterdir():
            if p.is_file() and p.name not in keep and not p.name.startswith("live-"):
                with contextlib.suppress(OSError):
                    p.unlink()

    def delete(self, name: str) -> None:
        path = self.path(name)
        with self.lock(name):
            try:
                path.unlink()
            except FileNotFoundError:
                raise RecordingNotFound(f"no recording named {name!r} in {self.root}") from None
            tdir = self.thumbs_dir(name)
            if tdir.is_dir():
                for p in tdir.iterdir():
                    with contextlib.suppress(OSError):
                        p.unlink()
                with contextlib.suppress(OSError):
                    tdir.rmdir()

    def write_thumbnail(self, name: str, file_name: str, data: bytes) -> Path:
        tdir = self.thumbs_dir(name)
        tdir.mkdir(parents=True, exist_ok=True)
        atomic_write(tdir / file_name, data)
        return tdir / file_name

    # ---- history -----------------------------------------------------------------------

    def history_path(self, name: str) -> Path:
        return self._meta("history", validate_name(name) + ".jsonl")

    def index_path(self) -> Path:
        """A cache of what each document says, for fast listings (see catalog.py)."""
        return self._meta("index.json")

    def append_history(self, name: str, entry: Mapping[str, Any]) -> None:
        path = self.history_path(name)
        line = json.dumps(entry, sort_keys=True, default=str) + "\n"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError as e:
            raise StoreError(f"{path}: cannot append history ({os_reason(e)})") from None

    def history(self, name: str) -> list[dict[str, Any]]:
        path = self.history_path(name)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            # A torn last line (crash mid-append) is skipped, not fatal.
            with contextlib.suppress(json.JSONDecodeError):
                item = json.loads(line)
                if isinstance(item, dict):
                    out.append(item)
        return out


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


_atomic_write = atomic_write
