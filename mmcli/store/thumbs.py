"""A store's thumbnails: each recording's screens, `NAME/FILE.png` beside `NAME.toml`,
read never through a link, written create-only where a save must not replace another
writer's, collected when no step keeps them."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mmcli.errors import StoreError
from mmcli.store import fields, storefs
from mmcli.store.names import validate_name
from mmcli.store.objects import Exists

if TYPE_CHECKING:
    from mmcli.store.recordings import Store


class Thumbs:
    def __init__(self, store: Store) -> None:
        self.store = store

    def folder(self, name: str) -> Path:
        """NAME's thumbnail folder in a local store (`StoreError` for a shared one)."""
        return self.store.root / validate_name(name)

    def check(self, name: str) -> bool:
        """True when NAME/ is a real folder, False when absent; `UnsafePath` (one line
        naming it) when it is a link or not a folder: nothing is done through it."""
        if self.store.folder is None:
            return bool(self.store.objects.listing(validate_name(name) + "/"))
        return storefs.check_folder(self.store.root, [validate_name(name)])

    def read(self, name: str, file_name: str) -> bytes | None:
        """A thumbnail's bytes, or None when it is missing, unreadable, not a plain file
        name, or reached through a link."""
        if not fields.is_plain_file_name(file_name):
            return None
        try:
            return self.store.objects.get(f"{validate_name(name)}/{file_name}").data
        except (OSError, StoreError):
            return None

    def reader(self, name: str, limit: int) -> Callable[[str], bytes]:
        """A reader of NAME's thumbnails by file name: at most `limit` + 1 bytes, never
        through a link (`UnsafePath`), `FileNotFoundError` when missing."""
        validate_name(name)

        def read(file_name: str) -> bytes:
            if not fields.is_plain_file_name(file_name):
                raise FileNotFoundError(file_name)
            return self.store.objects.get(f"{name}/{file_name}", limit=limit).data

        return read

    def has(self, name: str, file_name: str) -> bool:
        """Whether NAME has a thumbnail of that name (readable or not, a link counts)."""
        if self.store.folder is not None:
            return os.path.lexists(self.folder(name) / file_name)
        return self.store.objects.head(f"{validate_name(name)}/{file_name}") is not None

    def names(self, name: str) -> list[str]:
        """The file names in NAME's thumbnail folder (links left out)."""
        prefix = validate_name(name) + "/"
        return [
            i.key[len(prefix) :]
            for i in self.store.objects.listing(prefix)
            if "/" not in i.key[len(prefix) :]
        ]

    def size(self, name: str) -> int:
        """Bytes of NAME/'s thumbnails (0 when it is absent, or a link: not counted)."""
        try:
            return sum(i.size for i in self.store.objects.listing(validate_name(name) + "/"))
        except (OSError, StoreError):
            return 0

    def create(self, name: str, file_name: str, data: bytes) -> bool:
        """A new thumbnail, create-only: a name another writer took meanwhile (with other
        bytes) stops the save instead of replacing that writer's screen. True when this
        write created it."""
        key = f"{name}/{file_name}"
        try:
            self.store.objects.put(key, data, create=True)
        except Exists:
            if self.store.objects.get(key).data != data:
                raise StoreError(
                    f"thumbnail {key!r} was written by another writer meanwhile"
                ) from None
            return False
        return True

    def collect(self, name: str, keep: set[str]) -> None:
        """Remove NAME's thumbnails not in `keep` (a replay's `live-` screenshots stay)."""
        with contextlib.suppress(OSError, StoreError):  # absent, or a link: nothing there
            for file_name in self.names(name):
                if file_name not in keep and not file_name.startswith("live-"):
                    with contextlib.suppress(OSError, StoreError):
                        self.store.objects.delete(f"{name}/{file_name}")

    def write(self, name: str, file_name: str, data: bytes) -> Path | str:
        """Write (or replace) one of NAME's thumbnails: where it now is."""
        key = f"{validate_name(name)}/{file_name}"
        self.store.objects.put(key, data)
        folder = self.store.folder
        return folder / key if folder is not None else self.store.objects.url(key)

    # ---- history -----------------------------------------------------------------------

    def remove_all(self, name: str) -> None:
        """Remove NAME's thumbnails and, in a local store, their folder; the caller holds
        NAME's lock and has checked the folder is no link (`check`)."""
        with contextlib.suppress(OSError, StoreError):
            for file_name in self.names(name):
                with contextlib.suppress(OSError, StoreError):
                    self.store.objects.delete(f"{name}/{file_name}")
        if self.store.folder is not None:
            with contextlib.suppress(OSError):
                self.folder(name).rmdir()
