"""Record the example agent on the real example app, replay without it, diverge, heal.
Everything is real: Xvfb, Tk, pyautogui input, mss screenshots, `mm` in a subprocess."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mmcli.store.recordings import Store
from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def fields(record: dict[str, object]) -> dict[str, str]:
    return {k: str(record[k]) for k in WANTED}


def record_loan(app: LoanApp, counter: Path | None = None, name: str = "loan") -> None:
    app.start()
    result = mm("record", name, "--observe", "0.5", "--", *agent_command(app, counter))
    assert result.returncode == 0, result.stderr
    assert "recorded" in result.stderr
    assert "recorded step 1: click" in result.stderr  # numbered from 1, as replay does
    assert "recorded step 0" not in result.stderr
    assert [fields(r) for r in app.records()] == [WANTED]


def test_record_then_replay_without_the_agent(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    counter = tmp_path / "agent-starts"
    record_loan(loan_app, counter)
    assert counter.read_text().count("started") == 1
    assert (isolated_store / "loan.toml").exists()

    loan_app.out.unlink()
    loan_app.start()
    result = mm("replay", "loan", "--no-agent", "--json")
    assert result.returncode == 0, result.stderr
    assert '"outcome": "from-memory"' in result.stdout
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    assert counter.read_text().count("started") == 1  # the agent did not run


def test_unexpected_popup_diverges_then_the_agent_heals(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    counter = tmp_path / "agent-starts"
    record_loan(loan_app, counter)
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json")
    assert result.returncode == 3, result.stderr
    assert "diverged" in result.stderr and "step 1" in result.stderr
    assert json.loads(result.stdout)["divergence"]["step"] == 1  # as progress numbers it
    assert loan_app.records() == []
    shown = json.loads(mm("show", "loan", "--json").stdout)["divergences"]
    assert shown[0]["step"] == 1 and "region" in shown[0]["reason"]
    assert Path(shown[0]["live"]).is_file() and Path(shown[0]["recorded"]).is_file()

    result = mm("replay", "loan", "--timeout", "2")  # the recorded agent is allowed
    assert result.returncode == 0, result.stderr
    assert "healed" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]  # submitted exactly once
    assert counter.read_text().count("started") == 2

    # Run 2 on the same drifted app: the healed branch is muscle memory now.
    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert "done from memory" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    assert counter.read_text().count("started") == 2  # zero agent runs


def test_recorded_with_john_replays_with_jane(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    counter = tmp_path / "agent-starts"
    loan_app.start()
    result = mm(
        "record", "loan", "--param", "name=John Smith", "--observe", "0", "--",
        *agent_command(loan_app, counter),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "{{name}}" in (isolated_store / "loan.toml").read_text()
    loan_app.out.unlink()

    loan_app.start()
    result = mm("replay", "loan", "--no-agent", "--param", "name=Jane Doe")
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [{**WANTED, "name": "Jane Doe"}]
    assert counter.read_text().count("started") == 1  # the agent did not run

    result = mm("replay", "loan", "--no-agent")
    assert result.returncode == 2 and "--param name=" in result.stderr


@pytest.mark.parametrize("position", ["100,102", "100,103"])
def test_the_status_lines_echo_of_a_longer_name_is_masked_off_the_fields_grid_offset(
    loan_app: LoanApp, isolated_store: Path, position: str
) -> None:
    """With the window at y = 102 or 103 the status line's "Saved application for John
    Smith" stands off the name field's offset of the 4 px grid the screens are compared
    on: its downscaled picture there is not the field's, and the longer name diverged
    after Submit (exit 3) until the echo was looked for at full resolution."""
    loan_app.start("--position", position)
    result = mm(
        "record", "loan", "--param", "name=John Smith", "--observe", "0", "--",
        *agent_command(loan_app),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    layout = json.loads(loan_app.layout.read_text())
    (status,) = [w for w in layout["windows"][0]["widgets"] if w.get("id") == "status"]
    loan_app.out.unlink()
    recording = Store(isolated_store).load("loan")
    outcome = recording.steps[-1].outcome
    assert outcome is not None
    echo = [m for m in outcome.fingerprint.masks if m.y >= status["y"] - 8 and m.h <= 32]
    assert echo and all(m.x >= status["x"] + 100 for m in echo), outcome.fingerprint.masks

    loan_app.start("--position", position)
    result = mm("replay", "loan", "--no-agent", "--param", "name=Bartholomew Jones")
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [{**WANTED, "name": "Bartholomew Jones"}]


def test_failing_agent_saves_nothing(loan_app: LoanApp, isolated_store: Path) -> None:
    loan_app.start("--variant", "other")  # the agent cannot do its task here: exits 3
    result = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert result.returncode == 3
    assert "not saved" in result.stderr
    assert not (isolated_store / "loan.toml").exists()


def test_agent_exit_1_is_passed_through(xdisplay: str, isolated_store: Path) -> None:
    result = mm("record", "x", "--observe", "0", "--", "sh", "-c", "exit 1")
    assert result.returncode == 1
    assert not (isolated_store / "x.toml").exists()


def test_existing_recording_is_not_overwritten(loan_app: LoanApp, isolated_store: Path) -> None:
    record_loan(loan_app)
    before = (isolated_store / "loan.toml").read_bytes()
    result = mm("record", "loan", "--", "true")
    assert result.returncode == 1
    assert "--overwrite" in result.stderr
    assert (isolated_store / "loan.toml").read_bytes() == before


def test_mm_act_records_an_agent_in_any_language(
    loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    """A shell agent that acts only through `mm act`, with coordinates from the layout."""
    loan_app.start()

    def center(label: str) -> str:
        x, y = loan_app.center(label)
        return f"{x} {y}"

    script = tmp_path / "agent.sh"
    script.write_text(f"""set -e
