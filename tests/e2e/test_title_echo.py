"""A window title that names the param is the recorded outcome.

On a desktop with a window manager (openbox), the loan form names the applicant in its
title after Submit (`--title-echo`), as an editor names its file: the title bar, drawn
by the window manager, shows the param's value again at the outcome. A replay with
another name saved the right record and must say so (exit 0), not "outcome differs"
(exit 6: a cron job that retries on 6 submits twice). A title that names someone else
than the value typed stays a difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from examples.world import agent_command
from tests.e2e.conftest import LoanApp, mm

pytestmark = pytest.mark.e2e


def test_a_title_naming_the_new_value_is_the_recorded_outcome(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        app.start("--title-echo")
        recorded = mm("record", "loan", "--observe", "0", "--param", "name=John Smith", "--",
                      *agent_command(app))  # fmt: skip
        assert recorded.returncode == 0, recorded.stderr
        app.out.unlink()
        app.start("--title-echo")
        replayed = mm("replay", "loan", "--no-agent", "--param", "name=Grace Hopper", "--json")
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout)["outcome"] == "from-memory"
        assert [r["name"] for r in app.records()] == ["Grace Hopper"]
    finally:
        app.stop()
