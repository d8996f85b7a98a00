"""Recording an agent that acts through a VNC client of its own (vncdotool), unmodified:
the real `mm record --display vnc://...` gives it an endpoint (`MM_VNC_ADDRESS`) in
front of a real x11vnc serving Xvfb; replay, refusal, heal by the same agent through the
same kind of endpoint, and replay from memory, all over VNC."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from examples.vncserver import VncServer
from tests.e2e.conftest import PASSWORD, WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def fields(record: dict[str, object]) -> dict[str, str]:
    return {k: str(record[k]) for k in WANTED}


def starts(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def test_an_agent_started_at_once_is_not_held_behind_the_connection_s_first_screens(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path
) -> None:
    """`--observe 0`: the agent starts as soon as mm has its VNC connection. Its first
    click was held while the connection's first screens were waited out (1.5 s), and the
    example agent, which does an action again after 2 s without an answer, typed its name
    into a field not focused yet, again and again, and gave up (exit 3, 3 of 3 times)."""
    loan_app.start()
    agent = agent_command(loan_app, via="vnc")
    result = mm("record", "loan", "--observe", "0", "--display", vnc_locked.address, "--", *agent)
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]


def test_an_agent_on_its_own_vnc_client_is_recorded_replayed_refused_and_healed(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    display = ["--display", vnc_locked.address]
    counter = tmp_path / "agent-starts"
    loan_app.start()
    agent = agent_command(loan_app, counter, via="vnc")
    result = mm("record", "loan", "--observe", "0.5", *display, "--", *agent)
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    assert "recorded step 2: type 'John Smith'" in result.stderr
    assert "MM_VNC_ADDRESS" in result.stderr
    document = (isolated_store / "loan.toml").read_text()
    assert PASSWORD not in document and PASSWORD not in result.stdout + result.stderr
    shown = json.loads(mm("show", "loan", "--json").stdout)
    assert [s["action"].split()[0] for s in shown["steps"]] == ["click", "type"] * 3 + ["click"] * 3

    loan_app.out.unlink()
    loan_app.start()
    result = mm("replay", "loan", "--no-agent", *display)
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]  # the same result

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", *display)
    assert result.returncode == 3, result.stderr
    assert loan_app.records() == []  # refused: nothing done

    assert starts(counter) == 1
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--timeout", "2", *display)  # the recorded agent heals
    assert result.returncode == 0, result.stderr
    assert starts(counter) == 2
    assert [fields(r) for r in loan_app.records()] == [WANTED]

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--timeout", "2", "--json", *display)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "from-memory"
    assert starts(counter) == 2  # no agent run: the heal was learned
    assert [fields(r) for r in loan_app.records()] == [WANTED]


AGENT = """
import os, socket, struct, sys, time
from mmcli.backends.rfb import RFBClient
from mmcli.errors import DisplayError

host, port = os.environ["MM_VNC_ADDRESS"].rsplit(":", 1)
try:
    RFBClient(host, int(port), "not-it!!")
    sys.exit("a wrong password was let in")
except DisplayError as e:
    print("refused:", e, file=sys.stderr)
try:
    RFBClient(host, int(port), os.environ["MM_VNC_PASSWORD_REAL"])
    sys.exit("the real server's password was let in")
except DisplayError:
    pass
