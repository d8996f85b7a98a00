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
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from mmcli.errors import (
    LockBusy,
    RecordingCorrupt,
    RecordingExists,
    RecordingNotFound,
    StoreError,
    did_you_mean,
)
from mmcli.model import Recording
from mmcli.store import codec, storefs, validate
from mmcli.store.history import History
from mmcli.store.index import note_saved
from mmcli.store.leases import LEASE, lease
from mmcli.store.locking import acquire
from mmcli.store.names import SUFFIX, is_valid_name, validate_name
from mmcli.store.objects import Exists, Folder, Objects, Stale
from mmcli.store.s3 import is_s3
from mmcli.store.storefs import UnsafePath, atomic_write, os_reason  # noqa: F401 - re-exported
from mmcli.store.thumbs import Thumbs

KIND_LINE = re.compile(r'^kind\s*=\s*"([a-z]+)"', re.MULTILINE)


def kind_of(text: str) -> str:
    """The kind a document's text says it is, from its top-level `kind` line: "sdk",
    "llm", or "cli" when it has none (see `mmcli.inventory.kinds`)."""
    top = text.split("\n[", 1)[0]
    found = KIND_LINE.search(top)
    return found.group(1) if found else "cli"


def default_store_path(store: Path | str | None = None) -> Path | str:
    """The one place that decides where recordings live: `--store`, `MM_HOME`,
    `./recordings`; an `s3://BUCKET/PREFIX` URL stays a string."""
    chosen = store if store else os.environ.get("MM_HOME") or "recordings"
    if is_s3(str(chosen)):
        return str(chosen)
    return Path(chosen)


def open_objects(location: Path | str) -> Objects:
    """The backend holding a store's objects: a bucket for `s3://...`, else a folder."""
    if isinstance(location, str) and is_s3(location):
        from mmcli.store.s3 import S3Objects

        return S3Objects(location)
    return Folder(Path(location))


@dataclass(frozen=True)
class Entry:
    """A recording file as listed, loaded or not."""

    name: str
    path: str
    size: int
    modified: float
    recording: Recording | None = None
    error: str | None = None


