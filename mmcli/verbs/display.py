"""The display a run acts on: opened, and held against other `mm` runs, for the run."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mmcli.backends.base import Backend

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Display:
    """An X or VNC display, or a browser's page (None: $MM_DISPLAY, else $DISPLAY), and
    how long a run waits for another `mm` to free it before it fails. A run acts inside
    `opened()` (tests give a subclass whose `opened()` yields a fake backend)."""

    name: str | None = None
    lock_wait: float = 60.0

    @property
    def is_remote(self) -> bool:
        """Reached by mm's own connection (VNC, a browser's DevTools): the local X
        display's input never reaches it."""
        from mmcli.desktop.display import is_remote

        return is_remote(self.name)

    @contextlib.contextmanager
    def opened(self, progress: Progress | None = None) -> Iterator[Backend]:
        from mmcli.backends import open_backend
        from mmcli.desktop.display import chosen, display_lock

        name = chosen(self.name)  # the backend and the lock on the same display
        with (
            open_backend(name) as backend,
            display_lock(self.lock_wait, name, on_wait=progress),
        ):
            yield backend
