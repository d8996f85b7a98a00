"""Steps are named one way everywhere: "step N" by their place on their path, as `mm
show` numbers them, and "of branch B" (the branch's id, as `mm show` marks it) off the
trunk; replay's walk and the recording agree on which branch a step is on."""

from __future__ import annotations

from dataclasses import replace

from mmcli.inventory.catalog import tree
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.replay.tree import Tree
from tests.helpers import CREATED, literal_fingerprint, sample_recording


def _nested() -> Recording:
    """The sample (trunk 0-1-2-3, branch 4 after step 0), and on branch 4 two more steps
    (5, 6), and a branch 7 off step 5; the branch 4 stored first after its parent's
    trusted child is pending (replay looks at trusted children first)."""
    rec = sample_recording()
    press = Action(ActionKind.PRESS, keys=("tab",))
    rec.steps += [
        Step(5, 4, press, literal_fingerprint(30), created=CREATED),
        Step(6, 5, press, literal_fingerprint(31), created=CREATED),
        Step(7, 5, press, literal_fingerprint(32), created=CREATED),
    ]
    return rec


def test_a_step_is_named_by_its_place_and_its_branch() -> None:
    rec = _nested()
    labels = {s.id: rec.step_label(s) for s in rec.steps}
    assert labels == {
        0: "step 1",
        1: "step 2",
        2: "step 3",
        3: "step 4",
        4: "step 2 of branch 4",
        5: "step 3 of branch 4",
        6: "step 4 of branch 4",
        7: "step 4 of branch 7",
    }


def test_the_labels_are_mm_show_s_numbers_and_marks() -> None:
    rec = _nested()
    for line in tree(rec):
        label = rec.step_label(line.step)
        assert label.startswith(f"step {line.depth + 1}")
        if line.branch_start:  # `mm show` marks it "branch id N": its own branch
            assert label.endswith(f"of branch {line.step.id}")


def test_the_walk_and_the_recording_agree_on_the_branch() -> None:
    rec = _nested()
    # A pending first child is looked at last by the walk: the branch is still the one
    # `mm show` marks (the order recorded), not the walk's order.
    rec.steps = [replace(s, pending=s.id == 1) for s in rec.steps]
    walk = Tree(rec)
    for step in reversed(rec.steps):  # leaves first: what is remembered is reused
        branch = rec.branch_of(step)
        assert walk.branch_of(step) == (branch.id if branch else None)
