"""`--relocate` judges each of the task's windows where it stands: a dialog the window
manager places apart from a moved main window (xfwm4 keeps GIMP's 950 px export dialog
on the screen, so it does not follow the main window 60 px right).

The loan form opens its confirmation at a fixed place on the screen (`--dialog-at`), and
the replay finds the form 60 px right of where it was recorded: the dialog did not move,
the form did. Checked at the dialog's offset alone, the form around the dialog is 60 px
off (a false divergence, exit 3, before); each window is judged at its own offset, and an
error shown in the moved form is still seen.

Where the dialog's OK lies over the form's Submit button, the pointer rests on Submit
when the dialog closes, and Tk draws Submit hovered in the recorded outcome. At replay
the pointer the dialog's steps placed is 60 px off the moved form's Submit: the outcome
is checked with the pointer where it was over the form (`EndScreen.under`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from examples.world import agent_command
from tests.e2e.conftest import LoanApp, mm

pytestmark = pytest.mark.e2e

DIALOG = ("--dialog-at", "300,300")  # over the form at 100,100, its OK over no widget
MOVED = ("--position", "160,100")  # the form 60 px right of where it was recorded


def record_and_replay_moved(app: LoanApp, *flags: str) -> subprocess.CompletedProcess[str]:
    """Record the loan task on the app started with `flags`, then replay it relocated on
    the app started again with the form moved (`MOVED`)."""
    app.start(*flags)
    recorded = mm("record", "loan", "--observe", "0", "--", *agent_command(app))
    assert recorded.returncode == 0, recorded.stderr
    app.out.unlink()
    app.start(*flags, *MOVED)
    return mm("replay", "loan", "--no-agent", "--relocate")


def test_a_dialog_that_did_not_follow_the_moved_form_is_judged_where_it_stands(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        replayed = record_and_replay_moved(app, *DIALOG)
        assert replayed.returncode == 0, replayed.stderr
        assert "moved by +60,+0" in replayed.stderr
        assert len(app.records()) == 1
        app.stop()
        app.out.unlink()
        # The same, with an error shown in the moved form: refused before Submit.
        app.start(*DIALOG, *MOVED, "--error-label")
        refused = mm("replay", "loan", "--no-agent", "--relocate")
        assert refused.returncode == 3, refused.stderr
        assert app.records() == []
    finally:
        app.stop()


def test_the_outcome_is_checked_with_the_pointer_where_it_was_over_the_moved_form(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    over_submit = ("--dialog-at", "75,297")  # OK over the left end of Submit (231..369)
    app = LoanApp(tmp_path / "app")
    try:
        replayed = record_and_replay_moved(app, *over_submit)
        assert replayed.returncode == 0, replayed.stderr
        assert "outcome: the screen shows the recorded outcome" in replayed.stderr
        assert len(app.records()) == 1
    finally:
        app.stop()


def test_what_the_pointer_s_place_shows_is_told_from_the_result(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    """As GIMP's status bar and rulers (`--pointer-readout`): the pointer's place in the
    form shows as it enters the form and as it moves; the ruler marks it as it moves
    only. When the dialog closes at replay, the pointer enters the moved form 60 px left
    of where it entered it recorded: as found, the readout differs; put back where it
    was, the readout matches and the ruler's mark moved. No place of the pointer gives
    both, so each look alone differs (exit 6, before); they differ in separate places,
    each where the pointer's move changed the screen. A result that differs, a failed
    upload's status line, differs in both: still exit 6."""
    readout = (*DIALOG, "--pointer-readout")
    app = LoanApp(tmp_path / "app")
    try:
        replayed = record_and_replay_moved(app, *readout)
        assert replayed.returncode == 0, replayed.stderr
        assert "but for what the pointer's place shows" in replayed.stderr
        assert len(app.records()) == 1
        app.stop()
        app.out.unlink()
        app.start(*readout, *MOVED, "--fail-upload")
        failed = mm("replay", "loan", "--no-agent", "--relocate", "--timeout", "3")
        assert failed.returncode == 6, failed.stderr
    finally:
        app.stop()
