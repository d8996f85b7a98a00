"""The X11 backend: mss for pixels, pyautogui (XTEST) for input.

pyautogui's module settings are process-wide; this backend only switches off its pause
(replay paces itself) and its own fail-safe (replay checks the corners between actions
and raises `Aborted`, which the CLI maps to exit 130).
"""

from __future__ import annotations

import os
import time
from typing import Any

from mmcli.backends.base import Backend
from mmcli.display import ensure_xauthority
from mmcli.errors import DisplayError
from mmcli.fingerprint import Frame
from mmcli.model import Action, ActionKind

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


REMAP_SETTLE = 0.15
"""Seconds an app gets to take in a keyboard mapping change: before the keys come (else it
reads them with its old map), and after them before the mapping is undone."""


def keysym_of(char: str) -> int:
    """The X keysym that types `char`: Latin-1 keysyms are the code points, others are
    0x01000000 + the code point."""
    code = ord(char)
    return code if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF else 0x01000000 | code


def type_unicode(text: str) -> None:
    """Type characters pyautogui cannot (it drops non-ASCII, e.g. pasted text): bind them
    to spare keycodes, each at every shift level (else an app reads 'É' as 'é'), press
    them through XTEST, and unbind the keycodes afterwards. One mapping change for many
    characters: an app rereads its whole keymap at each change."""
    from Xlib.display import Display

    d = Display()
    try:
        first = d.display.info.min_keycode
        mapping = d.get_keyboard_mapping(first, d.display.info.max_keycode - first + 1)
        spare = [first + i for i, syms in enumerate(mapping) if not any(syms)]
        if not spare:
            raise DisplayError("no free keycode to type non-ASCII text with")
        width = len(mapping[0])
        segment: list[str] = []
        for char in text:  # as many different characters at a time as there are keycodes
            if char not in segment and len(set(segment)) == len(spare):
                _type_segment(d, segment, spare, width)
                segment = []
            segment.append(char)
        _type_segment(d, segment, spare, width)
    finally:
        d.close()


def _type_segment(d: Any, chars: list[str], spare: list[int], width: int) -> None:
    from Xlib import X
    from Xlib.ext import xtest

    codes = dict(zip(dict.fromkeys(chars), spare, strict=False))
    try:
        for char, code in codes.items():
            d.change_keyboard_mapping(code, [(keysym_of(char),) * width])
        d.sync()
        time.sleep(REMAP_SETTLE)
        for char in chars:
            xtest.fake_input(d, X.KeyPress, codes[char])
            xtest.fake_input(d, X.KeyRelease, codes[char])
            d.sync()
        time.sleep(REMAP_SETTLE)
    finally:
        for code in codes.values():
            d.change_keyboard_mapping(code, [(0,) * width])
        d.sync()


def type_text(gui: Any, text: str) -> None:
    """ASCII runs through pyautogui, other characters through `type_unicode`."""
    run = ""
    for char in text:
        if char.isascii() == (run.isascii() if run else char.isascii()):
            run += char
            continue
        _type_run(gui, run)
        run = char
    if run:
        _type_run(gui, run)


def _type_run(gui: Any, run: str) -> None:
    if run.isascii():
        gui.write(run, interval=0.0, _pause=False)
    else:
        type_unicode(run)


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
            type_text(g, action.text)
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
