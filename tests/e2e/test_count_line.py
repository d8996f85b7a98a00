"""A status bar that counts what was typed is the recorded screen for another value.

The loan form's status bar counts the name's words and characters as it is typed, in a
cell of its own (`--count name`), as an editor's does ("5 words, 30 characters"). A
replay with a longer name moves those numbers by the names' difference in length: the
screen after the typing is the recorded one for that name, and the run must be done
(exit 0), not stopped at the step after the typing (exit 3, as before: the cell's pixels
differ). The cell is read by OCR only where the check differs over it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from examples.world import agent_command
from mmcli.model import Recording
from mmcli.store.recordings import Store
from tests.desktop import need
from tests.e2e.conftest import LoanApp, mm

pytestmark = pytest.mark.e2e


def counted(recording: Recording) -> list[str]:
    return [c.text for s in recording.steps for c in s.counts]


def test_a_count_that_moved_by_the_names_length_is_the_recorded_screen(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    need("tesseract")
    app = LoanApp(tmp_path / "app")
    try:
        app.start("--count", "name")
        recorded = mm("record", "loan", "--observe", "0", "--param", "name=John Smith", "--",
                      *agent_command(app))  # fmt: skip
        assert recorded.returncode == 0, recorded.stderr
        kept = counted(Store(isolated_store).load("loan"))
        assert kept and all(t == "2 words, 10 characters" for t in kept), kept
        app.out.unlink()
        app.start("--count", "name")
        name = "Bartholomew Montgomery"
        replayed = mm("replay", "loan", "--no-agent", "--param", f"name={name}", "--json")
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout)["outcome"] == "from-memory"
        assert [r["name"] for r in app.records()] == [name]
    finally:
        app.stop()


TYPE_ONLY = """
import os, sys, time
import pyautogui
pyautogui.click(int(sys.argv[1]), int(sys.argv[2]))
time.sleep(0.3)
pyautogui.write(os.environ["MM_PARAM_NAME"], interval=0.02)
time.sleep(0.5)
"""


def test_an_outcome_that_shows_the_count_for_the_new_name_is_the_recorded_one(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    """A task that ends once the name is typed (the outcome shows the count): done, not
    exit 6 "outcome differs"."""
    need("tesseract")
    agent = tmp_path / "type_only.py"
    agent.write_text(TYPE_ONLY)
    app = LoanApp(tmp_path / "app")
    try:
        app.start("--count", "name")
        x, y = app.center("Name")
        recorded = mm("record", "typed", "--observe", "0", "--param", "name=John Smith", "--",
                      sys.executable, str(agent), str(x), str(y))  # fmt: skip
        assert recorded.returncode == 0, recorded.stderr
        end = Store(isolated_store).load("typed").steps[-1].outcome
        assert end is not None and [c.text for c in end.counts] == ["2 words, 10 characters"]
        app.start("--count", "name")
        replayed = mm("replay", "typed", "--no-agent", "--param", "name=Bartholomew Montgomery")
        assert replayed.returncode == 0, replayed.stderr
        assert app.widgets()["Name"]["text"] == "Bartholomew Montgomery"
    finally:
        app.stop()
