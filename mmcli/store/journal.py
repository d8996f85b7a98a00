"""The history of a recording on a shared store: one object per entry, compacted safely.

Workers never write the same object: each replay's entry is a new object,
`.mm/history/NAME/STAMP-TOKEN.json`, written create-only. Read, the history is every entry
in key order (keys start with the time they were written).

So that a recording replayed thousands of times is not thousands of reads, entries are
compacted now and then (`COMPACT_EVERY`: about one append in that many): a compaction
writes one new object, `.mm/history/NAME/_compact-STAMP-TOKEN.jsonl`, holding every entry
it read with its key, then deletes exactly the objects whose whole content it holds.
Reading merges entries by key, so an entry seen twice (in two compactions racing, or in
a compaction and its not yet deleted original) counts once, and nothing is deleted that
is not already kept elsewhere: no entry is ever lost, whatever runs at the same time.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import time
from typing import Any

from mmcli.errors import StoreError
from mmcli.store import storefs
from mmcli.store.objects import Exists, Objects

COMPACT_EVERY = 64
COMPACTED = "_compact-"


def folder(name: str) -> str:
    return f".mm/history/{name}/"


MAX_HISTORY = 4 << 20
"""The most of a history read: its latest objects up to this many bytes, some 10,000
runs (an entry is a few hundred bytes). What `mm ls` counts and `mm show` lists is then
the latest runs; the file keeps them all."""


def entry_id() -> str:
    """A history entry's own name: when it was made, and a random token."""
    return _unique()


ENTRY_ID = re.compile(r"[0-9]{8}T[0-9]{6}\.[0-9]{9}-[0-9a-f]{6,64}")


def _unique() -> str:
    now = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now / 1e9))
    return f"{stamp}.{now % 10**9:09d}-{storefs.new_token()}"


def append(
    objects: Objects,
    name: str,
    line: str,
    compact_every: int = COMPACT_EVERY,
    key: str | None = None,
) -> None:
    """Write one entry (a JSON line) as a new object, named `key` (its `entry_id`) when
    given: a line sent again after a write whose answer was lost (a server that stopped
    answering mid-request) is there once. Now and then compact."""
    named = key if key is not None and ENTRY_ID.fullmatch(key) else None
    try:
        objects.put(f"{folder(name)}{named or _unique()}.json", line.encode("utf-8"), create=True)
    except Exists:
        if named is None:
            raise
        return  # written before: its answer was lost
    if compact_every and random.randrange(compact_every) == 0:
        with contextlib.suppress(StoreError, OSError):  # an optimization: never fails a run
            compact(objects, name)


def _read(objects: Objects, name: str) -> tuple[dict[str, str], list[str]]:
    """Every entry by key, and the objects whose whole content that holds."""
    entries: dict[str, str] = {}
    whole: list[str] = []
    read = 0
    for info in sorted(objects.listing(folder(name)), key=lambda i: i.key, reverse=True):
        if info.size > MAX_HISTORY or read + info.size > MAX_HISTORY:
            continue  # far bigger than mm writes (planted), or older than the latest read
        try:
            data = objects.get(info.key, limit=MAX_HISTORY).data.decode("utf-8", "replace")
        except FileNotFoundError:
            continue  # compacted and deleted meanwhile: its entries are in a compaction
        read += len(data)
        base = info.key.rsplit("/", 1)[1]
        if base.startswith(COMPACTED):
            for raw in data.splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    item = json.loads(raw)
                    entries.setdefault(str(item["key"]), str(item["line"]))
        else:
            entries.setdefault(info.key, data)
        whole.append(info.key)
    return entries, whole


def lines(objects: Objects, name: str) -> list[str]:
    """The history's JSON lines, oldest first."""
    entries, _ = _read(objects, name)
    return [line for _, text in sorted(entries.items()) for line in text.splitlines()]


def compact(objects: Objects, name: str) -> int:
    """Fold every entry into one new object, then delete what it holds. Returns the
    number of objects folded."""
    entries, whole = _read(objects, name)
    if len(whole) < 2:
        return 0
    body = "".join(
        json.dumps({"key": key, "line": text}, sort_keys=True) + "\n"
        for key, text in sorted(entries.items())
    )
    objects.put(f"{folder(name)}{COMPACTED}{_unique()}.jsonl", body.encode(), create=True)
    for key in whole:
        objects.delete(key)
    return len(whole)


def move(objects: Objects, old: str, new: str) -> None:
    """OLD's history becomes NEW's: copied whole into one object, then removed."""
    entries, whole = _read(objects, old)
    if entries:
        body = "".join(
            json.dumps({"key": key.replace(folder(old), folder(new), 1), "line": text}) + "\n"
            for key, text in sorted(entries.items())
        )
        objects.put(f"{folder(new)}{COMPACTED}{_unique()}.jsonl", body.encode(), create=True)
    for key in whole:
        objects.delete(key)


def parse(lines: list[str]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        # A torn last line (crash mid-append) is skipped, not fatal.
        with contextlib.suppress(json.JSONDecodeError):
            item = json.loads(line)
            if isinstance(item, dict):
                out.append(item)
    return out
