"""A Windows app over VNC: Wine's notepad on Xvfb, served by x11vnc, driven by an agent
that acts only through a VNC client (examples/vnc_agent.py, vncdotool). Recorded through
its `MM_VNC_ADDRESS` endpoint, replayed over VNC with `--no-agent` (the same file saved),
refused on a dialog (exit 3, nothing saved), healed by the agent, then replayed from
memory with no agent run. The saved file is what is read back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.vncserver import VncServer
from tests.e2e.conftest import PASSWORD, mm

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TEXT = "Ada Lovelace, 1200"
DIALOG = """
import json, os, sys, tkinter as tk
out = sys.argv[1]
root = tk.Tk()
root.geometry("300x120+150+140")
tk.Label(root, text="Notice: maintenance tonight").pack(pady=20)
def close():
    os.unlink(out)
    root.destroy()
ok = tk.Button(root, text="OK", command=close)
ok.pack()
def publish():
    x = ok.winfo_rootx() + ok.winfo_width() // 2
    y = ok.winfo_rooty() + ok.winfo_height() // 2
    with open(out + ".tmp", "w") as f:
        json.dump({"ok": [x, y]}, f)
    os.replace(out + ".tmp", out)
root.after(500, publish)
root.mainloop()
"""


@pytest.fixture(scope="module")
def wineprefix(tmp_path_factory: pytest.TempPathFactory, xdisplay: str) -> Iterator[Path]:
    if shutil.which("wine") is None:
        pytest.fail("wine is required (apt-get install wine wine64; scripts/setup installs it)")
    prefix = tmp_path_factory.mktemp("wine")
    env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all", "DISPLAY": xdisplay}
    subprocess.run(["wineboot", "-i"], env=env, capture_output=True, timeout=180, check=True)
    yield prefix
    subprocess.run(["wineserver", "-k"], env=env, capture_output=True, timeout=30)


class Notepad:
    """Wine's notepad editing one file, started afresh for each run."""

    def __init__(self, prefix: Path, work: Path, display: str) -> None:
        self.file = work / "note.txt"
        self.dialog = work / "dialog.json"
        self.env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all",
                    "DISPLAY": display}  # fmt: skip
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, dialog: bool = False) -> None:
        self.stop()
        self.file.write_text("")
        windows_path = "Z:" + str(self.file).replace("/", "\\")
        self.procs.append(
            subprocess.Popen(["wine", "notepad", windows_path], env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )  # fmt: skip
        found = subprocess.run(
            ["xdotool", "search", "--sync", "--onlyvisible", "--name", "note.txt - Notepad"],
            env=self.env, capture_output=True, timeout=60, text=True,
        )  # fmt: skip
        assert found.returncode == 0, "notepad did not show its window"
        time.sleep(1.5)  # drawn, caret placed
        if dialog:
            self.dialog.unlink(missing_ok=True)
            self.procs.append(
                subprocess.Popen([sys.executable, "-c", DIALOG, str(self.dialog)], env=self.env)
            )
            deadline = time.monotonic() + 20
            while not self.dialog.exists():
                assert time.monotonic() < deadline, "the dialog did not show"
                time.sleep(0.05)
            time.sleep(0.5)

    def saved(self) -> str:
        return self.file.read_text(encoding="latin-1")

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()
        subprocess.run(["wineserver", "-k"], env=self.env, capture_output=True, timeout=30)
        self.dialog.unlink(missing_ok=True)


@pytest.fixture
def notepad(wineprefix: Path, xdisplay: str, tmp_path: Path) -> Iterator[Notepad]:
    app = Notepad(wineprefix, tmp_path, xdisplay)
    yield app
    app.stop()


def test_wine_notepad_over_vnc_recorded_replayed_refused_and_healed(
    vnc_locked: VncServer, notepad: Notepad, isolated_store: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"click": [300, 200]}, {"type": TEXT}, {"hotkey": ["ctrl", "s"]}]))
    counter = tmp_path / "agent-starts"
    agent = [
        "sh", "-c", f'echo started >> "{counter}"; exec "$@"', "agent",
        sys.executable, str(REPO / "examples" / "vnc_agent.py"), "--plan", str(plan),
        "--dialog", str(notepad.dialog),
    ]  # fmt: skip
    display = ["--display", vnc_locked.address]

    notepad.start()
    result = mm("record", "note", "--observe", "0.5", *display, "--", *agent)
    assert result.returncode == 0, result.stderr
    assert notepad.saved() == TEXT
    assert f"recorded step 2: type '{TEXT}'" in result.stderr
    assert "recorded step 3: hotkey ctrl+s" in result.stderr

    notepad.start()
    result = mm("replay", "note", "--no-agent", *display)
    assert result.returncode == 0, result.stderr
    assert notepad.saved() == TEXT  # the same file saved

    notepad.start(dialog=True)
    result = mm("replay", "note", "--no-agent", "--timeout", "2", *display)
    assert result.returncode == 3, result.stderr
    assert notepad.saved() == ""  # refused: nothing typed, nothing saved

    notepad.start(dialog=True)
    result = mm("replay", "note", "--timeout", "2", *display)  # the agent dismisses it
    assert result.returncode == 0, result.stderr
    assert notepad.saved() == TEXT
    assert counter.read_text().count("started") == 2

    notepad.start(dialog=True)
    result = mm("replay", "note", "--timeout", "2", "--json", *display)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "from-memory"
    assert counter.read_text().count("started") == 2  # no agent run
    assert notepad.saved() == TEXT
    assert PASSWORD not in (isolated_store / "note.toml").read_text()
