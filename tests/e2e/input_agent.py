"""A test agent that acts on the example form through a channel mm does not hook.

    python input_agent.py pynput LAYOUT       # fills the form through pynput (XTEST)
    python input_agent.py pynput-type LAYOUT  # clicks Name, types with pynput's type()
    python input_agent.py hscroll LAYOUT      # clicks the Name field, then scrolls sideways

pynput's `type()` sends characters to the focused window with XSendEvent, which Tk
ignores; keys given by their keysym (`KeyCode.from_vk`) go through XTEST like real ones.

It reads the form's published layout for where the widgets are, and waits a little
between actions, as an agent that looks at the screen would.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

THINK = 0.5
HOVER = 0.5
SHIFTED = {"@": "2", "!": "1", "_": "-", ":": ";"}


def center(widget: dict[str, int]) -> tuple[int, int]:
    return (widget["x"] + widget["w"] // 2, widget["y"] + widget["h"] // 2)


def centers(layout: Path) -> dict[str, tuple[int, int]]:
    data = json.loads(layout.read_text())
    return {w["label"]: center(w) for w in data["windows"][0]["widgets"] if w["role"] != "label"}


def dialog_button(layout: Path) -> tuple[int, int] | None:
    """The button of a modal dialog in front of the form, if one is open."""
    for window in json.loads(layout.read_text())["windows"][1:]:
        buttons = [w for w in window["widgets"] if w["role"] == "button"]
        if window.get("modal") and buttons:
            return center(buttons[0])
    return None


def main() -> int:
    mode, layout = sys.argv[1], Path(sys.argv[2])
    from pynput.keyboard import Controller as Keyboard
    from pynput.keyboard import Key, KeyCode
    from pynput.mouse import Button
    from pynput.mouse import Controller as Mouse

    mouse, keyboard = Mouse(), Keyboard()
    at = centers(layout)

    def click(label: str) -> None:
        point(at[label])

    def point(where: tuple[int, int]) -> None:
        mouse.position = where
        time.sleep(HOVER)  # a careful agent (or a person) rests on the target a moment
        mouse.click(Button.left)
        time.sleep(THINK)

    def type_text(text: str) -> None:
        for char in text:
            base = SHIFTED.get(char, char.lower())
            key = KeyCode.from_vk(ord(base))
            if base != char:
                with keyboard.pressed(Key.shift):
                    keyboard.tap(key)
            else:
                keyboard.tap(key)
        time.sleep(THINK)

    if mode == "pynput":
        button = dialog_button(layout)
        if button is not None:  # a popup in the way: close it first
            point(button)
        for label, text in (
            ("Name", "John Smith"),
            ("Email", "john@example.com"),
            ("Amount", "1200"),
        ):
            click(label)
            type_text(text)
        click("Auto")
        click("Submit")
        deadline = time.monotonic() + 5
        while (button := dialog_button(layout)) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if button is not None:  # close the confirmation, as the recorded agent does
            point(button)
        return 0
    if mode == "pynput-type":
        click("Name")
        keyboard.type("John")
        time.sleep(THINK)
        return 0
    if mode == "hscroll":
        click("Name")
        mouse.scroll(2, 0)
        time.sleep(THINK)
        return 0
    print(f"unknown mode {mode!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
