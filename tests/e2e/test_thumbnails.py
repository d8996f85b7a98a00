"""A recorded step whose thumbnail is gone or damaged is never a silent downgrade of the
check: replay names the step and the file, `--policy strict` refuses to act on the step
(exit 3), and `mm show` lists it. Real Xvfb, the real example app, the real `mm`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def test_missing_and_corrupt_thumbnails_are_named(loan_app: LoanApp, isolated_store: Path) -> None:
    loan_app.start()
    result = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert result.returncode == 0, result.stderr
    steps = json.loads(mm("show", "loan", "--json").stdout)["steps"]
    assert all(s["thumbnail_problem"] is None for s in steps)
    third, fifth = steps[2]["thumbnail"], steps[4]["thumbnail"]
    (isolated_store / "loan" / third).unlink()
    (isolated_store / "loan" / fifth).write_bytes(b"\x89PNG\r\n\x1a\n not a picture")

    shown = mm("show", "loan")
    assert shown.returncode == 0, shown.stderr
    assert f"warning: step 3 (id {steps[2]['id']}): thumbnail 'loan/{third}' is missing" in (
        shown.stderr
    )
    assert f"step 5 (id {steps[4]['id']}): thumbnail 'loan/{fifth}' is not a readable PNG" in (
        shown.stderr
    )
    problems = [
        s["thumbnail_problem"] for s in json.loads(mm("show", "loan", "--json").stdout)["steps"]
    ]
    assert problems[2] == "is missing" and problems[4] == "is not a readable PNG"
    assert problems.count(None) == len(steps) - 2

    loan_app.out.unlink()
    loan_app.start()
    result = mm("replay", "loan", "--no-agent")
    assert result.returncode == 0, result.stderr
    assert (
        f"warning: step 3: thumbnail 'loan/{third}' is missing; checking with the coarse grid "
        "only\n" in result.stderr
    )
    assert f"warning: step 5: thumbnail 'loan/{fifth}' is not a readable PNG; checking" in (
        result.stderr
    )
    assert [{k: str(r[k]) for k in WANTED} for r in loan_app.records()] == [WANTED]

    loan_app.out.unlink()
    loan_app.start()
    result = mm("replay", "loan", "--no-agent", "--policy", "strict", "--json")
    assert result.returncode == 3, result.stderr
    assert f"warning: step 3: thumbnail 'loan/{third}' is missing; --policy strict" in (
        result.stderr
    )
    report = json.loads(result.stdout)
    assert report["outcome"] == "diverged" and report["steps_replayed"] == 2
    reason = report["divergence"]["reason"]
    assert "cannot be checked in full, and --policy strict does not act on the coarse grid" in (
        reason
    )
    assert f"thumbnail 'loan/{third}' is missing" in reason
    assert loan_app.records() == []  # stopped before step 3: nothing submitted
