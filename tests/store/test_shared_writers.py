"""Writers on many machines never lose each other's work: 8 processes each add a branch
to one recording at the same moment, on a local folder and on a real S3 server; every
branch is there afterwards. A writer that did not hold the lock is refused, not lost."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from pathlib import Path

import pytest

from mmcli.errors import StoreError
from mmcli.model import Action, ActionKind, Step
from mmcli.store.recordings import Store
from tests.helpers import literal_fingerprint, sample_recording

WRITERS = 8


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.e2e)])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "folder":
        return str(tmp_path / "store")
    return str(request.getfixturevalue("s3_url"))


def _add_branch(location: str, env: dict[str, str], start: object, i: int) -> None:
    os.environ.update(env)
    store = Store(location)
    start.wait()  # type: ignore[attr-defined]
    with store.lock("loan", timeout=60):
        rec = store.load("loan")
        step = Step(
            rec.next_id(),
            0,
            Action(ActionKind.TYPE, text=f"writer {i}"),
            literal_fingerprint(i + 20),
            created=rec.created,
        )
        rec.steps.append(step)
        store.save(rec, {f"w{i}.png": b"png"})


def test_every_concurrent_heal_is_kept(location: str) -> None:
    store = Store(location)
    with store.lock("loan"):
        store.save(sample_recording("loan"))
    ctx = multiprocessing.get_context("spawn")  # a forked child inherits a stuck client runtime
    start = ctx.Barrier(WRITERS)
    env = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    procs = [
        ctx.Process(target=_add_branch, args=(location, env, start, i)) for i in range(WRITERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    rec = Store(location).load("loan")
    typed = sorted(s.action.text for s in rec.steps if s.action.text and "writer" in s.action.text)
    assert typed == sorted(f"writer {i}" for i in range(WRITERS))
    assert len({s.id for s in rec.steps}) == len(rec.steps)


def test_a_write_from_a_stale_read_is_refused_not_lost(location: str) -> None:
    with Store(location).lock("loan"):
        Store(location).save(sample_recording("loan"))
    first, second = Store(location), Store(location)
    mine, theirs = first.load("loan"), second.load("loan")
    theirs.params = [*theirs.params, "theirs"]
    second.save(theirs)
    mine.params = [*mine.params, "mine"]
    with pytest.raises(StoreError, match="changed by another writer"):
        first.save(mine)
    assert "theirs" in Store(location).load("loan").params
    assert dataclasses.replace(mine).name == "loan"


def test_a_thumbnail_another_writer_took_meanwhile_is_never_replaced(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(location)
    rec = sample_recording("loan")
    with store.lock("loan"):
        store.save(rec, {"t-0000.png": b"first"})
    # Another writer creates t-0001.png between this writer's listing and its write.
    monkeypatch.setattr(store.thumbs, "names", lambda name: [])
    Store(location).objects.put("loan/t-0001.png", b"theirs")
    rec.params = [*rec.params, "mine"]
    with pytest.raises(StoreError, match="written by another writer meanwhile"):
        store.save(rec, {"t-0002.png": b"mine too", "t-0001.png": b"mine"})
    fresh = Store(location)
    assert fresh.objects.get("loan/t-0001.png").data == b"theirs"
    assert "mine" not in fresh.load("loan").params
    assert fresh.objects.head("loan/t-0002.png") is None  # what it created is taken back
