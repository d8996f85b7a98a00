"""Over VNC: the RFB client against a real x11vnc serving Xvfb, and the real `mm` replaying,
over `--display vnc://...`, a recording made on the local X display."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from examples.vncserver import VncServer
from mmcli.backends.rfb import RFBClient
from mmcli.backends.vnc import VncBackend
from mmcli.backends.vncauth import des_encrypt_block
from mmcli.desktop.display import vnc_address
from mmcli.errors import DisplayError, DisplayLost
from mmcli.model import Action, ActionKind
from tests.e2e.conftest import PASSWORD, WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def test_des_known_answer() -> None:
    key, block = bytes.fromhex("133457799BBCDFF1"), bytes.fromhex("0123456789ABCDEF")
    assert des_encrypt_block(key, block).hex() == "85e813540f0ab405"


def test_client_sees_the_screen_and_its_changes(vnc: VncServer, loan_app: LoanApp) -> None:
    loan_app.start()
    backend = VncBackend(vnc_address(vnc.address) or pytest.fail("not a VNC address"))
    with backend:
        assert backend.size() == (1920, 1080)
        assert backend.windows() is None and backend.workarea() is None
        frame = backend.grab()
        x, y = loan_app.center("Name")
        assert frame.pixels[y, x, :3].tolist() == [255, 255, 255]  # the white entry field
        before = backend.changes()
        assert before is not None
        count = before.count
        since = time.monotonic()
        backend.perform(Action(ActionKind.CLICK, x=x, y=y))
        backend.perform(Action(ActionKind.TYPE, text="Zoë <x>"))
        backend.wait_change(since, 5)
        assert before.count > count  # the server's updates are change reports
        assert backend.settle(limit=5).still
        assert (backend.grab().small != frame.small).any()

        from mmcli.backends.x11 import X11Backend

        with X11Backend(
            os.environ["DISPLAY"]
        ) as local:  # the pointer moved by someone else: the server says
            local.move(300, 400)
            deadline = time.monotonic() + 5
            while backend.pointer() != (300, 400) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert backend.pointer() == (300, 400)
            backend.move(20, 30)  # mm's own move is not echoed: mm knows it
            assert backend.pointer() == (20, 30)
            deadline = time.monotonic() + 5
            while local.pointer() != (20, 30) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert local.pointer() == (20, 30)  # it reached the display
            time.sleep(0.3)
            assert backend.pointer() == (20, 30)


def test_password_is_asked_for_and_checked(
    vnc_locked: VncServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = vnc_locked.port
    client = RFBClient("127.0.0.1", port, PASSWORD)
    try:
        assert client.wait_update(0, 10) and (client.width, client.height) == (1920, 1080)
    finally:
        client.close()
    with pytest.raises(DisplayError, match="refused the password"):
        RFBClient("127.0.0.1", port, "wrong")
    with pytest.raises(DisplayError, match="MM_VNC_PASSWORD"):
        RFBClient("127.0.0.1", port, None)


def test_a_dropped_connection_reconnects_then_gives_up(xdisplay: str) -> None:
    server = VncServer(xdisplay).start()
    backend = VncBackend(vnc_address(server.address) or pytest.fail("not a VNC address"))
    try:
        port = server.port
        assert server.process is not None
        server.process.kill()  # the server restarts on the same port: one reconnect
        server.process.wait()
        server.process = None
        restarted = _restart_on(server, port)
        deadline = time.monotonic() + 5
        while backend._client.error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        backend.grab()
        assert backend.reconnects == 1
        restarted.stop()  # gone for good: bounded reconnects, then DisplayLost
        with pytest.raises(DisplayLost, match="lost the VNC connection"):
            for _ in range(50):
                backend.perform(Action(ActionKind.MOVE, x=10, y=10))
                time.sleep(0.05)
        assert backend.reconnects == 3
    finally:
        backend.close()
        server.stop()


def test_a_server_that_reports_changes_late_is_waited_for(xdisplay: str, loan_app: LoanApp) -> None:
    """x11vnc deferring its updates by 400 ms (a remote console that sends its screen
    late): the clicks teach the backend the server's lag (410-420 ms, measured; now and
    then a click's spot comes back at once, which the middle of five leaves aside), and
    after the next click the screen counts as still no sooner than that lag and a half.
    With the fixed 150 ms wait, it counted as still 150-180 ms after the click, before
    the server had sent what the click did. The next connection to the server starts
    from the lag the last one learned: its first click waits it too."""
    loan_app.start()
    with VncServer(xdisplay, extra=["-defer", "400"]) as server:
        backend = VncBackend(vnc_address(server.address) or pytest.fail("not a VNC address"))
        with backend:
            backend.grab()  # (once the connection's first screens are past)
            for label in ("Name", "Email", "Amount", "Name", "Email"):
                x, y = loan_app.center(label)
                since = time.monotonic()
                backend.perform(Action(ActionKind.CLICK, x=x, y=y))
                backend.wait_change(since, 5)
                backend.settle(limit=5)
            lag = backend.lag.after_input()
            assert lag > 1.5 * 0.3, backend.lag.lags
            x, y = loan_app.center("Amount")
            backend.perform(Action(ActionKind.CLICK, x=x, y=y))
            clicked = backend.input_at
            settled = backend.settle(limit=5)
            assert settled.still
            assert settled.at - clicked >= lag
            assert backend.wait_still(limit=5)
            assert time.monotonic() - backend.input_at >= lag
        # The next connection to this server knows its lag before its first click.
        with VncBackend(backend.address) as again:
            again.grab()
            assert again.lag.after_input() >= lag - 0.05, again.lag.lags
            x, y = loan_app.center("Name")
            again.perform(Action(ActionKind.CLICK, x=x, y=y))
            clicked = again.input_at
            settled = again.settle(limit=5)
            assert settled.still
            assert settled.at - clicked >= lag - 0.05


def _restart_on(server: VncServer, port: int) -> VncServer:
    import examples.vncserver as module

    original = module._free_port
    module._free_port = lambda: port
    try:
        return VncServer(server.display).start()
    finally:
        module._free_port = original


def fields(record: dict[str, object]) -> dict[str, str]:
    return {k: str(record[k]) for k in WANTED}


def test_recorded_locally_replayed_over_vnc_and_refused_on_a_popup(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    result = mm("record", "loan", "--observe", "0.5", "--", *agent_command(loan_app))
    assert result.returncode == 0, result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    loan_app.out.unlink()

    loan_app.start()
    display = ["--display", vnc_locked.address]
    result = mm("replay", "loan", "--no-agent", "--dry-run", *display)
    assert result.returncode == 0, result.stderr
    result = mm("replay", "loan", "--no-agent", "--json", *display)
    assert result.returncode == 0, result.stderr
    assert '"outcome": "from-memory"' in result.stdout
    assert [fields(r) for r in loan_app.records()] == [WANTED]  # what the app received
    assert PASSWORD not in result.stdout + result.stderr
    assert PASSWORD not in (isolated_store / "loan.toml").read_text()
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", *display)
    assert result.returncode == 3, result.stderr
    assert "diverged" in result.stderr
    assert loan_app.records() == []


def test_cli_over_vnc_act_doctor_and_refusals(
    vnc_locked: VncServer, loan_app: LoanApp, isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loan_app.start()
    monkeypatch.setenv("MM_DISPLAY", vnc_locked.address)  # as the environment gives it
    x, y = loan_app.center("Name")
    assert mm("act", "click", str(x), str(y)).returncode == 0
    assert mm("act", "type", "Adä <b>").returncode == 0  # keysyms: any character, any layout
    assert mm("act", "hotkey", "shift", "x").returncode == 0
    assert mm("act", "press", "tab").returncode == 0
    assert mm("act", "type", "ada@example.com").returncode == 0
    deadline = time.monotonic() + 5
    wanted = {"Name": "Adä <b>X", "Email": "ada@example.com"}
    while time.monotonic() < deadline:
        shown = {k: loan_app.widgets()[k]["text"] for k in wanted}
        if shown == wanted:
            break
        time.sleep(0.1)
    assert shown == wanted

    result = mm("doctor", "--json")
    assert result.returncode == 0, result.stderr
    assert vnc_locked.address in result.stdout and PASSWORD not in result.stdout

    result = mm("record", "x", "--demo")
    assert result.returncode == 2 and "VNC" in result.stderr
    result = mm("replay", "x", "--record-input")
    assert result.returncode == 2 and "VNC" in result.stderr
    result = mm("replay", "x", "--no-agent", "--display", "vnc://:pw@127.0.0.1:1")
    assert result.returncode == 2 and "MM_VNC_PASSWORD" in result.stderr
    monkeypatch.setenv("MM_VNC_PASSWORD", "wrong")
    result = mm("act", "move", "10", "10")
    assert result.returncode == 1 and "refused the password" in result.stderr
    monkeypatch.delenv("MM_VNC_PASSWORD")
    secret_file = isolated_store.parent / "vnc-password"
    secret_file.write_text(PASSWORD + "\n")
    monkeypatch.setenv("MM_VNC_PASSWORD_FILE", str(secret_file))
    assert mm("act", "move", "100", "100").returncode == 0
    monkeypatch.delenv("MM_DISPLAY")
    assert os.environ.get("MM_DISPLAY") is None


def test_a_server_gone_for_good_stops_the_replay_with_its_own_message(
    xdisplay: str, loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    result = mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app))
    assert result.returncode == 0, result.stderr
    loan_app.out.unlink()
    loan_app.start("--popup-at-start")  # replay waits at step 1 for the popup to go
    server = VncServer(xdisplay).start()
    try:
        replay = subprocess.Popen(
            [sys.executable, "-m", "mmcli", "replay", "loan", "--no-agent", "--json",
             "--timeout", "30", "--display", server.address],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(4)  # connected, waiting at step 1
        assert replay.poll() is None
        server.stop()  # and it does not come back: 3 reconnects, then the run stops
        out, err = replay.communicate(timeout=60)
    finally:
        server.stop()
    assert replay.returncode == 1, err
    assert "lost the VNC connection" in err and "3 reconnects" in err
    assert json.loads(out)["exit_code"] == 1
    assert loan_app.records() == []