client = RFBClient(host, int(port), os.environ["MM_VNC_PASSWORD"])
client.wait_update(0, 10)
{action}
time.sleep(1)
client.close()
"""


def run_agent_script(
    server: VncServer, tmp_path: Path, action: str, *args: str
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "agent.py"
    script.write_text(AGENT.format(action=textwrap.dedent(action)))
    return mm(
        "record", "raw", "--observe", "0", "--display", server.address, *args,
        "--", "env", f"MM_VNC_PASSWORD_REAL={PASSWORD}", sys.executable, str(script),
    )  # fmt: skip


def test_the_endpoint_wants_the_runs_password_and_fails_input_it_cannot_record(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    loan_app.start()
    x, y = loan_app.center("Name")
    # QEMU's extended key event (message 255): never enabled, never passed on.
    sent = f"""
    client.pointer_event({x}, {y}, 1)
    client.pointer_event({x}, {y}, 0)
    client._send(struct.pack(">BBHII", 255, 0, 1, 0x61, 30))
    """
    result = run_agent_script(vnc_locked, tmp_path, sent)
    assert result.returncode == 1, result.stderr
    assert "refused: VNC server" in result.stderr  # the wrong password: no way in
    assert "RFB message type 255, which mm cannot record" in result.stderr
    assert "nothing was saved" in result.stderr
    assert not (isolated_store / "raw.toml").exists()

    typed = """
    for key in (0xFE50, 0x61):  # a dead key, then 'a'
        client.key_event(key, True)
        client.key_event(key, False)
    """
    loan_app.start()
    result = run_agent_script(vnc_locked, tmp_path, typed)
    assert result.returncode == 1, result.stderr
    assert "unnamed key" in result.stderr and "nothing was saved" in result.stderr
    assert not (isolated_store / "raw.toml").exists()


def test_a_server_that_drops_while_the_agent_is_connected_saves_nothing(
    xdisplay: str,
    loan_app: LoanApp,
    isolated_store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loan_app.start()
    x, y = loan_app.center("Name")
    monkeypatch.setenv("MM_VNC_PASSWORD", PASSWORD)
    with VncServer(xdisplay, PASSWORD) as server:
        assert server.process is not None
        stop = f"""
        client.pointer_event({x}, {y}, 1)
        client.pointer_event({x}, {y}, 0)
        time.sleep(1)
        os.kill({server.process.pid}, 9)
        time.sleep(1)
        """
        result = run_agent_script(server, tmp_path, stop)
    assert result.returncode == 1, result.stderr
    assert "nothing was saved" in result.stderr or "lost the VNC connection" in result.stderr
    assert not (isolated_store / "raw.toml").exists()


def test_a_second_click_on_what_the_first_one_uncovered_is_a_step_of_its_own(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    """An agent that reads a stale frame clicks a dialog's OK twice: the second click,
    within a double click's time and place, went to the form the first one uncovered.
    Kept as one double click, replay would send both at once and the second would meet
    the dialog; kept as two clicks, each is checked against the screen it went to."""
    loan_app.start("--popup-at-start")
    layout = json.loads(loan_app.layout.read_text())
    (ok,) = [w for win in layout["windows"] for w in win["widgets"] if w["label"] == "OK"]
    x, y = ok["x"] + ok["w"] // 2, ok["y"] + ok["h"] // 2
    twice = f"""
    client.pointer_event({x}, {y}, 0)
    time.sleep(0.3)
    for _ in range(2):
        client.pointer_event({x}, {y}, 1)
        client.pointer_event({x}, {y}, 0)
        time.sleep(0.03)  # before the server has sent the dialog's closing
    """
    result = run_agent_script(vnc_locked, tmp_path, twice)
    assert result.returncode == 0, result.stderr
    shown = json.loads(mm("show", "raw", "--json").stdout)
    assert [s["action"] for s in shown["steps"]] == [f"click at ({x}, {y})"] * 2
    first, second = tomllib.loads((isolated_store / "raw.toml").read_text())["steps"]
    assert first["effect"][2] >= 300 and first["effect"][3] >= 120  # the dialog went
    assert second["effect"][2] * second["effect"][3] <= 32 * 32  # a radio button was set
    shots = [(isolated_store / "raw" / s["thumbnail"]).read_bytes() for s in (first, second)]
    assert shots[0] != shots[1]  # the dialog, then the form


HEALER = """
import os, subprocess, sys, time
from mmcli.backends.rfb import RFBClient

host, port = os.environ["MM_VNC_ADDRESS"].rsplit(":", 1)
client = RFBClient(host, int(port), os.environ["MM_VNC_PASSWORD"])
client.wait_update(0, 10)
client.pointer_event({x}, {y}, 0)
time.sleep(0.3)
# The dialog's OK, then again once it has closed, as on a frame that still showed it:
# the form's "Auto" lies under the OK. (30 ms apart, the second click met the dialog in
# some runs and the form in others; replay rightly refused where the two differed.)
for _ in range(2):
    client.pointer_event({x}, {y}, 1)
    client.pointer_event({x}, {y}, 0)
    time.sleep(0.5)
