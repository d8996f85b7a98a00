"""`mm act` under a recorder: parsed and sent before any heavy import."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mmcli.cli.fastact import parse


@pytest.mark.parametrize(
    "args, action",
    [
        (["click", "1", "2"], {"kind": "click", "x": 1, "y": 2, "button": "left", "clicks": 1}),
        (["click", "1", "2", "--button", "right", "--double"],
         {"kind": "click", "x": 1, "y": 2, "button": "right", "clicks": 2}),
        (["type", "John Smith"], {"kind": "type", "text": "John Smith"}),
        (["type", "--", "-x"], {"kind": "type", "text": "-x"}),
        (["press", "enter"], {"kind": "press", "keys": ["enter"], "clicks": 1}),
        (["hotkey", "ctrl", "s"], {"kind": "hotkey", "keys": ["ctrl", "s"]}),
        (["scroll", "-3"], {"kind": "scroll", "amount": -3}),
        (["scroll", "-3", "--at", "4", "5"], {"kind": "scroll", "amount": -3, "x": 4, "y": 5}),
        (["move", "10", "10"], {"kind": "move", "x": 10, "y": 10}),
        (["drag", "1", "2", "3", "4"], {"kind": "drag", "x": 1, "y": 2, "x2": 3, "y2": 4}),
    ],
)  # fmt: skip
def test_plain_actions_are_parsed(args: list[str], action: dict[str, Any]) -> None:
    assert parse(args) == action


@pytest.mark.parametrize(
    "args",
    [
        ["click", "1"],
        ["click", "a", "2"],
        ["click", "1", "2", "--button", "side"],
        ["click", "1", "2", "--button"],
        ["type"],
        ["type", "--help"],
        ["scroll", "3", "--at", "4"],
        ["jump"],
        ["press", "notakey"],
        ["press", "é"],
        ["hotkey", "ctrl", "notakey"],
        [],
    ],
)
def test_anything_else_is_left_to_the_full_cli(args: list[str]) -> None:
    assert parse(args) is None


def test_mm_act_under_a_recorder_sends_one_request_and_loads_no_cli(tmp_path: Path) -> None:
    path = str(tmp_path / "rec.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    got: list[dict[str, Any]] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn, conn.makefile("rwb") as f:
            got.append(json.loads(f.readline()))
            f.write(b'{"ok": true}\n')
            f.flush()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    env = {**os.environ, "MM_RECORD_SOCKET": path}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mmcli", "act", "click", "5", "6"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    t.join(10)
    server.close()
    assert done.returncode == 0, done.stderr
    assert got == [{"op": "perform", "action": {"kind": "click", "x": 5, "y": 6,
                                                "button": "left", "clicks": 1}}]  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {"typer", "rich", "numpy", "mmcli.cli.app", "PIL", "pyautogui"}


def test_mm_act_with_the_recorder_gone_is_a_one_line_error(tmp_path: Path) -> None:
    env = {**os.environ, "MM_RECORD_SOCKET": str(tmp_path / "none.sock")}
    done = subprocess.run(
        [sys.executable, "-m", "mmcli", "act", "press", "enter"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("mm: error: cannot reach the recorder")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [["--help"], ["ls"], ["ls", "--json"]])
def test_help_and_ls_start_without_numpy_or_pil(argv: list[str], tmp_path: Path) -> None:
    """`mm --help` and `mm ls` must start in well under 0.2 s: the imaging stack (numpy,
    PIL) and the input stack are for commands that look at or act on the screen."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mmcli", "--store", str(tmp_path), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {
        "numpy",
        "PIL",
        "pyautogui",
        "mss",
        "mmcli.screen.fingerprint",
        "temporalio",
    }


@pytest.mark.e2e  # an Xvfb of its own
def test_mm_act_outside_a_recorder_starts_without_pyautogui_numpy_pil_or_typer() -> None:
    """Outside a recorder `mm act` gives its input itself, through XTEST with python-xlib's
    protocol layer: importing pyautogui alone costs about 4.5x a bare Python start."""
    import shutil

    from mmcli.desktop.display import VirtualDisplay

    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    env = {k: v for k, v in os.environ.items() if k != "MM_RECORD_SOCKET"}
    with VirtualDisplay(640, 480) as display:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mmcli", "act", "move", "5", "6"],
            capture_output=True,
            text=True,
            env={**env, "DISPLAY": display.display},
            timeout=60,
        )
        from mmcli.backends.xtest import XTest

        with XTest(display.display) as x11:
            assert x11.pointer() == (5, 6)
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert "mmcli.backends.xtest" in imported
    assert not imported & {
        *("pyautogui", "numpy", "PIL", "mss", "typer", "rich", "mmcli.cli.app"),
        *("Xlib.display", "mmcli.model", "mmcli.backends.xinput"),
    }


@pytest.mark.e2e  # an Xvfb of its own
@pytest.mark.parametrize("after", [0.0, 0.3], ids=["while-the-keymap-settles", "typing"])
def test_mm_act_interrupted_outside_a_recorder_exits_130_and_unbinds_its_keycodes(
    after: float,
) -> None:
    """Ctrl-C while `mm act type` types characters on no key (bound to spare keycodes),
    or in the pause after binding them, before the first key: one line, exit 130, and
    the keyboard map is as it was."""
    import shutil
    import signal
    import time

    from mmcli.desktop.display import VirtualDisplay

    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    env = {k: v for k, v in os.environ.items() if k != "MM_RECORD_SOCKET"}
    with VirtualDisplay(640, 480) as display:
        from mmcli.backends.xtest import XTest

        with XTest(display.display) as x11:
            before = dict(x11.keymap.at), list(x11.keymap.spare)
        proc = subprocess.Popen(
            [sys.executable, "-m", "mmcli", "act", "type", "é€" * 200],
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "DISPLAY": display.display},
            # Started as a shell's background job is, with SIGINT ignored: mm still
            # stops at Ctrl-C sent to it, as the full CLI does.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        deadline = time.monotonic() + 30
        while True:  # until the keycodes are bound: then typing 400 keys takes seconds
            with XTest(display.display) as x11:
                if 0xE9 in x11.keymap.at:
                    break
            assert time.monotonic() < deadline and proc.poll() is None, "never bound"
            time.sleep(0.02)
        time.sleep(after)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        with XTest(display.display) as x11:
            after = dict(x11.keymap.at), list(x11.keymap.spare)
    assert proc.returncode == 130, err
    assert err == "mm: error: interrupted\n"
    assert after == before


@pytest.mark.e2e  # an Xvfb of its own
@pytest.mark.parametrize("xauthority", ["missing", "empty"])
def test_mm_act_outside_a_recorder_with_no_usable_xauthority(
    xauthority: str, tmp_path: Path
) -> None:
    """A missing Xauthority file is no authorization (nothing more loaded); an empty one
    would make python-xlib print a warning on stdout: mm points XAUTHORITY elsewhere."""
    import shutil

    from mmcli.desktop.display import VirtualDisplay

    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    path = tmp_path / "Xauthority"
    if xauthority == "empty":
        path.write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if k != "MM_RECORD_SOCKET"}
    with VirtualDisplay(640, 480) as display:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mmcli", "act", "move", "7", "8"],
            capture_output=True,
            text=True,
            env={**env, "DISPLAY": display.display, "XAUTHORITY": str(path)},
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert ("mmcli.desktop.display" in imported) == (xauthority == "empty")
