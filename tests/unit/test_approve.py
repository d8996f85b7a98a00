"""`mm approve`: a pending branch becomes trusted, and nothing else changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcli.errors import MMError, UsageError
from mmcli.inventory.approve import approve
from mmcli.store.recordings import Store
from tests.helpers import golden_recording


def test_approving_a_branch_trusts_it_and_keeps_the_rest(isolated_store: Path) -> None:
    store = Store()
    store.save(golden_recording())
    before = store.load("sample")
    assert [s.id for s in before.pending_branches()] == [4]

    done = approve(store, "sample", 4)
    assert done.branches == [4]
    after = store.load("sample")
    assert after.pending_branches() == []
    assert [s.id for s in after.steps] == [s.id for s in before.steps]
    assert [s.outcome for s in after.steps] == [s.outcome for s in before.steps]
    assert {s.id for s in after.outcomes()} == {3, 4}  # the branch's outcome is trusted now


def test_approving_all_pending_branches(isolated_store: Path) -> None:
    store = Store()
    store.save(golden_recording())
    assert approve(store, "sample").branches == [4]
    with pytest.raises(MMError, match="no branch pending"):
        approve(store, "sample")


def test_a_step_that_starts_no_pending_branch_is_a_usage_error(isolated_store: Path) -> None:
    store = Store()
    store.save(golden_recording())
    before = (isolated_store / "sample.toml").read_bytes()
    with pytest.raises(UsageError, match="pending: 4"):
        approve(store, "sample", 2)
    assert (isolated_store / "sample.toml").read_bytes() == before
