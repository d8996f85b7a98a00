"""Marking a recording in use while a replay walks (or heals) it, so `mm prune` leaves it.

A replay holds a shared flock on `.mm/in-use/NAME` in the store for as long as it runs;
prune deletes a recording only while holding the same lock exclusively. The kernel drops
an flock when its process dies, so a killed replay leaves no stale mark behind.
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
"""A replay starting while prune deletes waits this long for it (prune is quick)."""


def _open(store: Store, name: str) -> int:
    if store.local:
        folder = store.root / ".mm" / "in-use"
    else:  # a shared store: marked for the replays of this machine (see docs/fleet.md)
        where = hashlib.sha256(store.where.encode()).hexdigest()[:16]
        folder = runtime_dir() / "in-use" / where
    path = folder / (validate_name(name) + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)


@contextlib.contextmanager
def in_use(store: Store, name: str, wait: float = WAIT) -> Iterator[None]:
    """Mark `name` in use for the block. A store that cannot be written (read-only) is
    not marked: a replay must not fail for want of bookkeeping."""
    try:
        fd = _open(store, name)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break  # prune is stuck: replay anyway, as without a mark
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def unused(store: Store, name: str) -> Iterator[bool]:
    """For the block: True, with replays of `name` kept from starting, if none runs now;
    False if one does."""
    try:
        fd = _open(store, name)
    except OSError:
        yield True  # nothing can have marked it either
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