mm() {{ "{sys.executable}" -m mmcli "$@"; }}
mm act click {center("Name")}
mm act type 'Ada Lovelace'
mm act click {center("Amount")}
mm act type 99
mm act click {center("Home")}
mm act click {center("Submit")}
sleep 0.5
""")
    result = mm("record", "shell", "--observe", "0", "--", "sh", str(script))
    assert result.returncode == 0, result.stderr
    shown = mm("show", "shell")
    assert "type 'Ada Lovelace'" in shown.stdout
    assert len([line for line in shown.stdout.splitlines() if ". " in line]) == 6


def test_secret_value_is_written_nowhere(
    loan_app: LoanApp, isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cret-mail@example.com"
    loan_app.start()
    agent = agent_command(loan_app, email=secret)
    recorded = mm("record", "loan", "--secret", f"email={secret}", "--observe", "0", "--", *agent)
    assert recorded.returncode == 0, recorded.stderr
    assert loan_app.records()[-1]["email"] == secret

    loan_app.out.unlink()
    loan_app.start()
    monkeypatch.setenv("MM_SECRET_EMAIL", secret)
    replayed = mm("replay", "loan", "--secret", "email", "--no-agent", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert loan_app.records()[-1]["email"] == secret  # typed from the secret at replay
    missing = mm("replay", "loan", "--no-agent")
    assert missing.returncode == 2 and "--secret email" in missing.stderr

    outputs = [recorded.stdout, recorded.stderr, replayed.stdout, replayed.stderr]
    assert not [o for o in outputs if secret in o]
    files = [p for p in isolated_store.rglob("*") if p.is_file()]
    assert any(p.suffix == ".toml" for p in files) and any(p.suffix == ".jsonl" for p in files)
    leaks = [p for p in files if secret.encode() in p.read_bytes()]
    assert leaks == []
    assert "{{email}}" in (isolated_store / "loan.toml").read_text()


def test_a_failure_after_the_last_click_is_not_done(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    counter = tmp_path / "agent-starts"
    record_loan(loan_app, counter)
    loan_app.out.unlink()

    loan_app.start("--fail-upload")  # every screen as recorded until after the last click
    result = mm("replay", "loan", "--no-agent", "--json", "--timeout", "2")
    assert result.returncode == 6, result.stderr
    assert json.loads(result.stdout)["outcome"] == "outcome-differs"
    assert "outcome" in result.stderr and "done" not in result.stderr
    assert loan_app.records() == []

    loan_app.start("--fail-upload")  # the agent allowed: it is not called after the fact
    result = mm("replay", "loan", "--timeout", "2")
    assert result.returncode == 6, result.stderr
    assert counter.read_text().count("started") == 1


def test_a_heal_that_ends_elsewhere_waits_for_approval(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    counter = tmp_path / "agent-starts"
    record_loan(loan_app, counter)
    loan_app.out.unlink()

    loan_app.start("--popup-at-start", "--fail-upload")
    result = mm("replay", "loan", "--timeout", "2", "--json")
    assert result.returncode == 6, result.stderr
    report = json.loads(result.stdout)
    assert report["outcome"] == "healed-pending"
    branch = report["pending_branch"]
    assert counter.read_text().count("started") == 2
    shown = json.loads(mm("show", "loan", "--json").stdout)
    assert [s["id"] for s in shown["steps"] if s.get("pending")] == [branch]

    # The same popup, the upload working: the pending branch is not replayed unattended.
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2")
    assert result.returncode == 3, result.stderr
    assert f"mm approve loan {branch}" in result.stderr
    assert loan_app.records() == []

    approved = mm("approve", "loan", str(branch))
    assert approved.returncode == 0, approved.stderr
    again = mm("approve", "loan")
    assert again.returncode == 1 and "no branch pending" in again.stderr

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert "done from memory" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    assert counter.read_text().count("started") == 2


def test_json_answers_when_the_agent_is_not_found(xdisplay: str, isolated_store: Path) -> None:
    result = mm("replay", "new", "--agent", "/nonexistent/agent", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data == {
        "outcome": "error",
        "exit_code": 1,
        "error": "agent command not found: '/nonexistent/agent'",
        "name": "new",
    }
    assert "mm: error: agent command not found" in result.stderr


@pytest.mark.parametrize("stream", ["2>&1", "--json"])
def test_a_closed_output_never_stops_a_replay_mid_task(
    loan_app: LoanApp, isolated_store: Path, stream: str
) -> None:
    """`mm replay loan 2>&1 | head -1`: the reader is gone after one line; the replay
    still finishes the task and writes its history line."""
    record_loan(loan_app)
    loan_app.out.unlink()
    loan_app.start()
    command = shlex.join([sys.executable, "-m", "mmcli", "replay", "loan", "--no-agent"])
    if stream == "--json":  # stdout closed first, stderr after the first line
        command = f"{{ {command} --json | head -c 0; }} 2>&1 | head -1"
    else:
        command = f"{command} 2>&1 | head -1"
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=180
    )
    assert result.stdout.count("\n") == 1, result.stdout
    assert [fields(r) for r in loan_app.records()] == [WANTED]  # filed whole, once
    history = Store(isolated_store).runs.read("loan")
    assert [h["outcome"] for h in history] == ["from-memory"]


def test_an_empty_desktop_is_said_as_such(loan_app: LoanApp, isolated_store: Path) -> None:
    """The app is not running: replay says no window of it is on the screen, not that
    something covers the click target."""
    record_loan(loan_app)
    loan_app.stop()
    result = mm("replay", "loan", "--no-agent", "--timeout", "1", "--json")
    assert result.returncode == 3, result.stderr
    reason = json.loads(result.stdout)["divergence"]["reason"]
    assert reason.startswith(
        "No window of the recorded app is on the screen (it expected 'Acme Loan Intake')"
    ), reason
    assert "covers the click target" not in result.stderr


def test_after_a_divergence_the_pointer_is_where_replay_found_it(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    """Replay parks the pointer on the recorded target to compare hover effects; on a
    divergence it puts it back: the agent's first screenshot shows the screen as found
    (no tooltip under a pointer replay moved), and so does the person after a refusal."""
    record_loan(loan_app)
    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    subprocess.run(["xdotool", "mousemove", "--sync", "700", "520"], check=True)
    refused = mm("replay", "loan", "--no-agent", "--timeout", "1")
    assert refused.returncode == 3, refused.stderr
    where = subprocess.run(["xdotool", "getmouselocation", "--shell"], capture_output=True,
                           text=True, check=True).stdout  # fmt: skip
    assert "X=700\nY=520\n" in where

    seen = tmp_path / "pointer"
    agent = f"sh -c {shlex.quote(f'xdotool getmouselocation --shell > {seen}; exit 1')}"
    failed = mm("replay", "loan", "--timeout", "1", "--agent", agent)
    assert failed.returncode == 4, failed.stderr
    assert "X=700\nY=520\n" in seen.read_text()
