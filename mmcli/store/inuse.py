"""A recording marked in use while a run (a replay, a recording, an SDK call) has it open,
so that `mm rm`, `mm mv`, `mm import --overwrite` and `mm prune` leave it.

A run holds a shared flock on `.mm/in-use/NAME.lock` in the store for as long as it runs;
the commands that remove or replace a recording do so only while holding the same lock
exclusively. The kernel drops an flock when its process dies (the file is opened
close-on-exec: an agent left running does not keep it), so a killed run leaves no stale
mark behind. The runs themselves go through `lifecycle`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator

from mmcli.store.locking import runtime_dir
from mmcli.store.recordings import Store, validate_name

WAIT = 10.0
"""A run starting while prune deletes waits this long for it (prune is quick)."""


def _open(store: Store, name: str) -> int:
    if store.folder is not None:
        folder = store.root / ".mm" / "in-use"
    else:  # a shared store: marked for the runs of this machine (see docs/fleet.md)
        where = hashlib.sha256(store.where.encode()).hexdigest()[:16]
        folder = runtime_dir() / "in-use" / where
    path = folder / (validate_name(name) + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


class Mark:
    """One run's mark on a recording: shared with the other runs, or held alone."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        """None: the store cannot be marked (read-only); nothing is held."""

    def share(self, wait: float) -> None:
        """Hold the mark with the other runs; waits up to `wait` seconds for a command
        holding it alone, then goes on unmarked (prune is stuck: run anyway)."""
        if self.fd is None:
            return
        deadline = time.monotonic() + wait
        while not self._take(fcntl.LOCK_SH):
            if time.monotonic() >= deadline:
                return
            time.sleep(0.05)

    def alone(self) -> bool:
        """Hold the mark alone, if no other run holds it now; False if one does (this
        run's own share is then given up: a refused run ends)."""
        return self.fd is None or self._take(fcntl.LOCK_EX)

    def _take(self, how: int) -> bool:
        assert self.fd is not None
        try:
            fcntl.flock(self.fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


@contextlib.contextmanager
def marked(store: Store, name: str) -> Iterator[Mark]:
    """`name`'s mark for the block, not held yet (`Mark.share`, `Mark.alone`); released
    when the block ends. A store that cannot be written (read-only) is not marked: a run
    must not fail for want of bookkeeping."""
    try:
        fd: int | None = _open(store, name)
    except OSError:
        fd = None
    try:
        yield Mark(fd)
    finally:
        if fd is not None:
            os.close(fd)


@contextlib.contextmanager
def in_use(store: Store, name: str, wait: float = WAIT) -> Iterator[None]:
    """Mark `name` in use for the block, with the other runs."""
    with marked(store, name) as mark:
        mark.share(wait)
        yield


@contextlib.contextmanager
def unused(store: Store, name: str) -> Iterator[bool]:
    """For the block: True, with runs of `name` kept from starting, if none runs now;
    False if one does."""
    with marked(store, name) as mark:
        yield mark.alone()
