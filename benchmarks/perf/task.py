"""The 20-action task the timing benchmarks share: two loan applications filed in a row on
the example app (examples/loan_batch_agent.py), and the check that a run really filed them."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from examples.world import HERE, LoanApp

BATCH_AGENT = HERE / "loan_batch_agent.py"
APPLICANTS = (
    ("John Smith", "john@example.com", "1200", "Auto"),
    ("Jane Doe", "jane@example.com", "800", "Home"),
)
ACTIONS = 20
"""Per application: click + type for Name, Email and Amount, Urgent, product, Submit, OK."""


def agent_command(app: LoanApp, think: float, applications: int = 2) -> list[str]:
    """The batch agent filing the first `applications` applicants (10 actions each)."""
    args = [sys.executable, str(BATCH_AGENT), "--layout", str(app.layout), "--think", str(think)]
    for applicant in APPLICANTS[:applications]:
        args += ["--applicant", *applicant, "urgent"]
    return args


def fresh_start(app: LoanApp) -> None:
    """A restarted app with nothing submitted yet."""
    app.out.unlink(missing_ok=True)
    app.start()


def problem(app: LoanApp, applications: int = 2, wait: float = 2.0) -> str | None:
    """Why the last run did not file exactly the first `applications` applications and
    close the last confirmation; None when it did."""
    want = [
        {"name": n, "email": e, "amount": int(a), "urgent": True, "product": p}
        for n, e, a, p in APPLICANTS[:applications]
    ]
    got = [{k: r.get(k) for k in want[0]} for r in app.records()]
    if got != want:
        return f"submitted {got}, expected {want}"
    finished = time.time()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        layout = _layout(app.layout)
        if layout is not None and layout.get("time", 0) >= finished:
            if len(layout["windows"]) == 1:
                return None
            return "a dialog is still open after the run"
        time.sleep(0.05)
    return "the app published no layout after the run"


def _layout(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "windows" in data else None
