"""An app's own activity gauge, still while the app is idle and moved a moment after each
input (jEdit's memory gauge in its status bar), is learned while the recorded run works.

The loan form shows such a gauge (`--gauge START`: "START/388Mb", 2 more for each button
or key press, shown 1.5 s after the last). Recorded by an agent that thinks 2.2 s
between actions, starting at 182, a replay starting at 190 is done from memory (without
the rule, refused at its first step on the gauge's few glyphs, exit 3: the idle watch
never sees it move, and it moves once after each action).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from examples.world import agent_command
from tests.e2e.conftest import WANTED, LoanApp, mm

pytestmark = pytest.mark.e2e


def test_a_gauge_that_moves_while_the_app_works_is_learned(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        app.start("--gauge", "182")
        recorded = mm("record", "loan", "--observe", "0", "--", *agent_command(app, think=2.2))
        assert recorded.returncode == 0, recorded.stderr
        assert "changing on their own" in recorded.stderr, recorded.stderr
        app.out.unlink()

        app.start("--gauge", "190")
        replayed = mm("replay", "loan", "--no-agent", "--json", "--timeout", "3")
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout)["outcome"] == "from-memory"
        (record,) = app.records()
        assert {k: str(record[k]) for k in WANTED} == WANTED
    finally:
        app.stop()
