"""Where an engine's document lives: `<store>/<name>.toml` in the CLI's store.

Reads are cached until the file changes (another process may add trajectories at any
time). Adding a trajectory is a read-modify-write under the store's lock for `name`,
written atomically, so several processes never lose each other's trajectories and a
crash never leaves a half-written document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmcli.errors import MMError, RecordingCorrupt, StoreError, UsageError
from mmcli.sdk import document
from mmcli.sdk.document import SDKDocument, Trajectory
from mmcli.store.recordings import Store, atomic_write, os_reason, validate_name


class DocumentStore:
    def __init__(self, store: Store, name: str) -> None:
        self.store = store
        self.name = validate_name(name)
        self._cached: tuple[tuple[int, int, int], SDKDocument] | None = None

    @property
    def path(self) -> Path:
        return self.store.path(self.name)

    def load(self) -> SDKDocument | None:
        """The document as it is on disk now (None if there is none yet)."""
        path = self.path
        try:
            st = path.stat()
        except FileNotFoundError:
            self._cached = None
            return None
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if self._cached is not None and self._cached[0] == stamp:
            return self._cached[1]
        doc = self._read(path)
        self._cached = (stamp, doc)
        return doc

    def _read(self, path: Path) -> SDKDocument:
        try:
            doc = document.read(path)
        except FileNotFoundError:
            return SDKDocument(self.name, document.now())
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        except RecordingCorrupt:
            if self._is_cli_recording():
                raise UsageError(
                    f"{path} is a CLI recording, not an SDK document; "
                    "give the engine another name: Engine(name=...)"
                ) from None
            raise
        if doc.name != self.name:
            raise RecordingCorrupt(f"{path}: holds document {doc.name!r}, not {self.name!r}")
        return doc

    def add(self, trajectory: Trajectory) -> Trajectory:
        """Append `trajectory` (its id assigned here) to the document on disk."""
        path = self.path
        with self.store.lock(self.name):
            doc = self._read(path)
            trajectory.id = doc.next_id()
            doc.trajectories.append(trajectory)
            text = document.dumps(doc)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, text.encode("utf-8"))
            except OSError as e:
                raise StoreError(
                    f"{path}: cannot save ({os_reason(e)}); the previous version is intact"
                ) from None
        return trajectory

    def _is_cli_recording(self) -> bool:
        """Whether the document is a recording `mm record` made (read in full: only asked
        when it is not an SDK document)."""
        try:
            self.store.load(self.name)
        except MMError:
            return False
        return True

    def journal(self, entry: dict[str, Any]) -> None:
        """One line in the store's history for this name (what `mm ls` counts)."""
        self.store.append_history(self.name, entry)
