"""`mm record --add`: several recorded runs of one task merge into one tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def test_runs_on_different_screens_merge_and_replay_from_memory(
    loan_app: LoanApp, tmp_path: Path
) -> None:
    loan_app.start()
    first = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert first.returncode == 0, first.stderr

    exists = mm("record", "loan", "--observe", "0", "--", "true")
    assert exists.returncode == 1 and "--add" in exists.stderr

    # The first run's last click was where the popup's OK button appears: without a
    # window manager the pointer's entering a window gives it the focus (and Tk a focus
    # ring), so come in from outside, as a replay does.
    _park_pointer()
    loan_app.start("--popup-at-start")  # the agent closes the popup first
    second = mm("record", "loan", "--add", "--observe", "0", "--", *agent_command(loan_app))
    assert second.returncode == 0, second.stderr
    assert "a branch of 10 steps at step 1" in second.stderr

    loan_app.start()
    again = mm("record", "loan", "--add", "--observe", "0", "--", *agent_command(loan_app))
    assert again.returncode == 0, again.stderr
    assert "already holds this run" in again.stderr

    shown = json.loads(mm("show", "loan", "--json").stdout)
    assert len(shown["steps"]) == 19
    assert sum(1 for s in shown["steps"] if s["parent"] is None) == 2

    loan_app.start("--popup-at-start")
    loan_app.out.unlink()
    replayed = mm("replay", "loan", "--no-agent", "--timeout", "3", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["outcome"] == "from-memory"
    assert len(loan_app.records()) == 1


def _park_pointer() -> None:
    import pyautogui

    pyautogui.moveTo(900, 700, _pause=False)


def test_add_and_overwrite_together_is_a_usage_error(xdisplay: str) -> None:
    result = mm("record", "x", "--add", "--overwrite", "--", "true")
    assert result.returncode == 2 and "pick one" in result.stderr
