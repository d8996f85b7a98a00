"""Where an engine's document lives: `<store>/<name>.toml` in the CLI's store.

Reads are cached until the document changes (its version tag; another process may add
trajectories at any time). Adding a trajectory is a read-modify-write under the store's
lock for `name`, written whole and conditional on the version read, so several
processes never lose each other's trajectories and a crash never leaves a half-written
document.
"""

from __future__ import annotations

from mmcli.errors import MMError, RecordingCorrupt, RecordingNotFound, StoreError, UsageError
from mmcli.sdk import document
from mmcli.sdk.document import SDKDocument, Trajectory
from mmcli.store.recordings import Store, validate_name


class DocumentStore:
    def __init__(self, store: Store, name: str) -> None:
        self.store = store
        self.name = validate_name(name)
        self._cached: tuple[str, SDKDocument] | None = None

    @property
    def where(self) -> str:
        """Where the document is, for messages: its file, or its URL."""
        return self.store.locate(self.name)

    def load(self) -> SDKDocument | None:
        """The document as it is in the store now (None if there is none yet)."""
        key = self.store.key(self.name)
        try:
            info = self.store.objects.head(key)
        except OSError as e:
            raise StoreError(
                f"{self.store.locate(self.name)}: cannot read ({e.strerror})"
            ) from None
        if info is None:
            self._cached = None
            return None
        if self._cached is not None and self._cached[0] == info.tag:
            return self._cached[1]
        doc = self._read()
        self._cached = (info.tag, doc)
        return doc

    def _read(self) -> SDKDocument:
        where = self.store.locate(self.name)
        if not self.store.exists(self.name):
            return SDKDocument(self.name, document.now())
        try:
            doc = document.read_in(self.store, self.name)
        except RecordingNotFound:
            return SDKDocument(self.name, document.now())
        except RecordingCorrupt:
            if self._is_cli_recording():
                raise UsageError(
                    f"{where} is a CLI recording, not an SDK document; "
                    "give the engine another name: Engine(name=...)"
                ) from None
            raise
        if doc.name != self.name:
            raise RecordingCorrupt(f"{where}: holds document {doc.name!r}, not {self.name!r}")
        return doc

    def add(self, trajectory: Trajectory) -> Trajectory:
        """Append `trajectory` (its id assigned here) to the document in the store."""
        with self.store.lock(self.name):
            doc = self._read()
            trajectory.id = doc.next_id()
            doc.trajectories.append(trajectory)
            self.store.write_document(self.name, document.dumps(doc))
        return trajectory

    def _is_cli_recording(self) -> bool:
        """Whether the document is a recording `mm record` made (read in full: only asked
        when it is not an SDK document)."""
        try:
            self.store.load(self.name)
        except MMError:
            return False
        return True
