"""What `mm record` and `mm replay` of a screen recording load: neither loads the model-API
modules (`mmcli.llm.*`, ~40 ms of imports) nor the parts of pyautogui mm never calls
(mouseinfo, which opens an X connection of its own, pymsgbox, pyscreeze, pytweening: ~80
ms), and replay loads none of the recorder's (`capture.record`, `capture.recorder`),
unless it hands over to an agent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _imported(tmp_path: Path, xdisplay: str, *argv: str) -> dict[str, int]:
    """The modules the command imported, with each one's cumulative import time (us); a
    module whose import failed at once (pyautogui's optional parts, when left out) shows
    with a few us."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mmcli", "--store", str(tmp_path), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DISPLAY": xdisplay},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [
        line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    return {name.strip(): int(cumulative) for _, cumulative, name in lines[1:]}


def test_a_screen_recording_and_its_replay_load_no_model_api_and_replay_no_recorder(
    tmp_path: Path, xdisplay: str
) -> None:
    mm_act = f"{sys.executable} -m mmcli act move 40 30"
    recorded = _imported(
        tmp_path, xdisplay, "record", "moves", "--observe", "0", "--", "sh", "-c", mm_act
    )
    assert "mmcli.capture.recorder" in recorded  # (the import list is read right)
    assert not {m for m in recorded if m.startswith("mmcli.llm")}
    replayed = _imported(tmp_path, xdisplay, "replay", "moves", "--no-agent")
    assert "mmcli.replay.replayer" in replayed
    assert not {m for m in replayed if m.startswith("mmcli.llm")}
    assert not replayed.keys() & {"mmcli.capture.record", "mmcli.capture.recorder"}
    # Input goes through XTEST on the backend's own connection: pyautogui (and what it
    # imports: pyscreeze, pymsgbox, mouseinfo) is never loaded.
    assert "mmcli.backends.xtest" in recorded and "mmcli.backends.xtest" in replayed
    for unused in ("pyautogui", "mouseinfo", "pymsgbox", "pyscreeze", "pytweening"):
        assert unused not in recorded and unused not in replayed, unused
