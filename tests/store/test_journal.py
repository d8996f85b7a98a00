"""A shared store's history: an object per entry, compacted while workers keep appending
and compacting at the same time; no entry lost, none counted twice. On a folder and on a
real S3 server."""

from __future__ import annotations

import json
import threading

from mmcli.store import journal
from mmcli.store.objects import Objects
from mmcli.store.recordings import Store


def entry(i: int) -> str:
    return json.dumps({"n": i}) + "\n"


def test_compaction_keeps_every_entry_in_order(objects: Objects) -> None:
    for i in range(30):
        journal.append(objects, "loan", entry(i), compact_every=0)
    assert len(objects.listing(journal.folder("loan"))) == 30
    assert journal.compact(objects, "loan") == 30
    assert len(objects.listing(journal.folder("loan"))) == 1
    for i in range(30, 35):
        journal.append(objects, "loan", entry(i), compact_every=0)
    assert [e["n"] for e in journal.parse(journal.lines(objects, "loan"))] == list(range(35))


def test_racing_appends_and_compactions_lose_nothing(objects: Objects) -> None:
    failed: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(20):
                journal.append(objects, "loan", entry(worker * 100 + i), compact_every=3)
        except BaseException as e:  # a writer that failed is a failed test, not a warning
            failed.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == []
    seen = [e["n"] for e in journal.parse(journal.lines(objects, "loan"))]
    assert sorted(seen) == sorted(w * 100 + i for w in range(4) for i in range(20))
    assert len(objects.listing(journal.folder("loan"))) < 80  # some compaction happened


def test_a_renamed_recording_keeps_its_compacted_history(s3_url: str) -> None:
    store = Store(s3_url)
    for i in range(5):
        store.runs.append("old", {"n": i})
    journal.compact(store.objects, "old")
    store.runs.append("old", {"n": 5})
    store.runs.move("old", "new")
    assert [e["n"] for e in store.runs.read("new")] == list(range(6))
    assert store.runs.read("old") == []
