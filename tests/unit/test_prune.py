"""The prune plan: which recordings and branches go, and that executing it deletes
exactly those."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mmcli.errors import UsageError
from mmcli.inventory.prune import Criteria, branch_starts, execute, make_plan, parse_duration
from mmcli.model import Action, ActionKind
from mmcli.store.recordings import Store
from tests.helpers import CREATED, literal_fingerprint, sample_recording

NOW = CREATED + timedelta(days=40)


def test_durations() -> None:
    assert parse_duration("90m") == timedelta(minutes=90)
    assert parse_duration("1d12h") == timedelta(hours=36)
    assert parse_duration("2w") == timedelta(days=14)
    for bad in ("", "10", "3x", "d", "1d 2h", "-1d"):
        with pytest.raises(UsageError):
            parse_duration(bad)


def test_no_criteria_is_a_usage_error(isolated_store: Path) -> None:
    with pytest.raises(UsageError, match="say what to prune"):
        make_plan(Store(), Criteria())


def _store_with(*names: str) -> Store:
    store = Store()
    for name in names:
        store.save(sample_recording(name))
    return store


def test_older_than_and_unused_for_pick_whole_recordings(isolated_store: Path) -> None:
    store = _store_with("old", "used")
    store.runs.append("used", {"at": (NOW - timedelta(days=2)).isoformat(), "outcome": "ok"})

    plan = make_plan(store, Criteria(unused_for=timedelta(days=30)), now=NOW)
    assert [(d.name, d.branch) for d in plan.deletions] == [("old", None)]
    assert "never replayed" in plan.deletions[0].reason

    plan = make_plan(store, Criteria(older_than=timedelta(days=30)), now=NOW)
    assert sorted(d.name for d in plan.recordings) == ["old", "used"]
    assert make_plan(store, Criteria(older_than=timedelta(days=50)), now=NOW).deletions == []


def test_execute_deletes_exactly_the_plan(isolated_store: Path) -> None:
    store = _store_with("a", "b")
    plan = make_plan(store, Criteria(unused_for=timedelta(days=1)), now=NOW)
    plan.deletions = [d for d in plan.deletions if d.name == "a"]
    done = execute(store, plan)
    assert [d.name for d in done] == ["a"]
    assert store.names() == ["b"]
    assert not (isolated_store / "a.toml").exists()


def _with_three_branches(store: Store) -> None:
    rec = sample_recording("tree")  # trunk 0-1-2-3 and a branch at step id 4 (parent 0)
    for i, days in ((5, 20), (6, 1)):
        rec.steps.append(
            replace(
                rec.steps[4],
                id=i,
                parent=1,
                action=Action(ActionKind.PRESS, keys=("tab",)),
                fingerprint=literal_fingerprint(i),
                created=NOW - timedelta(days=days),
            )
        )
    store.save(rec)


def test_keep_n_keeps_the_trunk_and_the_newest_branches(isolated_store: Path) -> None:
    store = Store()
    _with_three_branches(store)
    assert [s.id for s in branch_starts(store.load("tree"))] == [4, 5, 6]
    plan = make_plan(store, Criteria(keep=1), now=NOW)
    assert sorted(d.branch for d in plan.branches if d.branch is not None) == [4, 5]
    # Each line says what stays and why.
    assert {d.reason for d in plan.branches} == {
        "not among the 1 newest approved branches (kept: 6)"
    }
    execute(store, plan)
    rec = store.load("tree")
    assert sorted(s.id for s in rec.steps) == [0, 1, 2, 3, 6]
    assert [s.id for s in rec.trunk()] == [0, 1, 2, 3]


def test_keep_n_counts_approved_branches_and_leaves_pending_ones(isolated_store: Path) -> None:
    """The newest branch is pending approval: `--keep 1` keeps the newest approved one
    (before: it kept the pending branch and deleted the approved one)."""
    store = Store()
    _with_three_branches(store)
    rec = store.load("tree")
    rec.steps[-1] = replace(rec.steps[-1], pending=True)  # branch 6, the newest
    store.save(rec, overwrite=True)
    plan = make_plan(store, Criteria(keep=1), now=NOW)
    assert sorted(d.branch for d in plan.branches if d.branch is not None) == [4]
    assert plan.branches[0].reason == (
        "not among the 1 newest approved branches (kept: 5; pending, not counted: 6)"
    )
    execute(store, plan)
    assert sorted(s.id for s in store.load("tree").steps) == [0, 1, 2, 3, 5, 6]


def test_dead_branches_are_those_no_replay_took(isolated_store: Path) -> None:
    store = Store()
    _with_three_branches(store)
    # Branch 4 (created 40 days ago) was taken 3 days ago; branch 5 (20 days) never.
    taken = (NOW - timedelta(days=3)).isoformat()
    store.runs.append("tree", {"at": taken, "outcome": "from-memory", "path": [0, 4]})
    plan = make_plan(store, Criteria(dead_for=timedelta(days=10)), now=NOW)
    assert [(d.branch, d.reason) for d in plan.branches] == [(5, "not taken in 10d")]


def test_corrupt_recordings_are_never_pruned(isolated_store: Path) -> None:
    store = _store_with("good")
    (isolated_store / "bad.toml").write_text("format_version = [")
    plan = make_plan(store, Criteria(older_than=timedelta(0)), now=NOW)
    assert [d.name for d in plan.deletions] == ["good"]
    execute(store, plan)
    assert (isolated_store / "bad.toml").read_text() == "format_version = ["


def test_plan_items_are_dated_in_utc(isolated_store: Path) -> None:
    store = _store_with("x")
    later = datetime(2027, 1, 1, tzinfo=UTC)
    assert make_plan(store, Criteria(older_than=timedelta(days=1)), now=later).deletions


def test_a_recording_a_replay_is_using_is_not_pruned(isolated_store: Path) -> None:
    from mmcli.store.inuse import in_use

    store = _store_with("busy", "idle")
    plan = make_plan(store, Criteria(older_than=timedelta(days=1)), now=NOW)
    assert {d.name for d in plan.recordings} == {"busy", "idle"}
    said: list[str] = []
    with in_use(store, "busy", wait=0):
        deleted = execute(store, plan, said.append)
    assert [d.name for d in deleted] == ["idle"]
    assert store.exists("busy") and not store.exists("idle")
    assert "skipped busy: a replay is using it" in said
    assert [d.name for d in execute(store, plan)] == ["busy"]  # free again once it ends
