"""Running unattended: the documented cron line, two replays on one display, the lock bound."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _record_loan(app: LoanApp, *params: str) -> None:
    app.start()
    recorded = mm("record", "loan", *params, "--observe", "0", "--", *agent_command(app))
    assert recorded.returncode == 0, recorded.stderr
    app.start()
    app.out.unlink()


def _cron_line() -> str:
    text = (ROOT / "docs" / "cron.md").read_text()
    block = re.search(r"<!-- cron-line.*?-->\n```cron\n(.+?)\n```", text, re.S)
    assert block, "docs/cron.md lost its cron line"
    return block.group(1)


def test_the_documented_cron_line_works_without_a_terminal(
    loan_app: LoanApp, isolated_store: Path, tmp_path: Path, xdisplay: str
) -> None:
    _record_loan(loan_app)
    command = " ".join(_cron_line().split()[5:])  # drop the five schedule fields
    logs = tmp_path / "log"
    logs.mkdir()
    mm_script = Path(sys.executable).parent / "mm"
    command = (
        command.replace("/srv/mm/recordings", str(isolated_store))
        .replace("/srv/mm/.venv/bin/mm", str(mm_script))
        .replace("DISPLAY=:99", f"DISPLAY={xdisplay}")
        .replace("/var/log/mm", str(logs))
    )
    cron_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SHELL": "/bin/sh"}
    if "XAUTHORITY" in os.environ:
        cron_env["XAUTHORITY"] = os.environ["XAUTHORITY"]
    for _ in range(2):
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            env=cron_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            start_new_session=True,  # no controlling terminal, like cron
        )
        assert done.returncode == 0, (logs / "loan.err").read_text()
        loan_app.start()
    runs = [json.loads(line) for line in (logs / "loan.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in runs] == ["from-memory", "from-memory"]
    listed = json.loads(mm("ls", "--json").stdout)[0]
    assert (listed["replays"], listed["from_memory"]) == (2, 2)


def _wait_for_text(path: Path, text: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"{path.name} never said {text!r}"
        time.sleep(0.05)


def test_two_replays_on_one_display_take_turns(loan_app: LoanApp, tmp_path: Path) -> None:
    _record_loan(loan_app, "--param", "name=John Smith")
    # Alice takes the display first and holds it while she waits for the app, which is
    # not up yet (a replay of 9 steps is otherwise over before a second mm has started).
    loan_app.stop()
    env = {**os.environ, "COLUMNS": "120"}
    procs = []
    for who in ("Alice Able", "Bob Baker"):
        err = open(tmp_path / f"{who}.err", "w")  # noqa: SIM115 - closed below
        procs.append(
            (
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "mmcli",
                        "replay",
                        "loan",
                        "--no-agent",
                        "--param",
                        f"name={who}",
                        "--timeout",
                        "60",
                    ],
                    stderr=err,
                    env=env,
                ),
                err,
            )
        )
        try:
            if who == "Alice Able":
                _wait_for_text(tmp_path / f"{who}.err", "waiting for the screen")
            else:
                _wait_for_text(tmp_path / f"{who}.err", "is in use by another mm")
        except AssertionError:
            for proc, _ in procs:
                proc.kill()
            raise
    loan_app.start()
    for proc, err in procs:
        assert proc.wait(timeout=120) == 0
        err.close()
    bob = (tmp_path / "Bob Baker.err").read_text()
    assert "is in use by another mm" in bob
    names = [r["name"] for r in loan_app.records()]
    # Interleaved keystrokes would mix the names or the other fields; taking turns
    # submits each record whole, Alice's first.
    assert names == ["Alice Able", "Bob Baker"]
    assert all(r["email"] == "john@example.com" for r in loan_app.records())


def test_a_busy_display_makes_replay_exit_1_after_the_bound(
    loan_app: LoanApp,
) -> None:
    from mmcli.desktop.display import display_lock

    _record_loan(loan_app)
    with display_lock(wait=0):
        started = time.monotonic()
        result = mm("--lock-wait", "1", "replay", "loan", "--no-agent")
        waited = time.monotonic() - started
    assert result.returncode == 1
    assert f"(pid {os.getpid()})" in result.stderr and "waited 1s" in result.stderr
    assert waited < 30
    assert loan_app.records() == []
