"""The fleet's parts that need no server: the claim hook in a replay (fake backend), the
claim and the manifest on a local store, how a row's outcome reads in `mm batch status`."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from mmcli.backends import FakeBackend
from mmcli.errors import UsageError
from mmcli.fleet.batches import (
    RowState,
    check_batch_name,
    counts,
    default_batch,
    read_manifest,
    state_of,
    write_manifest,
)
from mmcli.fleet.claims import Claim, ClaimTaken, held
from mmcli.params import Values
from mmcli.replay.batch import RowResult, run_row
from mmcli.replay.replayer import ReplayOptions
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named
from tests.helpers import form_screen
from tests.unit.test_replayer import form_recording, typing_app


def run_form_row(store: Store, backend: FakeBackend, options: ReplayOptions) -> RowResult:
    """Row 1 of a batch on the form, as a worker runs it."""
    values = Values({"name": "John"})
    return run_row(
        1, values, {}, None, partial(replay_named, store, backend, "form", values, options)
    )


def replay_row(store: Store, claim: Claim, commit_steps: int = 1) -> tuple[FakeBackend, str]:
    backend = FakeBackend(form_screen(), on_action=typing_app)
    options = ReplayOptions(timeout=0.3, before_commit=claim, commit_steps=commit_steps)
    result = run_form_row(store, backend, options)
    return backend, result.outcome


def test_the_claim_is_written_just_before_the_last_action() -> None:
    store = Store()
    store.save(form_recording())
    seen: list[int] = []

    class Watching(Claim):
        def __call__(self) -> None:
            seen.append(len(backend_ref[0].performed))
            super().__call__()

    backend_ref = [FakeBackend(form_screen(), on_action=typing_app)]
    claim = Watching(store.objects, "b", 1, "w1", 1)
    options = ReplayOptions(timeout=0.3, before_commit=claim)
    result = run_form_row(store, backend_ref[0], options)
    assert result.outcome == "from-memory"
    assert seen == [2]  # after the click and the typing, before the Submit click
    assert claim.taken
    assert held(store.objects, "b", 1)["worker"] == "w1"  # type: ignore[index]


def test_a_row_claimed_by_another_worker_is_not_committed() -> None:
    store = Store()
    store.save(form_recording())
    Claim(store.objects, "b", 1, "w1", 1)()
    claim = Claim(store.objects, "b", 1, "w2", 2)
    backend, outcome = replay_row(store, claim)
    assert [a.kind for a in backend.performed] == ["click", "type"]  # no Submit
    assert outcome == "error" and claim.found is not None and claim.found["worker"] == "w1"
    with pytest.raises(ClaimTaken, match="claimed by w1"):
        claim()


def test_commit_steps_moves_the_claim_earlier() -> None:
    store = Store()
    store.save(form_recording())
    Claim(store.objects, "b", 1, "w1", 1)()
    backend, _ = replay_row(store, Claim(store.objects, "b", 1, "w2", 1), commit_steps=2)
    assert [a.kind for a in backend.performed] == ["click"]  # neither the typing nor Submit


def test_a_claim_is_taken_once_per_attempt() -> None:
    store = Store()
    claim = Claim(store.objects, "b", 7, "w1", 1)
    claim()
    claim()  # the same attempt again (the screen changed as it was about to act): fine
    assert json.loads(store.objects.get(".mm/claims/b/7").data)["attempt"] == 1


def test_the_manifest_is_create_only_and_a_resubmit_must_match() -> None:
    store = Store()
    rows = [{"name": "Ada"}, {"name": "Alan"}]
    assert write_manifest(store.objects, "b1", "form", rows) is True
    assert write_manifest(store.objects, "b1", "form", rows) is False  # the same: a no-op
    with pytest.raises(UsageError, match="other rows"):
        write_manifest(store.objects, "b1", "form", rows[:1])
    assert read_manifest(store.objects, "b1").rows == rows
    assert default_batch("form", rows) == default_batch("form", list(rows))
    assert default_batch("form", rows) != default_batch("form", rows[:1])
    with pytest.raises(UsageError):
        check_batch_name("../x")


def test_outcomes_read_as_states() -> None:
    assert [state_of(o) for o in ("from-memory", "healed", "diverged", "claimed")] == [
        "done", "healed", "diverged", "unknown",
    ]  # fmt: skip
    assert state_of("outcome-differs") == "unknown" and state_of("agent-failed") == "failed"
    rows = [RowState(1, {}, "done"), RowState(2, {}, "pending"), RowState(3, {}, "done")]
    assert counts(rows) == {
        "done": 2, "healed": 0, "diverged": 0, "failed": 0, "unknown": 0, "pending": 1,
    }  # fmt: skip


def test_no_hand_over_to_the_agent_without_the_claim(tmp_path: Path) -> None:
    store = Store()
    store.save(form_recording())
    Claim(store.objects, "b", 1, "w1", 1)()
    started = tmp_path / "agent-started"
    backend = FakeBackend(form_screen(popup=True), on_action=typing_app)
    options = ReplayOptions(
        timeout=0.3,
        agent=["sh", "-c", f"touch {started}"],
        before_commit=Claim(store.objects, "b", 1, "w2", 1),
    )
    result = run_form_row(store, backend, options)
    assert result.outcome == "error" and "claimed by w1" in result.detail
    assert not started.exists() and backend.performed == []


@pytest.mark.parametrize(
    ("declared", "given", "used"), [(None, None, 1), (2, None, 2), (2, 3, 3), (None, 3, 3)]
)
def test_a_row_commits_as_its_recording_declares_unless_the_worker_says(
    declared: int | None, given: int | None, used: int
) -> None:
    from mmcli.fleet.worker import FleetWorker, WorkerSettings

    rec = form_recording()
    rec.commit_steps = declared
    settings = WorkerSettings(
        ["form"], "127.0.0.1:7233", "default", "w1", ReplayOptions(), True, Values(),
        commit_steps=given, allow_agents=("agent",),
    )  # fmt: skip
    store = Store()
    store.save(form_recording())
    worker = FleetWorker(store, FakeBackend(form_screen()), settings, lambda message: None)
    assert worker._options(rec).commit_steps == used
    assert worker._options(rec).agent == ["agent"]  # allowed on this worker


def test_a_worker_runs_no_recorded_agent_it_does_not_allow() -> None:
    from mmcli.fleet.worker import FleetWorker, WorkerSettings

    rec = form_recording()
    rec.cwd = "/somewhere/else"
    Store().save(rec)
    said: list[str] = []
    settings = WorkerSettings(
        ["form"], "127.0.0.1:7233", "default", "w1", ReplayOptions(), True, Values()
    )
    worker = FleetWorker(Store(), FakeBackend(form_screen()), settings, said.append)
    assert worker._options(rec).agent is None
    assert said == [
        "form: its agent command (agent) comes from a shared store and is not one this "
        "machine allows: a divergence stops the replay (allow it with --allow-agent, or give "
        "--agent CMD)"
    ]
    allowed = WorkerSettings(
        ["form"], "127.0.0.1:7233", "default", "w1", ReplayOptions(), True, Values(),
        allow_agents=("agent",),
    )  # fmt: skip
    options = FleetWorker(Store(), FakeBackend(form_screen()), allowed, said.append)._options(rec)
    assert options.agent == ["agent"] and options.agent_cwd is None  # not the document's
