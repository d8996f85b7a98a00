"""Merging a new run into a recording's tree: shared prefix, branch where it departs."""

from __future__ import annotations

from dataclasses import replace

from mmcli.capture.merge import merge, same_screen
from mmcli.model import Action, ActionKind, Step
from tests.helpers import literal_fingerprint, sample_recording


def _run_like_trunk() -> list[Step]:
    trunk = sample_recording().trunk()
    return [
        replace(s, id=100 + i, parent=None if i == 0 else 100 + i - 1) for i, s in enumerate(trunk)
    ]


def test_a_run_the_tree_holds_adds_nothing() -> None:
    rec = sample_recording()
    merged = merge(rec, _run_like_trunk())
    assert merged.added == [] and merged.shared == 4
    assert merged.recording.steps == rec.steps


def test_a_run_that_departs_becomes_a_branch_there() -> None:
    rec = sample_recording()
    run = _run_like_trunk()
    run[2] = replace(run[2], action=Action(ActionKind.PRESS, keys=("f5",)))
    merged = merge(rec, run)
    assert merged.shared == 2 and merged.branch_at == 2
    ids = [s.id for s in merged.added]
    assert ids == [5, 6]  # renumbered after the tree's ids
    assert merged.added[0].parent == 1 and merged.added[1].parent == 5
    assert merged.recording.branch_count() == rec.branch_count() + 1


def test_same_action_on_another_screen_is_not_shared() -> None:
    rec = sample_recording()
    run = _run_like_trunk()
    run[0] = replace(run[0], fingerprint=literal_fingerprint(7))
    merged = merge(rec, run)
    assert merged.shared == 0 and merged.added[0].parent is None
    assert len(merged.recording.roots()) == 2


def test_same_screen_tolerates_nothing_beyond_the_policy() -> None:
    a = literal_fingerprint(0)
    assert same_screen(a, a)
    assert not same_screen(a, literal_fingerprint(3))
    assert not same_screen(a, replace(a, width=1280))
