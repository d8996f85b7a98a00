"""`mm act type` on real X: text whose keys pyautogui gets wrong on this keymap ('<' on
the key whose shifted level is '>') and non-ASCII text arrive as typed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

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


def test_less_than_and_non_ascii_are_typed_as_given(entry: Path) -> None:
    assert mm("act", "click", "200", "52").returncode == 0
    text = "héllo <x> a<b>c"
    result = mm("act", "type", text)
    assert result.returncode == 0, result.stderr

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


def test_act_outside_a_recorder_loads_neither_the_screen_nor_the_cli(entry: Path) -> None:
    """An agent runs one `mm act` per action: outside a recorder it gives the input
    through pyautogui alone (about pyautogui's own start), not numpy, mss or typer."""
    for args in (["click", "200", "52"], ["type", "ok <é>"], ["press", "end"]):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mmcli", "act", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
        assert "pyautogui" in imported
        assert not imported & {"numpy", "mss", "typer", "mmcli.backends.base"}
    wait_until(lambda: entry.exists() and entry.read_text(encoding="utf-8") == "ok <é>", 30,
               "the typed text")  # fmt: skip
