"""The X11 backend: mss for pixels, pyautogui (XTEST) for input.

pyautogui's module settings are process-wide; this backend only switches off its pause
(replay paces itself) and its own fail-safe (replay checks the corners between actions
and raises `Aborted`, which the CLI maps to exit 130).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mmcli.backends.base import Backend
from mmcli.display import ensure_xauthority
from mmcli.errors import DisplayError
from mmcli.fingerprint import Frame
from mmcli.model import Action, ActionKind

if TYPE_CHECKING:
    from mmcli.input_watch import EventSource, Grabber

DRAG_SECONDS = 0.2
"""Apps need pointer motion between press and release to see a drag."""


def import_pyautogui() -> Any:
    """Import pyautogui for a display, turning its import-time failures into `DisplayError`."""
    if not os.environ.get("DISPLAY"):
        raise DisplayError("no display: DISPLAY is not set (start Xvfb, or see `mm doctor`)")
    ensure_xauthority()
    try:
        import pyautogui
    except Exception as e:  # pyautogui raises several types when X is unreachable
        raise DisplayError(f"cannot use display {os.environ['DISPLAY']}: {e}") from None
    return pyautogui


class X11Backend(Backend):
    def __init__(self) -> None:
        self._gui = import_pyautogui()
        self._gui.PAUSE = 0
        self._gui.FAILSAFE = False
        import mss

        try:
            self._mss = mss.MSS() if hasattr(mss, "MSS") else mss.mss()
        except Exception as e:
            raise DisplayError(f"cannot grab display {os.environ.get('DISPLAY')}: {e}") from None
        self._monitor = self._mss.monitors[1]

    def size(self) -> tuple[int, int]:
        return (int(self._monitor["width"]), int(self._monitor["height"]))

    def grab(self) -> Frame:
        shot = self._mss.grab(self._monitor)
        return Frame(shot.raw, shot.width, shot.height)

    def pointer(self) -> tuple[int, int]:
        x, y = self._gui.position()
        return (int(x), int(y))

    def move(self, x: int, y: int) -> None:
        self._gui.moveTo(x, y, _pause=False)

    def perform(self, action: Action) -> None:
        g = self._gui
        k = action.kind
        if k is ActionKind.CLICK:
            g.click(
                action.x,
                action.y,
                clicks=action.clicks,
                # pyautogui sleeps `interval` after every click, the last one included:
                # the app takes the click before the pointer moves on to the next target
                # (without it a Tk dialog opened by the click was seen not to appear).
                interval=0.02,
                button=action.button,
                _pause=False,
            )
        elif k is ActionKind.TYPE:
            g.write(action.text, interval=0.0, _pause=False)
        elif k is ActionKind.PRESS:
            g.press(list(action.keys), presses=action.clicks, _pause=False)
        elif k is ActionKind.HOTKEY:
            g.hotkey(*action.keys, _pause=False)
        elif k is ActionKind.SCROLL:
            g.scroll(action.amount, x=action.x, y=action.y, _pause=False)
        elif k is ActionKind.MOVE:
            g.moveTo(action.x, action.y, _pause=False)
        elif k is ActionKind.DRAG:
            g.moveTo(action.x, action.y, _pause=False)
            g.dragTo(
                action.x2, action.y2, duration=DRAG_SECONDS, button=action.button, _pause=False
            )
        else:  # pragma: no cover - exhaustive over ActionKind
            raise ValueError(f"unknown action {k}")

    def close(self) -> None:
        self._mss.close()

    def open_grabber(self) -> Grabber:
        return _MSSGrabber()

    def input_source(self) -> EventSource | None:
        from mmcli.backends.xrecord import XRecordSource

        try:
            return XRecordSource()
        except Exception as e:  # no RECORD extension, or the connection was refused
            display = os.environ.get("DISPLAY")
            raise DisplayError(f"cannot watch the input of {display}: {e}") from None


class _MSSGrabber:
    """An mss instance of its own, for a thread other than the backend's."""

    def __init__(self) -> None:
        import mss

        self._mss = mss.MSS() if hasattr(mss, "MSS") else mss.mss()
        self._monitor = self._mss.monitors[1]

    def grab(self) -> Frame:
        shot = self._mss.grab(self._monitor)
        return Frame(shot.raw, shot.width, shot.height)

    def close(self) -> None:
        self._mss.close()
