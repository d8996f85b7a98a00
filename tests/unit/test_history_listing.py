"""`mm show`'s history listing against the tree: a heal whose branch was deleted since is
left out, whether its history line names the branch or (older lines) not."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from mmcli.inventory.catalog import heal_deleted, recent_divergences
from mmcli.store.recordings import Store
from tests.helpers import CREATED, sample_recording

# sample_recording: the trunk 0-1-2-3, and a branch at step id 4 departing after step 0.
LATER = (CREATED + timedelta(minutes=5)).isoformat(timespec="seconds")


def _heal(**fields: Any) -> dict[str, Any]:
    return {"at": LATER, "outcome": "healed", "divergence": {"step": 2, "depth": 1}, **fields}


def test_a_heal_naming_its_branch_is_deleted_with_it() -> None:
    rec = sample_recording()
    assert not heal_deleted(_heal(branch=4, path=[0]), rec)
    assert not heal_deleted(_heal(outcome="healed-pending", branch=4), rec)
    trunk_only = replace(rec, steps=[s for s in rec.steps if s.id != 4])
    assert heal_deleted(_heal(branch=4, path=[0]), trunk_only)
    assert heal_deleted(_heal(outcome="healed-pending", branch=4), trunk_only)
    # Its id given to a branch a later heal learned: that is not this heal's branch.
    reused = replace(
        rec,
        steps=[
            *trunk_only.steps,
            replace(rec.steps[-1], created=CREATED + timedelta(minutes=9)),
        ],
    )
    assert heal_deleted(_heal(branch=4, path=[0]), reused)
    # Made in the same second as the line (the line's time is whole seconds): its own.
    same = replace(rec.steps[-1], created=CREATED + timedelta(minutes=5, seconds=0.7))
    assert not heal_deleted(_heal(branch=4), replace(rec, steps=[*trunk_only.steps, same]))


def test_an_older_heal_is_judged_by_where_it_departed() -> None:
    rec = sample_recording()
    trunk_only = replace(rec, steps=[s for s in rec.steps if s.id != 4])
    assert not heal_deleted(_heal(path=[0]), rec)  # a branch still departs after step 0
    assert heal_deleted(_heal(path=[0]), trunk_only)  # none does any more
    assert heal_deleted(_heal(path=[4]), trunk_only)  # it walked a step that is gone
    assert not heal_deleted(_heal(), trunk_only)  # nothing to judge by: listed
    assert not heal_deleted({"at": LATER, "outcome": "diverged", "path": [0]}, trunk_only)


def test_recent_divergences_leave_out_heals_of_deleted_branches(isolated_store: Path) -> None:
    store = Store()
    rec = sample_recording("loan")
    store.save(replace(rec, steps=[s for s in rec.steps if s.id != 4]))
    store.runs.append("loan", _heal(branch=4, path=[0]))
    store.runs.append(
        "loan",
        {
            "at": LATER,
            "outcome": "diverged",
            "path": [0],
            "divergence": {"step": 2, "depth": 1, "regions": [[1, 2, 3, 4], "bad"]},
        },
    )
    (listed,) = recent_divergences(store, "loan")
    assert listed["outcome"] == "diverged" and listed["regions"] == [[1, 2, 3, 4]]
    assert listed["area"] is None
