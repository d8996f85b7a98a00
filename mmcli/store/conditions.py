"""Whether a store honours conditional writes: checked before a store is trusted.

Concurrent writers (replays healing on many machines) never lose each other's work only
because a create-only write fails when the object exists and a replace fails when the
version changed. Some S3-compatible servers accept `If-None-Match` and `If-Match` and
ignore them: every racing writer "wins" and work is silently lost. `check` races
`RACERS` create-only writes of one new object and replaces one with a stale version tag;
a store passes only when exactly one creator wins and the stale replace is refused.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

from mmcli.errors import StoreError
from mmcli.store.objects import Exists, Objects, Stale

RACERS = 16
PREFIX = ".mm/checks/"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    winners: int
    stale_refused: bool
    detail: str


def check(objects: Objects, racers: int = RACERS) -> Verdict:
    """Race `racers` create-only writes of one fresh object, then try a replace with a
    stale version tag; clean up what the check wrote."""
    key = f"{PREFIX}{secrets.token_hex(8)}"
    start = threading.Barrier(racers)
    wins: list[int] = []
    errors: list[str] = []

    def race(i: int) -> None:
        start.wait()
        try:
            objects.put(key, f"writer {i}".encode(), create=True)
            wins.append(i)
        except Exists:
            pass
        except StoreError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=race, args=(i,)) for i in range(racers)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise StoreError(errors[0])
        first = objects.get(key)
        objects.put(key, b"replaced", match=first.tag)
        try:
            objects.put(key, b"stale", match=first.tag)
            stale_refused = False
        except Stale:
            stale_refused = True
    finally:
        objects.delete(key)
    ok = len(wins) == 1 and stale_refused
    if ok:
        detail = f"conditional writes honoured ({racers} racing creators, 1 winner)"
    else:
        parts = []
        if len(wins) != 1:
            parts.append(f"{len(wins)} of {racers} racing create-only writes succeeded")
        if not stale_refused:
            parts.append("a replace with a stale version was accepted")
        detail = (
            "conditional writes are ignored: "
            + "; ".join(parts)
            + ". Concurrent heals would overwrite each other; use a server that honours "
            "If-None-Match and If-Match (AWS S3, SeaweedFS >= 4.20, ...)"
        )
    return Verdict(ok, len(wins), stale_refused, detail)