class Store:
    """The recordings of one store, wherever its objects live (`objects`)."""

    def __init__(self, root: Path | str | None = None) -> None:
        location = default_store_path(root)
        self.objects = open_objects(location)
        self.where = self.objects.where
        self._root = location if isinstance(location, Path) else None
        self.shared = self._root is None
        """Others may write it (a bucket): agent commands recorded in it run only where
        allowed (`desktop.allowed`)."""
        self._tags: dict[str, str] = {}  # version of each document as last read or written
        self.runs = History(self)
        """Each recording's run history (`history.History`)."""
        self.thumbs = Thumbs(self)
        """Each recording's thumbnails (`thumbs.Thumbs`)."""

    def shown(self) -> str:
        """Where the store is, in full: its resolved folder, or its URL."""
        return str(self._root.resolve()) if self._root is not None else self.where

    @property
    def folder(self) -> Path | None:
        """The local folder (None: a bucket), for what needs a path; others see keys."""
        return self._root

    @property
    def root(self) -> Path:
        """The store's folder; `StoreError` for a store that is not a local folder."""
        if self._root is None:
            raise StoreError(f"{self.where}: this works on a local store only (--store DIR)")
        return self._root

    # ---- paths -------------------------------------------------------------------------

    def key(self, name: str) -> str:
        return validate_name(name) + SUFFIX

    def path(self, name: str) -> Path:
        return self.root / self.key(name)

    def locate(self, name: str) -> str:
        """Where NAME's document is, for messages (a path or a URL)."""
        return self.objects.url(self.key(name))

    def _meta(self, *parts: str) -> Path:
        return self.root.joinpath(".mm", *parts)

    def exists(self, name: str) -> bool:
        """Whether NAME.toml is there (a link counts: loading it is refused, by name)."""
        if self._root is not None:
            return os.path.lexists(self.path(name))
        return self.objects.head(self.key(name)) is not None

    def not_found(self, name: str, hint: str = "") -> RecordingNotFound:
        """The error for NAME not in the store, with the closest name there if one is
        close (`did you mean 'loan'?`), else `hint`."""
        close = did_you_mean(name, self.names())
        return RecordingNotFound(f"no recording named {name!r} in {self.where}{close or hint}")

    def names(self) -> list[str]:
        if self._root is None:
            tops = [i.key for i in self.objects.listing() if "/" not in i.key]
            return sorted(
                k[: -len(SUFFIX)]
                for k in tops
                if k.endswith(SUFFIX) and is_valid_name(k[: -len(SUFFIX)])
            )
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

    def read_thumbnail(self, name: str, file_name: str) -> bytes | None:
        """`Thumbs.read` (the `thumbnails.Thumbnails` protocol, as a prefetch has it)."""
        return self.thumbs.read(name, file_name)

    def has_thumbnail(self, name: str, file_name: str) -> bool:
        """`Thumbs.has` (the `thumbnails.Thumbnails` protocol)."""
        return self.thumbs.has(name, file_name)

    # ---- reading -----------------------------------------------------------------------

    def read_text(self, name: str) -> str:
        """NAME's document as text, read without following links and bounded in size."""
        where = self.locate(name)
        too_big = RecordingCorrupt(
            f"{where}: larger than {codec.MAX_DOCUMENT >> 20} MiB; not an mm recording"
        )
        try:
            listed = self.objects.head(self.key(name))
            if listed is not None and listed.size > codec.MAX_DOCUMENT:
                raise too_big  # refused by its size, before a byte of it is read
            blob = self.objects.get(self.key(name), limit=codec.MAX_DOCUMENT)
        except FileNotFoundError:
            raise self.not_found(name) from None
        except OSError as e:
            raise StoreError(f"{where}: cannot read ({e.strerror})") from None
        if len(blob.data) > codec.MAX_DOCUMENT:
            raise too_big
        self._tags[name] = blob.tag
        try:
            return blob.data.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordingCorrupt(f"{where}: not UTF-8 text") from None

    def load(self, name: str) -> Recording:
        where = self.locate(name)
        recording = codec.loads(self.read_text(name), where)
        if recording.name != name:
            raise RecordingCorrupt(f"{where}: holds recording {recording.name!r}, not {name!r}")
        return recording

    def entries(self) -> list[Entry]:
        """Every recording in the store, the unreadable ones with their error."""
        out = []
        for name in self.names():
            info = self.objects.head(self.key(name)) if self._root is None else None
            if self._root is not None:
                try:
                    st = self.path(name).stat()
                except OSError:
                    continue
                size, modified = st.st_size, st.st_mtime
            elif info is None:
                continue
            else:
                size, modified = info.size, info.modified
            try:
                rec, err = self.load(name), None
            except (RecordingCorrupt, StoreError, RecordingNotFound) as e:
                rec, err = None, str(e)
            out.append(
                Entry(name, self.locate(name), size + self.thumbs.size(name), modified, rec, err)
            )
        return out

    def kind(self, name: str) -> str:
        """ "sdk" for a document written by `mmcli.Engine`, "llm" for a model-API recording,
        else "cli" (without parsing it)."""
        try:
            head = self.objects.get(self.key(name), limit=4096).data[:4096]
        except FileNotFoundError:
            raise self.not_found(name) from None
        except OSError as e:
            raise StoreError(f"{self.locate(name)}: cannot read ({e.strerror})") from None
        return kind_of(head.decode("utf-8", "replace"))

    # ---- writing -----------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, name: str, timeout: float = 10.0) -> Iterator[None]:
        """Hold the writer lock of `name`; waits up to `timeout` seconds."""
        validate_name(name)
        if self._root is None:
            with lease(self.objects, f".mm/locks/{name}", name, timeout, LEASE):
                yield
            return
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
    ) -> Path | str:
        """Write `recording` atomically, with its new thumbnails (file name -> PNG bytes).

        The caller holds `lock(name)`. With `expect_absent`, a recording that appeared
        since the caller checked is not replaced (`RecordingExists`). A document this
        store read is replaced only if it is still the version read: a writer that
        changed it meanwhile (on another machine) is never overwritten (`StoreError`).
        """
        name = recording.name
        where = self.locate(name)
        if (expect_absent or not overwrite) and self.exists(name):
            raise RecordingExists(
                f"recording {name!r} already exists in {self.where}; use --overwrite to replace it"
            )
        try:  # what replay would refuse to load is not written in the first place
            validate.check_recording(recording)
        except ValueError as e:
            raise StoreError(f"{where}: not saved: {e}") from None
        self.write_document(
            name, codec.dumps(recording), thumbnails, create=expect_absent or not overwrite
        )
        self.thumbs.collect(name, self._kept(recording))
        if self._root is not None:
            note_saved(self, recording)
            return self.path(name)
        return where

    def write_document(
        self,
        name: str,
        text: str,
        thumbnails: Mapping[str, bytes] | None = None,
        *,
        create: bool = False,
    ) -> None:
        """Write NAME's document (any kind) with its new thumbnails: the thumbnails
        first, then the document whole, so a crash leaves the previous version whole and
        a reader never sees a document whose thumbnails are missing. `create`: only if
        there is none yet (`RecordingExists`). The caller holds `lock(name)`."""
        where = self.locate(name)
        self.thumbs.check(name)  # a link there is refused, untouched
        before = set(self.thumbs.names(name)) if thumbnails else set()
        created: list[str] = []
        try:
            for file_name, data in (thumbnails or {}).items():
                if file_name in before:  # the document is being replaced: its own files
                    self.objects.put(f"{name}/{file_name}", data)
                elif self.thumbs.create(name, file_name, data):
                    created.append(file_name)
            self._put_document(name, self.key(name), text.encode("utf-8"), create)
        except (OSError, StoreError) as e:
            # The previous document is in place: take back the files this write created.
            for file_name in created:
                with contextlib.suppress(OSError, StoreError):
                    self.objects.delete(f"{name}/{file_name}")
            if self._root is not None and not before:
                with contextlib.suppress(OSError):
                    self.thumbs.folder(name).rmdir()
            if isinstance(e, RecordingExists):
                raise
            reason = os_reason(e) if isinstance(e, OSError) else str(e)
            raise StoreError(
                f"{where}: cannot save ({reason}); the previous version is intact"
            ) from None

    def _put_document(self, name: str, key: str, data: bytes, create: bool) -> None:
        """Write NAME's document: create-only when it must be new; else conditional on
        the version this store read of it, when it read one."""
        known = self._tags.get(name)
        try:
            if create:
                tag = self.objects.put(key, data, create=True)
            elif known is not None and self.objects.head(key) is not None:
                tag = self.objects.put(key, data, match=known)
            else:
                tag = self.objects.put(key, data)
        except Exists:
            raise RecordingExists(
                f"recording {name!r} already exists in {self.where}; use --overwrite to replace it"
            ) from None
        except Stale:
            raise StoreError(
                f"recording {name!r} was changed by another writer while this one worked"
            ) from None
        self._tags[name] = tag

    @staticmethod
    def _kept(recording: Recording) -> set[str]:
        keep = recording.thumbnail_names()
        keep.update(recording.extra.get("thumbnails_kept", []))
        return keep

    def delete(self, name: str) -> None:
        with self.lock(name):
            self.remove_files(name)

    def remove_files(self, name: str) -> None:
        """Remove NAME.toml and its thumbnails; the caller holds `lock(name)`."""
        has_thumbs = self.thumbs.check(name)  # a link is refused before anything goes
        if not self.exists(name):
            raise self.not_found(name)
        self.objects.delete(self.key(name))  # a link here is itself removed, never its target
        self._tags.pop(name, None)
        if has_thumbs:
            self.thumbs.remove_all(name)

    def index_path(self) -> Path:
        """A cache of what each document says, for fast listings (see index.py)."""
        return self._meta("index.json")
