"""The SDK's ready-made screen check on a real X server, a real Tk window, real input."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli import Engine, ScreenCheck
from mmcli.backends.xinput import import_pyautogui
from mmcli.sdk.document import summary
from tests.sdk.docs_examples import examples, run_example

pytestmark = pytest.mark.e2e

APP = """
import sys
import tkinter as tk
from pathlib import Path

label, counter, ready = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
root = tk.Tk()
root.geometry("360x200+100+100")
root.configure(bg="#d9d9d9")
tk.Label(root, text=label, font=("Helvetica", 16), bg="#d9d9d9").place(x=20, y=20)
count = 0


def press():
    global count
    count += 1
    button.configure(text=f"+1 ({count})")
    counter.with_suffix(".tmp").write_text(str(count))
    counter.with_suffix(".tmp").replace(counter)


button = tk.Button(root, text="+1 (0)", font=("Helvetica", 14), command=press)
button.place(x=20, y=90, width=140, height=50)
root.after(500, lambda: ready.write_text("ok"))
root.mainloop()
"""
BUTTON = (100 + 20 + 70, 100 + 90 + 25)


class CounterApp:
    def __init__(self, workdir: Path) -> None:
        self.script = workdir / "counter_app.py"
        self.script.write_text(APP)
        self.counter = workdir / "count"
        self.ready = workdir / "ready"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, label: str) -> None:
        self.stop()
        self.counter.write_text("0")
        self.ready.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, str(self.script), label, str(self.counter), str(self.ready)]
        )
        deadline = time.monotonic() + 20
        while not self.ready.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, "app did not start"
            time.sleep(0.05)

    @property
    def count(self) -> int:
        """The app's counter, once it has stopped changing (clicks land asynchronously)."""
        last, stable_since = self.counter.read_text(), time.monotonic()
        while time.monotonic() - stable_since < 0.5:
            time.sleep(0.05)
            now = self.counter.read_text()
            if now != last:
                last, stable_since = now, time.monotonic()
        return int(last)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def counter_app(xdisplay: str, tmp_path: Path) -> Iterator[CounterApp]:
    app = CounterApp(tmp_path)
    yield app
    app.stop()


def test_screen_check_hits_on_the_same_window_and_misses_when_a_label_differs(
    counter_app: CounterApp, isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyautogui = import_pyautogui()
    monkeypatch.setattr(pyautogui, "PAUSE", 0.05)
    monkeypatch.setattr(pyautogui, "FAILSAFE", True)
    engine = Engine(name="counter")
    screen = ScreenCheck(timeout=3)

    @engine.function(pre_check=screen)
    def click(x: int, y: int) -> None:
        pyautogui.click(x, y)

    agent_runs: list[str] = []

    def agent(task: str) -> None:
        agent_runs.append(task)
        click(*BUTTON)
        click(*BUTTON)

    engine.set_agent(agent).finalize()

    counter_app.start("Hello")
    assert engine("press twice") is False
    assert counter_app.count == 2 and len(agent_runs) == 1

    counter_app.start("Hello")  # the same window again: replayed from memory
    assert engine("press twice") is True
    assert counter_app.count == 2 and len(agent_runs) == 1

    counter_app.start("Howdy")  # the label differs: the agent does the task
    assert engine("press twice") is False
    assert counter_app.count == 2 and len(agent_runs) == 2

    counter_app.start("Howdy")  # and now that screen is remembered too
    assert engine("press twice") is True
    assert counter_app.count == 2 and len(agent_runs) == 2
    assert summary(isolated_store / "counter.toml")["branches"] == 2
    assert (pyautogui.PAUSE, pyautogui.FAILSAFE) == (0.05, True)  # the user's settings
    screen.close()


def test_the_screen_example_of_the_docs_runs(xdisplay: str, tmp_path: Path) -> None:
    [example] = [e for e in examples() if e.needs_display]
    run_example(example, tmp_path)
    assert (tmp_path / "done").read_text() == "ok"
    assert summary(tmp_path / "store" / "dialogs.toml")["branches"] == 2
