"""Writer locks on a shared store (a bucket): a lease, a create-only object naming its
holder and when it runs out, taken over once it has run out (a local store uses a file
lock instead: `locking`)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import time
from collections.abc import Iterator

from mmcli.errors import LockBusy, StoreError
from mmcli.store import storefs
from mmcli.store.objects import Exists, Objects, Stale

LEASE = 60.0
"""Seconds a writer lock on a shared (S3) store is held at most before another writer may
take it over: every write under the lock is also conditional on the version read, so a
lease that ran out can cost a retry, never a lost update."""
LEASE_BYTES = 4096
"""The most of a lease object read: a holder's name and an expiry are a few dozen bytes."""


@contextlib.contextmanager
def lease(objects: Objects, key: str, name: str, timeout: float, ttl: float) -> Iterator[None]:
    """Hold a writer lock on a shared store: a create-only object naming its holder and
    when it runs out. One left by a crashed writer is taken over once it has run out by
    the reader's clock, and at once when its expiry is further than `ttl` from now or
    unreadable (`lease_expired`: a planted lease never locks writers out); replaced
    conditionally: of two writers taking over, one wins."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{storefs.new_token()}"
    deadline = time.monotonic() + timeout
    while True:
        body = json.dumps({"holder": holder, "until": time.time() + ttl}).encode()
        try:
            objects.put(key, body, create=True)
            break
        except Exists:
            pass
        with contextlib.suppress(FileNotFoundError, Stale):
            held = objects.get(key, limit=LEASE_BYTES)
            if lease_expired(held.data, ttl):
                objects.put(key, body, match=held.tag)
                break
        if time.monotonic() >= deadline:
            raise LockBusy(f"recording {name!r} is being written by another mm process")
        time.sleep(0.1)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError, ValueError, KeyError, StoreError):
            if json.loads(objects.get(key).data)["holder"] == holder:
                objects.delete(key)


def lease_expired(data: bytes, ttl: float) -> bool:
    """Whether a lease another writer left may be taken over, by this reader's clock: its
    expiry has passed, lies further ahead than a lease lasts (`ttl`: forged, or written
    by a clock far off), or cannot be read (a lease no writer of mm's would leave)."""
    try:
        until = float(json.loads(data)["until"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return True
    now = time.time()
    return not math.isfinite(until) or until < now or until > now + ttl
