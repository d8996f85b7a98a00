"""The run history of a store's recordings: one line per run in a local store's
`.mm/history/NAME.jsonl`, one object per entry on a shared one (`journal`)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmcli.errors import StoreError
from mmcli.store import journal, storefs
from mmcli.store.names import validate_name
from mmcli.store.storefs import UnsafePath, os_reason

if TYPE_CHECKING:
    from mmcli.store.recordings import Store

MAX_HISTORY = journal.MAX_HISTORY
"""The most of a recording's history read (its latest lines): a history planted or grown
far past what mm writes is not read whole."""


class History:
    def __init__(self, store: Store) -> None:
        self.store = store

    def path(self, name: str) -> Path:
        """NAME's history file in a local store (`StoreError` for a shared one)."""
        return self.store.root.joinpath(".mm", "history", validate_name(name) + ".jsonl")

    def append(self, name: str, entry: Mapping[str, Any]) -> None:
        """One line of NAME's history: appended to a local store's `.jsonl`; on a shared
        store, a new object of its own (no two workers ever write the same object)."""
        entry = {"worker": worker_id(), **entry}
        line = json.dumps(entry, sort_keys=True, default=str) + "\n"
        if self.store.folder is None:
            key = entry.get("id")
            journal.append(
                self.store.objects,
                validate_name(name),
                line,
                key=key if isinstance(key, str) else None,
            )
            return
        path = self.path(name)
        try:
            self.store.root.mkdir(parents=True, exist_ok=True)
            storefs.append(self.store.root, [".mm", "history"], path.name, line.encode("utf-8"))
        except OSError as e:
            raise StoreError(f"{path}: cannot append history ({os_reason(e)})") from None

    def move(self, old: str, new: str) -> None:
        """OLD's history becomes NEW's (a rename); the caller holds both locks."""
        if self.store.folder is None:
            journal.move(self.store.objects, validate_name(old), validate_name(new))
            return
        with (
            contextlib.suppress(OSError, UnsafePath),
            storefs.folder(self.store.root, [".mm", "history"]) as dfd,
        ):
            os.rename(old + ".jsonl", new + ".jsonl", src_dir_fd=dfd, dst_dir_fd=dfd)

    def read(self, name: str) -> list[dict[str, Any]]:
        """NAME's entries, oldest first (the latest `MAX_HISTORY` bytes of them)."""
        if self.store.folder is None:
            return journal.parse(journal.lines(self.store.objects, validate_name(name)))
        path = self.path(name)
        try:
            data = storefs.read_tail(self.store.root, [".mm", "history"], path.name, MAX_HISTORY)
        except FileNotFoundError:
            return []
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
        return journal.parse(data.decode("utf-8", "replace").splitlines())


def worker_id() -> str:
    """Which machine (or worker) a history entry comes from: `$MM_WORKER`, else the
    host's name (a fleet's history says which worker ran what)."""
    return os.environ.get("MM_WORKER") or socket.gethostname()


MAX_HISTORY = journal.MAX_HISTORY
"""The most of a recording's history read (its latest lines): a history planted or grown
far past what mm writes is not read whole."""