client.close()
sys.exit(subprocess.call(sys.argv[1:]))  # the agent does the rest
"""


def test_a_heal_that_clicked_ok_twice_replays_from_memory(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    display = ["--display", vnc_locked.address]
    loan_app.start()
    agent = agent_command(loan_app, via="vnc")
    assert mm("record", "loan", "--observe", "0.5", *display, "--", *agent).returncode == 0

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    layout = json.loads(loan_app.layout.read_text())
    (ok,) = [w for win in layout["windows"] for w in win["widgets"] if w["label"] == "OK"]
    healer = tmp_path / "healer.py"
    healer.write_text(HEALER.format(x=ok["x"] + ok["w"] // 2, y=ok["y"] + ok["h"] // 2))
    command = " ".join(shlex.quote(a) for a in [sys.executable, str(healer), *agent])
    result = mm("replay", "loan", "--agent", command, "--timeout", "2", *display)
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    assert "recorded step 2: click at" in result.stderr  # the second click, a step

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json", *display)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "from-memory"
    assert [fields(r) for r in loan_app.records()] == [WANTED]


def test_a_dialog_opened_before_replay_connects_is_seen_at_the_first_check(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path
) -> None:
    """x11vnc, connected to right after its last client left, first sends the screen it
    kept from then: the form without the dialog opened since (away from step 1's target),
    for about 1 s. Replay's first check waits for the server to catch up: it sees the
    dialog and refuses; nothing is clicked under it."""
    display = ["--display", vnc_locked.address]
    loan_app.start()
    agent = agent_command(loan_app, via="vnc")
    assert mm("record", "loan", "--observe", "0.5", *display, "--", *agent).returncode == 0

    loan_app.out.unlink()
    loan_app.start("--popup-at-start", "--dialog-at", "430,305")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json", *display)
    assert result.returncode == 3, result.stderr
    assert json.loads(result.stdout)["divergence"]["step"] == 1, result.stderr
    assert "step 1/9" not in result.stderr  # the Name field was never clicked


def test_an_agent_giving_local_x_input_on_a_vnc_display_is_not_recorded(
    vnc: VncServer, loan_app: LoanApp, isolated_store: Path, tmp_path: Path
) -> None:
    """The agent runs xdotool on a display of its own: its clicks and keys never reach
    the VNC desktop the form is on. Each is refused as it is reported (the agent sees the
    error), and the run is not saved whatever the agent's exit code."""
    from mmcli.desktop.display import VirtualDisplay

    loan_app.start()
    x, y = loan_app.center("Name")
    with VirtualDisplay() as elsewhere:
        agent = f"DISPLAY={elsewhere.display} xdotool mousemove {x} {y} click 1 type Ada; exit 0"
        result = mm(
            "record", "ada", "--observe", "0", "--display", vnc.address, "--", "sh", "-c", agent
        )
    assert result.returncode == 1, result.stderr
    assert "input on the local X display (pyautogui or xdotool) on a VNC desktop" in result.stderr
    assert "nothing was saved" in result.stderr
    assert not (isolated_store / "ada.toml").exists()
    assert loan_app.records() == []


def test_the_readme_s_vncdo_line_records_as_written(
    vnc_locked: VncServer,
    loan_app: LoanApp,
    isolated_store: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """README's VNC client line (vncdotool's `vncdo` wants `HOST::PORT`), with its server
    address made this test's: the click and the typed text are the recording."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")  # vncdo
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    line = next(
        line
        for line in readme.splitlines()
        if line.startswith("mm record hello ") and "vncdo" in line
    )
    words = shlex.split(line.replace("vnc://10.0.0.5:5900", vnc_locked.address))
    loan_app.start()
    result = mm(*words[1:])
    assert result.returncode == 0, result.stderr
    shown = json.loads(mm("show", "hello", "--json").stdout)
    assert [s["action"] for s in shown["steps"]] == ["click at (200, 150)", "type 'hello'"]
