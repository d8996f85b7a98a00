"""Input on an X11 display through XTEST, on a connection to the display named, without the
screen.

`XInput` gives an `Action` as input the way the X11 backend does (it is the backend's
input half): through `xtest.XTest` (the same input `mm act` gives outside a recorder), on
the protocol layer of one python-xlib `Display` that the backend also asks the window
structure on and holds the server with (`X11Backend.perform_checked`: the input goes
through the connection that holds every other client still). The display is a name
given, never the process's environment: a program may drive two displays at once.

`import_pyautogui` is for programs using the SDK with their own pyautogui tools: mm
itself gives no input through pyautogui.
"""

from __future__ import annotations

import os
from typing import Any

from mmcli.backends.xtest import XTest
from mmcli.desktop.display import ensure_xauthority
from mmcli.errors import DisplayError
from mmcli.model import Action, ActionKind


def import_pyautogui() -> Any:
    """Import pyautogui for $DISPLAY, turning its import-time failures into `DisplayError`
    (a program's own pyautogui tools, `docs/sdk.md`)."""
    if not os.environ.get("DISPLAY"):
        raise DisplayError("no display: DISPLAY is not set (start Xvfb, or see `mm doctor`)")
    ensure_xauthority()
    try:
        import pyautogui
    except Exception as e:  # pyautogui raises several types when X is unreachable
        raise DisplayError(f"cannot use display {os.environ['DISPLAY']}: {e}") from None
    return pyautogui


def connect(name: str) -> Any:
    """python-xlib's `Display` on the X display `name`; its failures as `DisplayError`."""
    ensure_xauthority()
    try:
        from Xlib.display import Display

        return Display(name)
    except Exception as e:  # python-xlib raises several types when X is unreachable
        raise DisplayError(f"cannot use display {name}: {e}") from None


class XInput:
    """XTEST input on the X display `name`, and an `Action` given through it."""

    def __init__(self, name: str) -> None:
        self.name = name
        """The X display driven (`:99`, `host:0`)."""
        self._display = connect(name)
        """python-xlib's connection: the window structure is asked on it, the server held
        through it, and the input given on its protocol layer (`_xtest`)."""
        self._xtest = XTest(connection=self._display.display)

    def pointer(self) -> tuple[int, int]:
        return self._xtest.pointer()

    def valid_key(self, key: str) -> bool:
        return self._xtest.valid_key(key)

    def give(self, action: Action) -> None:
        """Give `action` as input, at once (`X11Backend.perform` adds the backend's waits)."""
        self._input(action)

    def _input(self, action: Action) -> None:
        xtest = self._xtest
        k = action.kind
        if k is ActionKind.CLICK:
            # Between the clicks of a double click, no pause: the app takes them as one.
            xtest.click(*self._at(action.x, action.y), action.button, action.clicks)
        elif k is ActionKind.TYPE:
            xtest.type(action.text, action.typing_pause())
        elif k is ActionKind.PRESS:
            xtest.press(list(action.keys), action.clicks)
        elif k is ActionKind.HOTKEY:
            xtest.hotkey(list(action.keys))
        elif k is ActionKind.SCROLL:
            xtest.scroll(action.amount, *self._at(action.x, action.y))
        elif k is ActionKind.MOVE:
            xtest.move(*self._at(action.x, action.y))
        elif k is ActionKind.DRAG:
            start = self._at(action.x, action.y)
            xtest.drag(start, self._at(action.x2, action.y2), action.button)
        else:  # pragma: no cover - exhaustive over ActionKind
            raise ValueError(f"unknown action {k}")

    def _at(self, x: int | None, y: int | None) -> tuple[int, int]:
        """A point of an action, the pointer's where it has none (as pyautogui does)."""
        if x is None or y is None:
            here = self.pointer()
            return (here[0] if x is None else x, here[1] if y is None else y)
        return (x, y)

    def close_input(self) -> None:
        self._display.close()
