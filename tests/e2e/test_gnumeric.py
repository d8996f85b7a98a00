"""Gnumeric (from Debian, untouched), where a new user found a value typed twice into a
cell saved, learned and repeated: its sheet exposes no text to the accessibility tree,
and typing into a cell changes more than the cell (the toolbars grey out, the input line
shows the text too). The text is read back by OCR where it shows (`steps.read_back`),
so a replay with another value is verified, and a heal that typed the value again into
the open cell editor is caught: pending, never followed unattended."""

from __future__ import annotations

import json
import os
import subprocess
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop import Desktop, display_env, need, terminate, wait_until, x
from tests.e2e.conftest import mm
from tests.e2e.test_typing_pace import NoticeOnTyping

pytestmark = pytest.mark.e2e

LONG = "Josephine Abernathy-Whitcombe Junior"
"""A long value (36 characters): spilled over the empty cells to its right."""
A1 = (60, 262, 60, 14)
"""Where the first key typed into A1 is drawn, the window at 50,50."""


class Gnumeric:
    """A fresh, empty Gnumeric workbook at a fixed place for each run."""

    def __init__(self, desktop: Desktop, work: Path) -> None:
        self.desktop = desktop
        self.home = work / "home"
        self.home.mkdir()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.stop()
        d = self.desktop.display
        self.proc = subprocess.Popen(
            ["gnumeric", "--geometry=900x600+50+50"],
            env={**os.environ, "DISPLAY": d, "HOME": str(self.home)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def window() -> str:
            found = x("xdotool", "search", "--onlyvisible", "--class", "gnumeric", display=d)
            return found.stdout.split()[0] if found.stdout.split() else ""

        wid = str(wait_until(window, timeout=60, what="the Gnumeric window"))
        x("xdotool", "windowactivate", "--sync", wid, display=d)
        time.sleep(2)  # drawn and idle

    def a1(self) -> str:
        """Cell A1 as the app holds it (copied through the clipboard)."""
        d = self.desktop.display
        x("xdotool", "key", "--delay", "50", "ctrl+Home", "ctrl+c", display=d)
        time.sleep(0.5)  # the app answers the copy in its own time
        copied = x("xclip", "-o", "-selection", "clipboard", display=d).stdout
        x("xdotool", "key", "Escape", display=d)
        return copied.rstrip("\n")

    def stop(self) -> None:
        if self.proc is not None:
            terminate(self.proc)
        self.proc = None


@pytest.fixture(scope="module")
def gnumeric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gnumeric]:
    need("gnumeric", "xclip", "xdotool")
    with Desktop() as desktop, display_env(desktop.display):
        app = Gnumeric(desktop, tmp_path_factory.mktemp("gnumeric"))
        try:
            yield app
        finally:
            app.stop()


def agent(tmp_path: Path, starts: Path) -> list[str]:
    """An xdotool agent that types its value into the cell it finds and presses Enter;
    it ignores `MM_RESUME_STEP`, so a heal types the value again."""
    script = tmp_path / "agent.sh"
    script.write_text(
        f"echo started >> '{starts}'\n"
        'value="${MM_PARAM_NAME:-$1}"\n'
        'sleep 0.3\nxdotool type --delay 12 "$value"\nsleep 0.3\nxdotool key Return\n'
    )
    return ["sh", str(script), LONG]


def test_a_value_typed_into_a_cell_is_read_back_and_one_typed_twice_is_caught(
    gnumeric: Gnumeric, tmp_path: Path, isolated_store: Path
) -> None:
    starts = tmp_path / "agent-starts"
    command = agent(tmp_path, starts)
    gnumeric.start()
    recorded = mm("record", "cell", "--param", f"name={LONG}", "--observe", "0.5", "--",
                  *command)  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert gnumeric.a1() == LONG
    steps = tomllib.loads((isolated_store / "cell.toml").read_text())["steps"]
    landed = steps[0]["landed"]
    assert landed["source"] == "ocr" and landed.get("text") == "{{name}}", landed

    gnumeric.start()
    replayed = mm("replay", "cell", "--param", "name=Grace Hopper", "--no-agent", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["verified"] is True, replayed.stderr
    assert gnumeric.a1() == "Grace Hopper"

    gnumeric.start()
    with NoticeOnTyping(gnumeric.desktop.display, starts, A1) as notice:
        healed = mm("replay", "cell", "--param", f"name={LONG}", "--timeout", "2", "--json")
    assert notice.shown.is_set() and notice.gone.is_set(), healed.stderr
    assert gnumeric.a1() == LONG + LONG, healed.stderr  # the agent's doing
    assert healed.returncode == 6, healed.stderr
    report = json.loads(healed.stdout)
    assert report["outcome"] == "healed-pending" and report["verified"] is False, report
    assert "its field already held what was typed: it now holds it 2 times" in healed.stderr
