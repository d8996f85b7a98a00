"""An animation far from the task: a spinner in another window, redrawn 50 times a
second, the whole time. The recording learns its region as changing alone (masked in
every check); the X server's change reports (DAMAGE) from inside that region then do
not keep the screen from being still, in the recorder's captures or in replay's checks.
Only what changes again is learned so: an answer that comes late, or the app finishing
its start while the recording begins, comes once.

Without that, every check of the replay waited out its limit for a still screen that
never came, and the outcome after the last step was never judged on a still screen:
exit 6 after about 11 s, where the replay is done from memory in about 1 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e

SPINNER = """
import sys, tkinter as tk
root = tk.Tk()
root.title("spinner")
root.geometry(f"120x60+{sys.argv[1]}+{sys.argv[2]}")
canvas = tk.Canvas(root, width=120, height=60, bg="white", highlightthickness=0)
canvas.pack()
bar = canvas.create_rectangle(0, 20, 20, 40, fill="#2050c0", outline="")
x = [0]
def step():
    x[0] = (x[0] + 4) % 100
    canvas.coords(bar, x[0], 20, x[0] + 20, 40)
    root.after(20, step)
step()
root.mainloop()
"""


@pytest.fixture
def spinner(xdisplay: str) -> Iterator[subprocess.Popen[bytes]]:
    """The spinner in the bottom-right corner of the screen, far from the loan form."""
    size = subprocess.run(
        ["xdotool", "getdisplaygeometry"], capture_output=True, text=True, check=True
    ).stdout.split()
    width, height = int(size[0]), int(size[1])
    proc = subprocess.Popen([sys.executable, "-c", SPINNER, str(width - 200), str(height - 150)])
    try:
        deadline = time.monotonic() + 20
        while not subprocess.run(["xdotool", "search", "--name", "^spinner$"],
                                 capture_output=True).stdout:  # fmt: skip
            assert proc.poll() is None and time.monotonic() < deadline, "no spinner"
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_animation_far_from_the_task_does_not_hold_replay_up(
    loan_app: LoanApp, spinner: subprocess.Popen[bytes], isolated_store: Path
) -> None:
    loan_app.start()
    recorded = mm("record", "loan", "--observe", "1", "--", *agent_command(loan_app))
    assert recorded.returncode == 0, recorded.stderr
    assert "changing on their own (left out of checks)" in recorded.stderr
    loan_app.out.unlink()

    loan_app.start()
    started = time.monotonic()
    result = mm("replay", "loan", "--no-agent", "--timeout", "5", "--json")
    seconds = time.monotonic() - started
    assert result.returncode == 0, f"{seconds:.1f}s\n{result.stderr}"
    assert json.loads(result.stdout)["outcome"] == "from-memory"
    assert "waiting for the screen" not in result.stderr
    records = loan_app.records()
    assert len(records) == 1
    assert {k: str(records[0][k]) for k in WANTED} == WANTED


def test_a_caret_blinking_at_the_end_does_not_hold_the_recording_up(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    """The form ends with the focus in a field whose caret blinks: the outcome is kept
    once nothing else has changed for its quiet time, not at the limit (where the
    recorder says the screen was still changing)."""
    loan_app.start()
    recorded = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert recorded.returncode == 0, recorded.stderr
    assert "still changing" not in recorded.stderr
    assert len(loan_app.records()) == 1


def test_a_spinner_is_learned_between_the_agent_s_actions(
    loan_app: LoanApp, spinner: subprocess.Popen[bytes], isolated_store: Path
) -> None:
    """No idle watch first: the spinner is seen changing again and again while the agent
    thinks (2.5 s before each action), and learned then."""
    loan_app.start()
    agent = agent_command(loan_app, think=2.5)
    recorded = mm("record", "loan", "--observe", "0", "--", *agent)
    assert recorded.returncode == 0, recorded.stderr
    assert "changing on their own (left out of checks)" in recorded.stderr
    loan_app.out.unlink()

    loan_app.start()
    result = mm("replay", "loan", "--no-agent", "--timeout", "5", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "from-memory"


def test_a_late_answer_is_not_learned_as_changing_on_its_own(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    """Submit answers 1.5 s late (the status line, the confirmation) while the agent
    thinks 1.5 s before each action: seen changing once between two actions, it is the
    answer, not something that changes alone. Learned as changing alone, the
    confirmation's place was masked in every check, and a Notice dialog there at the
    next replay's start was clicked under."""
    loan_app.start("--slow-submit", "1.5")
    agent = agent_command(loan_app, think=1.5)
    recorded = mm("record", "loan", "--observe", "0", "--", *agent)
    assert recorded.returncode == 0, recorded.stderr
    assert "changing on their own" not in recorded.stderr
    loan_app.out.unlink()

    loan_app.start("--slow-submit", "1.5", "--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json")
    assert result.returncode == 3, result.stderr
    assert json.loads(result.stdout)["divergence"]["step"] == 1
    assert loan_app.records() == []


def test_a_box_closing_as_the_recording_starts_is_not_learned(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    """The app is still finishing its start when the recording begins: its "Connecting"
    box closes itself during the idle watch. Seen changing once, it is not learned as
    changing alone. Learned so, its place (where dialogs open) was masked in every check,
    and a Notice dialog there at the next replay's start was clicked under."""
    loan_app.start("--connecting", "1.2")
    recorded = mm("record", "loan", "--observe", "2", "--", *agent_command(loan_app))
    assert recorded.returncode == 0, recorded.stderr
    assert "changing on their own" not in recorded.stderr
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json")
    assert result.returncode == 3, result.stderr
    assert json.loads(result.stdout)["divergence"]["step"] == 1
    assert loan_app.records() == []
