"""A clock in the task's window that ticks once a minute (an editor's status bar: jEdit's
"3:31 AM") is let differ where it reads the time now, and nowhere else.

The loan form shows such a clock at its status bar's right end (`--minute-clock SHIFT`:
the time SHIFT seconds from now). Recorded showing the time ten minutes ago (a recording
replayed later: the idle watch never saw it tick), a replay with the clock showing now
is done from memory (exit 0; without the rule, refused at its first step, exit 3, on
the clock's few glyphs). The same clock five minutes ahead does not read the time now:
refused at the first step, nothing submitted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from examples.world import agent_command
from tests.desktop import need
from tests.e2e.conftest import WANTED, LoanApp, mm

pytestmark = pytest.mark.e2e


def _clear_of_the_minute(latest: int = 40) -> None:
    """Wait until the minute is young: a recording made across the clock's tick would
    see it change and learn it as changing on its own, which this test must not rely on."""
    while time.localtime().tm_sec > latest:
        time.sleep(0.5)


def test_a_clock_reading_the_time_now_is_let_differ_and_no_other_time(
    desktop: Desktop, tmp_path: Path, isolated_store: Path
) -> None:
    need("tesseract")
    app = LoanApp(tmp_path / "app")
    try:
        _clear_of_the_minute()
        app.start("--minute-clock", "-600")
        recorded = mm("record", "loan", "--observe", "0", "--", *agent_command(app))
        assert recorded.returncode == 0, recorded.stderr
        app.out.unlink()

        app.start("--minute-clock", "0")
        replayed = mm("replay", "loan", "--no-agent", "--json")
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout)["outcome"] == "from-memory"
        (record,) = app.records()
        assert {k: str(record[k]) for k in WANTED} == WANTED
        app.out.unlink()

        app.start("--minute-clock", "300")
        refused = mm("replay", "loan", "--no-agent", "--json", "--timeout", "2")
        assert refused.returncode == 3, refused.stderr
        assert json.loads(refused.stdout)["divergence"]["step"] == 1
        assert app.records() == []
    finally:
        app.stop()
