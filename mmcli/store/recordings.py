"""Where recordings live on disk.

Layout of a store directory:

    NAME.toml            the recording (see codec.py), the only file replay trusts
    NAME/                its thumbnails (PNG), referenced by the TOML
    .mm/locks/NAME.lock  serializes writers of NAME
    .mm/history/NAME.jsonl  one line per replay (appended)
    .mm/index.json       a cache of what each document says, for `mm ls` (index.py)

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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcli.errors import (
    InvalidName,
    LockBusy,
    RecordingCorrupt,
    RecordingExists,
    RecordingNotFound,
    StoreError,
    did_you_mean,
)
from mmcli.model import Recording
from mmcli.store import codec, storefs, validate
from mmcli.store.index import note_saved
from mmcli.store.locking import acquire
from mmcli.store.storefs import UnsafePath, atomic_write

NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
MAX_NAME = 100
SUFFIX = ".toml"
KIND_LINE = re.compile(r'^kind\s*=\s*"([a-z]+)"', re.MULTILINE)


def kind_of(text: str) -> str:
    """The kind a document's text says it is, from its top-level `kind` line: "sdk",
    "llm", or "cli" when it has none (see `mmcli.inventory.kinds`)."""
    top = text.split("\n[", 1)[0]
    found = KIND_LINE.search(top)
    return found.group(1) if found else "cli"


def validate_name(name: str) -> str:
    """Return `name` if it is a valid recording name, else raise `InvalidName`."""
    shown = name if len(name) <= 40 else name[:40] + "..."
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidName(
            f"invalid recording name {shown!r}: use letters, digits, '.', '_' and '-' only"
        )
    if len(name) > MAX_NAME:
        raise InvalidName(f"recording name too long ({len(name)} > {MAX_NAME} characters)")
    if name.startswith("."):
        raise InvalidName(
            f"invalid recording name {shown!r}: it must not start with '.' (the file would be "
            "hidden); start with a letter or digit"
        )
    if name.startswith("-"):
        raise InvalidName(
            f"invalid recording name {shown!r}: it must not start with '-' (a command line "
            "would read it as an option); start with a letter or digit"
        )
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
        """Whether NAME.toml is there (a link counts: loading it is refused, by name)."""
        return os.path.lexists(self.path(name))

    def not_found(self, name: str, hint: str = "") -> RecordingNotFound:
        """The error for NAME not in the store, with the closest name there if one is
        close (`did you mean 'loan'?`), else `hint`."""
        close = did_you_mean(name, self.names())
        return RecordingNotFound(f"no recording named {name!r} in {self.root}{close or hint}")

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = []
        with os.scandir(self.root) as it:
            for e in it:
                stem = e.name[: -len(SUFFIX)]
                if (
                    e.name.endswith(SUFFIX)
                    and is_valid_name(stem)
                    and (e.is_file(follow_symlinks=False) or e.is_symlink())
                ):
                    found.append(stem)
        return sorted(found)

    def check_thumbs_dir(self, name: str) -> bool:
        """True when NAME/ is a real folder, False when absent; `UnsafePath` (one line
        naming it) when it is a link or not a folder: nothing is done through it."""
        return storefs.check_folder(self.root, [validate_name(name)])

    def read_thumbnail(self, name: str, file_name: str) -> bytes | None:
        """A thumbnail's bytes, or None when it is missing, unreadable, not a plain file
        name, or reached through a link."""
        return storefs.read_plain(self.thumbs_dir(name), file_name)

    # ---- reading -----------------------------------------------------------------------

    def read_text(self, name: str) -> str:
        """NAME's document as text, read without following links and bounded in size."""
        path = self.path(name)
        try:
            data = storefs.read_bytes(self.root, [], path.name, limit=codec.MAX_DOCUMENT)
        except FileNotFoundError:
            raise self.not_found(name) from None
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        if len(data) > codec.MAX_DOCUMENT:
            raise RecordingCorrupt(
                f"{path}: larger than {codec.MAX_DOCUMENT >> 20} MiB; not an mm recording"
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordingCorrupt(f"{path}: not UTF-8 text") from None

    def load(self, name: str) -> Recording:
        path = self.path(name)
        recording = codec.loads(self.read_text(name), str(path))
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
        """ "sdk" for a document written by `mmcli.Engine`, "llm" for a model-API recording,
        else "cli" (without parsing it)."""
        path = self.path(name)
        try:
            head = storefs.read_bytes(self.root, [], path.name, limit=4096)[:4096]
            head_text = head.decode("utf-8", "replace")
        except FileNotFoundError:
            raise self.not_found(name) from None
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        return kind_of(head_text)

    def thumbs_size(self, name: str) -> int:
        """Bytes of NAME/'s thumbnails (0 when it is absent, or a link: not counted)."""
        try:
            with storefs.folder(self.root, [validate_name(name)]) as dfd:
                return sum(e.stat(follow_symlinks=False).st_size for e in storefs.files(dfd))
        except (OSError, UnsafePath):
            return 0

    # ---- writing -----------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, name: str, timeout: float = 10.0) -> Iterator[None]:
        """Hold the writer lock of `name`; waits up to `timeout` seconds."""
        validate_name(name)
        path = self._meta("locks", name + ".lock")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with storefs.folder(self.root, [".mm", "locks"], create=True) as dfd:
                fd = storefs.open_file(dfd, path.name, os.O_RDWR | os.O_CREAT, path)
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
        if (expect_absent or not overwrite) and os.path.lexists(path):
            raise RecordingExists(
                f"recording {name!r} already exists in {self.root}; use --overwrite to replace it"
            )
        try:  # what replay would refuse to load is not written in the first place
            validate.check_recording(recording)
        except ValueError as e:
            raise StoreError(f"{path}: not saved: {e}") from None
        text = codec.dumps(recording)
        tdir = self.thumbs_dir(name)
        fresh_dir = not self.check_thumbs_dir(name)  # a link there is refused, untouched
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
        note_saved(self, recording)
        return path

    def _collect_thumbnails(self, recording: Recording) -> None:
        keep = recording.thumbnail_names()
        keep.update(recording.extra.get("thumbnails_kept", []))
        with (
            contextlib.suppress(OSError, UnsafePath),  # absent, or a link: nothing there
            storefs.folder(self.root, [recording.name]) as dfd,
        ):
            for e in storefs.files(dfd):
                if e.name not in keep and not e.name.startswith("live-"):
                    with contextlib.suppress(OSError):
                        os.unlink(e.name, dir_fd=dfd)

    def delete(self, name: str) -> None:
        with self.lock(name):
            self.remove_files(name)

    def remove_files(self, name: str) -> None:
        """Remove NAME.toml and its thumbnails; the caller holds `lock(name)`."""
        path = self.path(name)
        has_thumbs = self.check_thumbs_dir(name)  # a link is refused before anything goes
        try:
            path.unlink()  # a link here is itself removed, never what it points to
        except FileNotFoundError:
            raise self.not_found(name) from None
        if has_thumbs:
            with (
                contextlib.suppress(OSError, UnsafePath),
                storefs.folder(self.root, [name]) as dfd,
            ):
                with os.scandir(dfd) as it:
                    entries = [e.name for e in it if not e.is_dir(follow_symlinks=False)]
                for entry in entries:  # files, and links themselves (not their targets)
                    with contextlib.suppress(OSError):
                        os.unlink(entry, dir_fd=dfd)
            with contextlib.suppress(OSError):
                self.thumbs_dir(name).rmdir()

    def write_thumbnail(self, name: str, file_name: str, data: bytes) -> Path:
        tdir = self.thumbs_dir(name)
        self.root.mkdir(parents=True, exist_ok=True)
        with storefs.folder(self.root, [name], create=True):
            pass
        atomic_write(tdir / file_name, data)
        return tdir / file_name

    # ---- history -----------------------------------------------------------------------

    def history_path(self, name: str) -> Path:
        return self._meta("history", validate_name(name) + ".jsonl")

    def index_path(self) -> Path:
        """A cache of what each document says, for fast listings (see index.py)."""
        return self._meta("index.json")

    def append_history(self, name: str, entry: Mapping[str, Any]) -> None:
        path = self.history_path(name)
        line = json.dumps(entry, sort_keys=True, default=str) + "\n"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            storefs.append(self.root, [".mm", "history"], path.name, line.encode("utf-8"))
        except OSError as e:
            raise StoreError(f"{path}: cannot append history ({os_reason(e)})") from None

    def history(self, name: str) -> list[dict[str, Any]]:
        path = self.history_path(name)
        try:
            data = storefs.read_bytes(self.root, [".mm", "history"], path.name)
        except FileNotFoundError:
            return []
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        lines = data.decode("utf-8", "replace").splitlines()
        out = []
        for line in lines:
            # A torn last line (crash mid-append) is skipped, not fatal.
            with contextlib.suppress(json.JSONDecodeError):
                item = json.loads(line)
                if isinstance(item, dict):
                    out.append(item)
        return out


def os_reason(e: OSError) -> str:
    """A short reason for a failed write: what a user can act on (disk full, read-only)."""
    if e.errno == errno.ENOSPC:
        return "disk full"
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "store is read-only"
    return e.strerror or str(e)
