"""`mm act` on real X, outside a recorder (its lean XTEST input, `backends/xtest.py`):
text whose keys pyautogui gets wrong on this keymap ('<' on the key whose shifted level is
'>'), shifted characters, punctuation and non-ASCII text arrive as typed; keys, clicks,
double clicks, scrolls and drags reach a Tk app as the same X events replay's input
(`XInput`, on the X11 backend's own connection) gives it, read back from the app."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mmcli.cli.fastact import parse
from tests.desktop import wait_until
from tests.e2e.conftest import mm

APP = r"""
import sys, tkinter as tk
out = sys.argv[1]
root = tk.Tk()
root.geometry("600x120+0+0")
entry = tk.Entry(root, width=60, font=("DejaVu Sans", 14))
entry.place(x=20, y=40)
def save(event=None):
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write(entry.get())
    import os
    os.replace(out + ".tmp", out)
entry.bind("<KeyRelease>", save)
entry.focus_force()
root.after(200, lambda: open(out + ".ready", "w").close())
root.mainloop()
"""


@pytest.fixture
def entry(xdisplay: str, tmp_path: Path) -> Iterator[Path]:
    out = tmp_path / "typed.txt"
    proc = subprocess.Popen([sys.executable, "-c", APP, str(out)])
    try:
        wait_until(lambda: Path(str(out) + ".ready").exists(), 30, "the entry app")
        yield out
    finally:
        proc.kill()
        proc.wait()


TEXTS = ["héllo <x> a<b>c", "Ab1 !@#$%^&*()_+{}|:\"<>?~`-=[]\\;',./ é ß € Zoë Ł É"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("channel", ["mm act", "replay input"])
def test_less_than_and_non_ascii_are_typed_as_given(entry: Path, text: str, channel: str) -> None:
    assert mm("act", "click", "200", "52").returncode == 0
    if channel == "mm act":
        result = mm("act", "type", text)
        assert result.returncode == 0, result.stderr
    else:
        replay_input({"kind": "type", "text": text})

    def typed() -> bool:
        return entry.exists() and entry.read_text(encoding="utf-8") == text

    try:
        wait_until(typed, 30, "the typed text")
    finally:
        print("typed:", entry.read_text(encoding="utf-8") if entry.exists() else None)


@pytest.mark.parametrize("args", [["press", "notakey"], ["hotkey", "ctrl", "é"]])
def test_an_unknown_key_is_refused(xdisplay: str, args: list[str]) -> None:
    result = mm("act", *args)
    assert result.returncode == 2
    assert result.stderr.startswith("mm: error: unknown key ")
    assert "mm act type TEXT" in result.stderr


def test_act_outside_a_recorder_loads_neither_pyautogui_nor_the_screen_nor_the_cli(
    entry: Path,
) -> None:
    """An agent runs one `mm act` per action: outside a recorder it gives the input
    through XTEST with python-xlib's protocol layer alone: not pyautogui (4.5x a bare
    Python start by itself), numpy, mss, typer or the recording model."""
    for args in (["click", "200", "52"], ["type", "ok <é>"], ["press", "end"]):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mmcli", "act", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
        assert "mmcli.backends.xtest" in imported
        assert not imported & {
            *("pyautogui", "PIL", "numpy", "mss", "typer", "rich", "Xlib.display"),
            *("mmcli.backends.base", "mmcli.backends.xinput", "mmcli.model"),
        }
    wait_until(lambda: entry.exists() and entry.read_text(encoding="utf-8") == "ok <é>", 30,
               "the typed text")  # fmt: skip


def replay_input(action: dict[str, object]) -> None:
    """Give `action` (in the recorder's JSON form) through replay's own input half,
    `XInput` (XTEST on its own connection), in a process of its own as `mm act` is."""
    code = (
        "import json, os, sys\n"
        "from mmcli.backends.xinput import XInput\n"
        "from mmcli.model import Action, ActionKind\n"
        "a = json.loads(sys.argv[1])\n"
        "kind = ActionKind(a.pop('kind'))\n"
        "a = {k: tuple(v) if k == 'keys' else v for k, v in a.items()}\n"
        "XInput(os.environ['DISPLAY']).give(Action(kind, **a))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, json.dumps(action)], timeout=60)
    assert done.returncode == 0


EVENTS_APP = r"""
import sys, tkinter as tk
log = open(sys.argv[1], "a", buffering=1, encoding="utf-8")
root = tk.Tk()
root.geometry("600x400+0+0")
entry = tk.Entry(root, width=40)
entry.place(x=20, y=20)
canvas = tk.Canvas(root, width=600, height=300, bg="white", highlightthickness=0)
canvas.place(x=0, y=100)
def note(*words):
    log.write(" ".join(map(str, words)) + "\n")
for kind in ("ButtonPress", "ButtonRelease", "Double-Button-1", "B1-Motion"):
    canvas.bind(f"<{kind}>", lambda e, k=kind: note(k, e.num, e.x_root, e.y_root))
root.bind("<KeyPress>", lambda e: note("KeyPress", e.keysym, e.state & 0x5))
entry.focus_force()
root.after(200, lambda: note("ready"))
root.mainloop()
"""


class EventLog:
    """The X events a Tk app saw, one line each: `ButtonPress 1 X Y`, `KeyPress a 4`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen = 0

    def lines(self) -> list[str]:
        return self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []

    def after(self, give: Callable[[], None], count: int) -> list[str]:
        """The events `give()` caused: at least `count` lines, then 0.3 s without more.
        Motion while the button is held comes as Tk compresses it: only the last of a
        run of `B1-Motion` lines is kept, and none that did not move."""
        time.sleep(0.6)  # past the double-click time: two clicks of a test are not one
        start = len(self.lines())
        give()
        wait_until(lambda: len(self.lines()) - start >= count, 30, f"{count} events")
        while True:
            before = len(self.lines())
            time.sleep(0.3)
            if len(self.lines()) == before:
                break
        out: list[str] = []
        for line in self.lines()[start:]:
            motion = line.startswith("B1-Motion")
            if motion and out and out[-1].split()[2:] == line.split()[2:]:
                continue  # a move onto the point the pointer is on (before a release)
            if motion and out and out[-1].startswith("B1-Motion"):
                out[-1] = line
            else:
                out.append(line)
        return out


@pytest.fixture
def events(xdisplay: str, tmp_path: Path) -> Iterator[EventLog]:
    log = EventLog(tmp_path / "events.txt")
    proc = subprocess.Popen([sys.executable, "-c", EVENTS_APP, str(log.path)])
    try:
        wait_until(lambda: "ready" in log.lines(), 30, "the events app")
        yield log
    finally:
        proc.kill()
        proc.wait()


def _press(n: int, x: int, y: int) -> list[str]:
    return [f"ButtonPress {n} {x} {y}", f"ButtonRelease {n} {x} {y}"]


POINTER = [
    (["click", "100", "200"], _press(1, 100, 200)),
    (["click", "150", "220", "--button", "right"], _press(3, 150, 220)),
    (["click", "200", "250", "--double"],
     ["ButtonPress 1 200 250", "ButtonRelease 1 200 250",
      "Double-Button-1 1 200 250", "ButtonRelease 1 200 250"]),
    (["scroll", "-2", "--at", "300", "300"], _press(5, 300, 300) * 2),
    (["scroll", "3", "--at", "310", "320"], _press(4, 310, 320) * 3),
    (["drag", "100", "150", "400", "350"],
     ["ButtonPress 1 100 150", "B1-Motion ?? 400 350", "ButtonRelease 1 400 350"]),
]  # fmt: skip
KEYS = [
    (["press", "tab"], ["KeyPress Tab 0"]),
    (["press", "A"], ["KeyPress Shift_L 0", "KeyPress A 1"]),
    (["press", "f5"], ["KeyPress F5 0"]),
    (["hotkey", "ctrl", "a"], ["KeyPress Control_L 0", "KeyPress a 4"]),
    (["hotkey", "shift", "x"], ["KeyPress Shift_L 0", "KeyPress X 1"]),
    (["hotkey", "ctrl", "shift", "End"],
     ["KeyPress Control_L 0", "KeyPress Shift_L 4", "KeyPress End 5"]),
]  # fmt: skip


@pytest.mark.parametrize("args, expected", POINTER + KEYS, ids=lambda v: " ".join(v))
def test_mm_act_gives_the_events_replay_input_gives(
    events: EventLog, args: list[str], expected: list[str]
) -> None:
    """Each action through `mm act`, then through replay's input: the app sees the same
    events, and they are the ones the action means."""
    if args[0] in ("press", "hotkey"):  # the keyboard follows the pointer: over the app
        assert mm("act", "move", "300", "50").returncode == 0
    action = parse(args)
    assert action is not None

    def act() -> None:
        result = mm("act", *args)
        assert result.returncode == 0, result.stderr

    assert events.after(act, len(expected)) == expected
    assert events.after(lambda: replay_input(action), len(expected)) == expected


def test_mm_act_move_puts_the_pointer_there(xdisplay: str) -> None:
    from mmcli.backends.xtest import XTest

    for x, y in ((123, 456), (7, 9)):
        assert mm("act", "move", str(x), str(y)).returncode == 0
        with XTest() as x11:
            assert x11.pointer() == (x, y)
