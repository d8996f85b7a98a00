"""What `mm record` and `mm replay` of a screen recording load: neither loads the model-API
modules (`mmcli.llm.*`, ~40 ms of imports), and replay loads none of the recorder's
(`capture.record`, `capture.recorder`), unless it hands over to an agent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _imported(tmp_path: Path, xdisplay: str, *argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mmcli", "--store", str(tmp_path), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DISPLAY": xdisplay},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}


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
    assert not replayed & {"mmcli.capture.record", "mmcli.capture.recorder"}
