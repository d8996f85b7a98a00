"""Input that reaches the display through no channel mm hooks (pynput), and a person's
demonstration: watched with the X RECORD extension, recorded from the events where it can
be, refused loudly where it cannot. Real Xvfb, the real example app, real XTEST input."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e

AGENT = Path(__file__).with_name("input_agent.py")


def fields(record: dict[str, object]) -> dict[str, str]:
    return {k: str(record[k]) for k in WANTED}


def input_agent(app: LoanApp, mode: str) -> list[str]:
    return [sys.executable, str(AGENT), mode, str(app.layout)]


@pytest.fixture(params=["bare", "openbox"])
def desktop(request: pytest.FixtureRequest, xdisplay: str) -> Iterator[str]:
    """The display as it is (no window manager), or with openbox managing windows."""
    if request.param == "bare":
        yield "bare"
        return
    if shutil.which("openbox") is None:
        pytest.skip("openbox not installed")
    wm = subprocess.Popen(["openbox", "--sm-disable"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while "_NET_SUPPORTING_WM_CHECK(WINDOW)" not in _root_props():
            if wm.poll() is not None or time.monotonic() > deadline:
                pytest.fail("openbox did not start")
            time.sleep(0.1)
        yield "openbox"
    finally:
        wm.terminate()
        wm.wait(timeout=10)
        # A later start must not take a stale property for a running window manager.
        subprocess.run(["xprop", "-root", "-remove", "_NET_SUPPORTING_WM_CHECK"], check=False)


def _root_props() -> str:
    return subprocess.run(["xprop", "-root"], capture_output=True, text=True).stdout


def test_an_agent_acting_through_pynput_fails_loudly_and_nothing_is_saved(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    name_field = loan_app.center("Name")
    result = mm("record", "loan", "--observe", "0", "--", *input_agent(loan_app, "pynput"))
    assert result.returncode == 1, result.stderr
    assert "acted through a channel mm does not record" in result.stderr
    assert f"a click at {name_field} (button 1)" in result.stderr
    assert "--record-input" in result.stderr
    assert "without performing any action" not in result.stderr
    assert not (isolated_store / "loan.toml").exists()


def test_pynput_agent_is_recorded_from_the_display_input_and_replays(
    loan_app: LoanApp, isolated_store: Path, desktop: str
) -> None:
    loan_app.start()
    result = mm(
        "record",
        "loan",
        "--record-input",
        "--observe",
        "0",
        "--param",
        "name=John Smith",
        "--",
        *input_agent(loan_app, "pynput"),
    )
    assert result.returncode == 0, result.stderr
    assert "from the display's input" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    toml = (isolated_store / "loan.toml").read_text()
    assert "{{name}}" in toml and "John Smith" not in toml

    loan_app.out.unlink()
    loan_app.start()
    replayed = mm("replay", "loan", "--no-agent", "--param", "name=Jane Doe")
    assert replayed.returncode == 0, replayed.stderr
    assert [fields(r) for r in loan_app.records()] == [{**WANTED, "name": "Jane Doe"}]


@pytest.mark.parametrize(
    ("mode", "seen"),
    [
        ("hscroll", "a horizontal scroll at"),
        ("pynput-type", "a key press (a character) sent to a window with XSendEvent"),
    ],
)
def test_input_mm_cannot_record_fails_even_when_recording_from_input(
    loan_app: LoanApp, isolated_store: Path, mode: str, seen: str
) -> None:
    loan_app.start()
    result = mm(
        "record", "loan", "--record-input", "--observe", "0", "--",
        *input_agent(loan_app, mode),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert seen in result.stderr
    assert "nothing was saved" in result.stderr
    assert not (isolated_store / "loan.toml").exists()


def xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=30)


def test_a_demonstration_is_recorded_until_the_stop_chord_and_replays(
    loan_app: LoanApp, isolated_store: Path, desktop: str
) -> None:
    loan_app.start()
    at = {label: loan_app.center(label) for label in ("Name", "Email", "Amount", "Auto", "Submit")}
    demo = subprocess.Popen(
        [sys.executable, "-m", "mmcli", "record", "loan", "--demo", "--observe", "0",
         "--param", "name=John Smith"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
    )  # fmt: skip
    assert demo.stderr is not None
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(demo.stderr or []), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while not any("Ctrl+Alt+End" in line for line in said):
        if demo.poll() is not None or time.monotonic() > deadline:
            demo.kill()
            pytest.fail("mm record --demo did not say how to stop: " + "".join(said))
        time.sleep(0.05)

    def person_clicks(label: str) -> None:
        x, y = at[label]
        xdotool("mousemove", str(x), str(y))
        time.sleep(0.3)
        xdotool("click", "1")
        time.sleep(0.5)

    for label, text in (
        ("Name", WANTED["name"]),
        ("Email", WANTED["email"]),
        ("Amount", WANTED["amount"]),
    ):
        person_clicks(label)
        xdotool("type", "--delay", "20", text)
        time.sleep(0.5)
    person_clicks("Auto")
    person_clicks("Submit")
    xdotool("key", "ctrl+alt+End")
    demo.wait(timeout=60)
    reader.join(timeout=10)
    sys.stderr.write("".join(said))
    assert demo.returncode == 0, "".join(said)
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    doc = tomllib.loads((isolated_store / "loan.toml").read_text())
    actions = [step["action"] for step in doc["steps"]]
    assert [a["kind"] for a in actions] == ["click", "type"] * 3 + ["click", "click"]
    assert [a.get("text") for a in actions if a["kind"] == "type"] == [
        "{{name}}",
        WANTED["email"],
        WANTED["amount"],
    ]  # the stop chord is not a step; the param's value became its placeholder
    assert doc.get("command", []) == []

    loan_app.out.unlink()
    loan_app.start()
    replayed = mm("replay", "loan", "--param", "name=Jane Doe")  # no command: no agent
    assert replayed.returncode == 0, replayed.stderr
    assert [fields(r) for r in loan_app.records()] == [{**WANTED, "name": "Jane Doe"}]


def test_demo_with_an_agent_command_is_a_usage_error(isolated_store: Path) -> None:
    result = mm("record", "loan", "--demo", "--", "echo", "hi")
    assert result.returncode == 2
    assert "--demo" in result.stderr
    result = mm("record", "loan", "--demo", "--record-input")
    assert result.returncode == 2
    assert "not --demo" in result.stderr
    result = mm("record", "loan")
    assert result.returncode == 2
    assert "--demo" in result.stderr


def test_a_heal_through_pynput_is_not_reported_healed(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    recorded = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert recorded.returncode == 0, recorded.stderr
    before = (isolated_store / "loan.toml").read_text()
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    agent = shlex.join(input_agent(loan_app, "pynput"))
    healed = mm("replay", "loan", "--timeout", "2", "--agent", agent, "--json")
    # The agent did the task; what it did could not be learned: done, not saved (exit 5).
    assert healed.returncode == 5, healed.stderr
    assert "acted through a channel mm does not record" in healed.stderr
    assert '"outcome": "healed"' not in healed.stdout
    assert (isolated_store / "loan.toml").read_text() == before  # nothing learned, nothing saved


def test_a_heal_through_pynput_is_recorded_with_record_input(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    recorded = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert recorded.returncode == 0, recorded.stderr
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    agent = shlex.join(input_agent(loan_app, "pynput"))
    healed = mm("replay", "loan", "--timeout", "2", "--agent", agent, "--record-input", "--json")
    assert healed.returncode == 0, healed.stderr
    assert '"outcome": "healed"' in healed.stdout
    assert "from the display's input" in healed.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    again = mm("replay", "loan", "--no-agent", "--json")
    assert again.returncode == 0, again.stderr
    assert '"outcome": "from-memory"' in again.stdout
    assert [fields(r) for r in loan_app.records()] == [WANTED]
