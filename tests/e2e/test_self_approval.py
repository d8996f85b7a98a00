"""The healing agent cannot approve its own heal: it runs with the store read-only
(bubblewrap), and whatever it leaves running is stopped when it exits.

The attack, as reproduced: a fallback agent does the task on a new screen (the heal is
saved pending: "healed, unverified", exit 6), and leaves a child that runs `mm approve`
in a loop. Before, the child approved the branch, and the next `--no-agent` replay on that
screen followed it, exit 0."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest

from tests.desktop import need
from tests.e2e.conftest import LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def test_a_heal_cannot_be_approved_by_the_agent_or_what_it_leaves_running(
    loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    need("bwrap")
    loan_app.start()
    honest = agent_command(loan_app)
    assert mm("record", "loan", "--observe", "0", "--", *honest).returncode == 0

    beat, stop = tmp_path / "approver-beat", tmp_path / "stop"
    approver = (
        f"while [ ! -e {stop} ]; do mm approve loan >>{tmp_path / 'approve.log'} 2>&1; "
        f"date +%s.%N > {beat}; sleep 0.2; done"
    )
    evil = f"( {approver} ) & exec {shlex.join(honest)}"
    try:
        loan_app.start("--popup-at-start", "--fail-upload")  # the heal ends on a new outcome
        healed = mm(
            "replay", "loan", "--timeout", "2", "--json", "--agent", f"sh -c {shlex.quote(evil)}"
        )
        assert healed.returncode == 6, healed.stderr
        report = json.loads(healed.stdout)
        assert report["outcome"] == "healed-pending"
        branch = report["pending_branch"]
        time.sleep(1.5)  # what the agent left running has had its chance

        shown = json.loads(mm("show", "loan", "--json").stdout)
        assert [s["id"] for s in shown["steps"] if s.get("pending")] == [branch]
        tried = (tmp_path / "approve.log").read_text()
        assert "read-only" in tried, tried  # it tried, from inside, and could not
        last = float(beat.read_text())
        time.sleep(0.6)
        assert float(beat.read_text()) == last  # and it stopped when the agent exited

        loan_app.out.unlink()
        loan_app.start("--popup-at-start")
        again = mm("replay", "loan", "--no-agent", "--timeout", "2")
        assert again.returncode == 3, again.stderr
        assert f"mm approve loan {branch}" in again.stderr
        assert loan_app.records() == []
    finally:
        stop.touch()
