"""`--display NAME` for an X display: mm connects to it by name and gives it to the agent;
nothing is taken from, or written to, the environment's DISPLAY. Recorded and replayed
with DISPLAY unset in mm's environment, the example agent (pyautogui, which reads
DISPLAY) still acts on the display named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from examples.world import WANTED, LoanApp, agent_command

pytestmark = pytest.mark.e2e


def mm_without_display(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MM_DISPLAY")}
    return subprocess.run(
        [sys.executable, "-m", "mmcli", "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


def test_a_display_named_is_recorded_replayed_and_given_to_the_agent(
    desktop: Desktop, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    app = LoanApp(tmp_path / "app")
    try:
        app.start()
        at = ("--display", desktop.display)
        recorded = mm_without_display(store, *at, "record", "loan", "--observe", "0", "--",
                                      *agent_command(app))  # fmt: skip
        assert recorded.returncode == 0, recorded.stderr
        assert app.records()[-1]["name"] == WANTED["name"]
        app.out.unlink()
        app.start()
        replayed = mm_without_display(store, *at, "replay", "loan", "--no-agent", "--json")
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout)["verified"] is True
        assert [r["name"] for r in app.records()] == [WANTED["name"]]
        doctor = mm_without_display(store, *at, "doctor", "--json")
        checks = {f["check"]: f["status"] for f in json.loads(doctor.stdout)}
        assert checks["display"] == checks["screenshot"] == checks["input"] == "ok", checks
    finally:
        app.stop()
