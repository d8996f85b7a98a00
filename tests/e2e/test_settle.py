"""`Backend.settle` on a real X server: the DAMAGE extension tells it when a real Tk window
repaints, so a still screen is known shortly after the last repaint, and not before."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from mmcli.backends.x11 import X11Backend

pytestmark = pytest.mark.e2e

COLOURS = ("#204080", "#c08020")
RGB = ((0x20, 0x40, 0x80), (0xC0, 0x80, 0x20))
CENTRE = (300, 250)

APP = """
import sys, time, threading
import tkinter as tk

colours = sys.argv[1:3]
root = tk.Tk()
root.geometry("400x300+100+100")
box = tk.Frame(root, width=400, height=300, bg=colours[0])
box.place(x=0, y=0)
shown = [0]

def paint():
    shown[0] = 1 - shown[0]
    box.configure(bg=colours[shown[0]])
    root.update_idletasks()
    return time.monotonic()

def animate(until):
    last = paint()
    if time.monotonic() < until:
        root.after(10, animate, until)
    else:
        print(f"done {last}", flush=True)

def command(line):
    word, *rest = line.split()
    if word == "flash":
        print(f"done {paint()}", flush=True)
    elif word == "animate":
        animate(time.monotonic() + float(rest[0]))

def read():
    for line in sys.stdin:
        root.after(0, command, line)

root.update()
threading.Thread(target=read, daemon=True).start()
print("ready", flush=True)
root.mainloop()
"""


@pytest.fixture
def app(xdisplay: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", APP, *COLOURS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    yield process
    process.kill()
    process.wait()


@pytest.fixture
def backend(xdisplay: str) -> Iterator[X11Backend]:
    with X11Backend(xdisplay) as b:
        assert b.changes() is not None, "the X server's DAMAGE reports are not used"
        yield b


def send(app: subprocess.Popen[str], command: str) -> None:
    assert app.stdin is not None
    app.stdin.write(command + "\n")
    app.stdin.flush()


def painted(app: subprocess.Popen[str]) -> float:
    """When the app drew its last change (CLOCK_MONOTONIC, shared by all processes)."""
    assert app.stdout is not None
    word, at = app.stdout.readline().split()
    assert word == "done"
    return float(at)


def colour_at_centre(frame: object) -> tuple[int, int, int]:
    x, y = CENTRE
    b, g, r = frame.pixels[y, x, :3]  # type: ignore[attr-defined]
    return (int(r), int(g), int(b))


def test_settle_returns_shortly_after_a_repaint(
    app: subprocess.Popen[str], backend: X11Backend
) -> None:
    quiet = 0.05
    backend.settle(quiet, limit=5.0)
    for flash in range(4):
        send(app, "flash")
        time.sleep(0.01)  # the repaint is under way when settle starts
        settled = backend.settle(quiet, limit=5.0)
        returned = time.monotonic()
        last = painted(app)
        assert settled.still
        assert colour_at_centre(settled.frame) == RGB[(flash + 1) % 2]
        assert last + quiet <= returned + 0.005, "settled before the repaint was quiet"
        assert returned - last < quiet + 0.3, "settle did not see the screen was still"


def test_settle_waits_while_a_window_keeps_repainting(
    app: subprocess.Popen[str], backend: X11Backend
) -> None:
    quiet = 0.2  # far above the app's 10 ms between repaints, even on a loaded machine
    send(app, "animate 1.0")
    time.sleep(0.05)
    started = time.monotonic()
    settled = backend.settle(quiet, limit=10.0)
    returned = time.monotonic()
    last = painted(app)
    assert settled.still
    assert returned >= last + quiet - 0.005, "settled while the window was still repainting"
    assert returned - last < quiet + 0.5
    assert returned - started >= 0.7


def test_settle_gives_up_at_its_limit_on_a_screen_that_never_stops(
    app: subprocess.Popen[str], backend: X11Backend
) -> None:
    send(app, "animate 2.0")
    time.sleep(0.05)
    started = time.monotonic()
    settled = backend.settle(0.2, limit=0.5)
    took = time.monotonic() - started
    painted(app)
    assert not settled.still
    assert 0.45 <= took < 1.5
