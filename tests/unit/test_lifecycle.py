"""The store's one run lifecycle (`mmcli.store.lifecycle`): a run's target checked by its
intent, the recording marked in use for the run, an overwrite held alone while it starts
and saves, and the history line every kind writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmcli.errors import RecordingExists, RecordingInUse, UsageError
from mmcli.store.inuse import in_use, unused
from mmcli.store.lifecycle import Intent, begin, free, history_entry
from mmcli.store.recordings import Store
from tests.helpers import sample_recording


def _store_with(name: str) -> Store:
    store = Store()
    with store.lock(name):
        store.save(sample_recording(name))
    return store


def test_a_record_intent_comes_from_its_flags() -> None:
    assert Intent.of(overwrite=False, add=False) is Intent.NEW
    assert Intent.of(overwrite=True, add=False) is Intent.OVERWRITE
    assert Intent.of(overwrite=False, add=True) is Intent.ADD
    with pytest.raises(UsageError, match="--add merges into the recording, --overwrite"):
        Intent.of(overwrite=True, add=True)


def test_a_new_recording_is_refused_when_the_name_is_taken(isolated_store: Path) -> None:
    store = _store_with("loan")
    with (
        pytest.raises(RecordingExists, match=r"'loan' already exists in .*use --overwrite"),
        begin(store, "loan", Intent.NEW, "cli"),
    ):
        pass
    for intent in (Intent.OVERWRITE, Intent.ADD, Intent.REPLAY):
        with begin(store, "loan", intent, "cli"):
            pass


@pytest.mark.parametrize("intent", list(Intent))
def test_every_run_marks_its_recording_in_use_while_it_runs(
    isolated_store: Path, intent: Intent
) -> None:
    store = Store()
    with begin(store, "new", intent, "llm"):
        with unused(store, "new") as nobody:
            assert not nobody
        with (
            pytest.raises(RecordingInUse, match="'new' is being replayed or recorded"),
            free(store, "new"),
        ):
            pass
    with free(store, "new"):  # the run is over: nothing left behind
        pass


def test_an_overwrite_waits_for_no_one_else(isolated_store: Path) -> None:
    store = _store_with("loan")
    with in_use(store, "loan", wait=0):  # a replay
        with pytest.raises(RecordingInUse), begin(store, "loan", Intent.OVERWRITE, "cli"):
            pass
        with begin(store, "loan", Intent.ADD, "cli") as adding, adding.saving():
            pass  # an add merges under the writer lock: no one is refused
    with (
        begin(store, "loan", Intent.OVERWRITE, "cli") as run,
        in_use(store, "loan", wait=0),  # a replay started meanwhile
        pytest.raises(RecordingInUse),
        run.saving(),
    ):
        pass
    with (
        begin(store, "loan", Intent.OVERWRITE, "cli") as run,
        run.saving(),
        unused(store, "loan") as nobody,
    ):
        assert not nobody


def test_a_mark_is_not_inherited_by_the_agent(isolated_store: Path) -> None:
    """The mark's file is closed in the agent a run starts: a killed run's agent, left
    running, does not keep the recording marked."""
    store = Store()
    with begin(store, "loan", Intent.REPLAY, "cli"):
        fds = subprocess.run(
            [
                sys.executable,
                "-c",
                "import json, os; print(json.dumps(os.listdir('/proc/self/fd')))",
            ],
            capture_output=True,
            text=True,
            close_fds=False,
        ).stdout
        marks = [
            fd
            for fd in os.listdir("/proc/self/fd")
            if os.path.realpath(f"/proc/self/fd/{fd}").endswith("in-use/loan.lock")
        ]
    assert marks and not set(marks) & set(json.loads(fds))


def test_the_history_line_every_kind_writes(isolated_store: Path) -> None:
    entry = history_entry("loan", "sdk", "recorded", 1.23456, {"tags": ["a"], "stored": 2})
    assert set(entry) == {"at", "id", "recording", "outcome", "kind", "seconds", "tags", "stored"}
    assert (entry["recording"], entry["kind"], entry["outcome"]) == ("loan", "sdk", "recorded")
    assert entry["seconds"] == 1.235
    store = _store_with("loan")
    with begin(store, "loan", Intent.REPLAY, "cli") as run:
        run.journal("from-memory", {"path": [0, 1]})
    [line] = store.runs.read("loan")
    assert line["kind"] == "cli" and line["path"] == [0, 1] and line["worker"]


def test_a_history_that_cannot_be_written_is_a_warning(isolated_store: Path) -> None:
    store = _store_with("loan")
    (isolated_store / ".mm" / "history").mkdir(parents=True, exist_ok=True)
    os.symlink("/nonexistent", isolated_store / ".mm" / "history" / "loan.jsonl")
    said: list[str] = []
    with begin(store, "loan", Intent.REPLAY, "cli") as run:
        run.journal("from-memory", {}, warn=said.append)
    assert len(said) == 1 and said[0].startswith("this run is not in the history: ")
    assert "; kept in " in said[0] and "for the next run here" in said[0]

    # Once the history can be written, the next run writes the kept line first, once.
    os.unlink(isolated_store / ".mm" / "history" / "loan.jsonl")
    with begin(store, "loan", Intent.REPLAY, "cli") as run:
        run.journal("healed", {})
    assert [line["outcome"] for line in store.runs.read("loan")] == ["from-memory", "healed"]
    with begin(store, "loan", Intent.REPLAY, "cli") as run:
        run.journal("diverged", {})
    assert [line["outcome"] for line in store.runs.read("loan")] == [
        "from-memory",
        "healed",
        "diverged",
    ]
