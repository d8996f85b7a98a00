"""The reference agent's xdotool command lines, recorded at about their bare pace.

`xdotool mousemove --sync X Y` waits until the pointer has moved, for up to 15 s: a
recorder that leaves the pointer on the target after keeping the screen before the
action makes each such line wait out that timeout."""

from __future__ import annotations

import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from tests.e2e.conftest import WANTED, LoanApp, mm

pytestmark = pytest.mark.e2e

AGENT_SECONDS = 5.0
"""The agent's run under `mm record`; bare it takes about 1 s, one stall takes 15 s."""
TARGETS = ("Name", "Email", "Amount", "Auto", "Submit")


def reference_agent(app: LoanApp, elapsed: Path) -> str:
    """The loan form filled through the command lines the reference agent's tool runs
    (its mouse_move, left_click with and without a point, type in chunks,
    left_mouse_down/up, key, double_click, cursor_position)."""
    at = {label: "{} {}".format(*app.center(label)) for label in TARGETS}
    return f"""set -e
start=$EPOCHREALTIME
xdotool mousemove --sync {at["Name"]}
xdotool click 1
xdotool type --delay 12 -- "John "
xdotool type --delay 12 -- "Smith"
xdotool mousemove --sync {at["Email"]} click 1
xdotool type --delay 12 -- "john@example.com"
xdotool mousemove {at["Amount"]}
xdotool mousedown 1
xdotool mouseup 1
xdotool type --delay 12 -- "1200"
xdotool key -- End
xdotool mousemove --sync {at["Auto"]} click --repeat 2 --delay 10 1
xdotool getmouselocation --shell >/dev/null
xdotool mousemove --sync {at["Submit"]} click 1
echo "$start $EPOCHREALTIME" > {elapsed}
"""


def test_reference_xdotool_lines_are_recorded_without_waiting_out_sync(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    loan_app.start()
    # xdotool itself waits out `mousemove --sync`'s 15 s when the pointer already is on
    # the destination (measured: with no mm at all); an earlier test may leave it there.
    subprocess.run(["xdotool", "mousemove", "3", "500"], check=True)
    elapsed = tmp_path / "elapsed"
    script = tmp_path / "agent.sh"
    script.write_text(reference_agent(loan_app, elapsed))
    started = time.monotonic()
    result = mm("record", "ref", "--observe", "0", "--", "bash", str(script))
    total = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    start, end = (float(t) for t in elapsed.read_text().split())
    assert end - start < AGENT_SECONDS, f"the agent took {end - start:.1f} s under mm record"
    assert total < AGENT_SECONDS + 5, f"mm record took {total:.1f} s"
    assert [{k: str(r[k]) for k in WANTED} for r in loan_app.records()] == [WANTED]

    doc = tomllib.loads((isolated_store / "ref.toml").read_text())
    steps = [s["action"] for s in doc["steps"]]
    point = {label: loan_app.center(label) for label in TARGETS}
    assert [(a["kind"], a.get("x"), a.get("y")) for a in steps] == [
        ("move", *point["Name"]),
        ("click", *point["Name"]),
        ("type", None, None),
        ("click", *point["Email"]),
        ("type", None, None),
        ("move", *point["Amount"]),
        ("click", *point["Amount"]),
        ("type", None, None),
        ("press", None, None),
        ("click", *point["Auto"]),
        ("click", *point["Submit"]),
    ]
    assert [a["text"] for a in steps if a["kind"] == "type"] == [
        "John Smith",
        "john@example.com",
        "1200",
    ]
    assert steps[8]["keys"] == ["end"] and steps[9].get("clicks") == 2
