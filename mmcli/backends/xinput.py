"""Input on an X11 display through pyautogui's X11 layer (XTEST), without the screen.

`XInput` gives an `Action` as input the way the X11 backend does (it is the backend's
input half), and loads no more than pyautogui: no numpy, no mss, no change reports. (`mm
act` outside a recorder loads less still: `xtest.XTest`, which gives the same input
without pyautogui.)

Input goes through `pyautogui.platformModule` (`_moveTo`, `_mouseDown`, `_keyDown`, ...),
below the module functions that read pyautogui's process-wide settings (`PAUSE`,
`FAILSAFE`).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from mmcli.backends.xtest import REMAP_SETTLE, drag_path, keysym_of
from mmcli.desktop.display import ensure_xauthority
from mmcli.errors import DisplayError
from mmcli.model import Action, ActionKind
from mmcli.pace import KEY_PAUSE_MIN

UNUSED = ("mouseinfo", "pymsgbox", "pyscreeze", "pytweening")
"""What pyautogui imports at its own import and mm never calls; pyautogui goes without
each when its import fails. mouseinfo opens an X connection of its own: measured, the
import of pyautogui 154 ms with them, 70 ms without."""


def import_pyautogui() -> Any:
    """Import pyautogui for a display, turning its import-time failures into `DisplayError`.
    In mm's own command line (`backends.LEAN_PYAUTOGUI`) without `UNUSED`, which are then
    importable again as before."""
    if not os.environ.get("DISPLAY"):
        raise DisplayError("no display: DISPLAY is not set (start Xvfb, or see `mm doctor`)")
    ensure_xauthority()
    from mmcli import backends

    lean = backends.LEAN_PYAUTOGUI and "pyautogui" not in sys.modules
    blocked = [m for m in UNUSED if m not in sys.modules] if lean else []
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import pyautogui
    except Exception as e:  # pyautogui raises several types when X is unreachable
        raise DisplayError(f"cannot use display {os.environ['DISPLAY']}: {e}") from None
    finally:
        for name in blocked:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
    return pyautogui


def type_unicode(text: str, pause: float = KEY_PAUSE_MIN) -> None:
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
                _type_segment(d, segment, spare, width, pause)
                segment = []
            segment.append(char)
        _type_segment(d, segment, spare, width, pause)
    finally:
        d.close()


def _type_segment(d: Any, chars: list[str], spare: list[int], width: int, pause: float) -> None:
    from Xlib import X
    from Xlib.ext import xtest

    codes = dict(zip(dict.fromkeys(chars), spare, strict=False))
    try:
        for char, code in codes.items():
            d.change_keyboard_mapping(code, [(keysym_of(char),) * width])
        d.sync()
        time.sleep(REMAP_SETTLE)
        for i, char in enumerate(chars):
            if i:
                time.sleep(pause)
            xtest.fake_input(d, X.KeyPress, codes[char])
            xtest.fake_input(d, X.KeyRelease, codes[char])
            d.sync()
        time.sleep(REMAP_SETTLE)
    finally:
        for code in codes.values():
            d.change_keyboard_mapping(code, [(0,) * width])
        d.sync()


def pyautogui_types(gui: Any, char: str) -> bool:
    """Whether pyautogui types `char` as itself on this keymap. Not non-ASCII (it drops
    it), nor a character whose key gives another one at the shift level pyautogui uses:
    '<' is found on the pc105 key whose shifted level is '>' (measured on Xvfb: keycode
    94 is less/greater; pyautogui presses it with shift)."""
    if not char.isascii():
        return False
    platform = getattr(gui, "platformModule", None)
    mapping = getattr(platform, "keyboardMapping", None)
    display = getattr(platform, "_display", None)
    if mapping is None or display is None or char in "\t\n\r\b":
        return True
    code = mapping.get(char)
    if not code:
        return False
    level = 1 if gui.isShiftCharacter(char) else 0
    return bool(display.keycode_to_keysym(code, level) == keysym_of(char))


def type_text(gui: Any, text: str, pause: float = KEY_PAUSE_MIN) -> None:
    """Runs pyautogui's keymap types right through its X11 layer, other characters through
    `type_unicode`; `pause` seconds between two keys (see `Action.typing_pause`)."""
    run = ""
    plain = True
    for char in text:
        ok = pyautogui_types(gui, char)
        if not run or ok == plain:
            run, plain = run + char, ok
            continue
        _type_run(gui, run, plain, pause)
        time.sleep(pause)
        run, plain = char, ok
    if run:
        _type_run(gui, run, plain, pause)


def _type_run(gui: Any, run: str, plain: bool, pause: float) -> None:
    if plain:
        for i, char in enumerate(run):  # as pyautogui.write does, without its fail-safe
            if i:
                time.sleep(pause)
            gui.platformModule._keyDown(char)
            gui.platformModule._keyUp(char)
    else:
        type_unicode(run, pause)


def key_name(key: str) -> str:
    """A key as pyautogui's keymap names it: names lower case, single characters as they
    are ('A' is shift+a)."""
    return key.lower() if len(key) > 1 else key


class XInput:
    """pyautogui's X11 layer, and an `Action` given through it."""

    def __init__(self) -> None:
        self._gui = import_pyautogui()
        self._x11 = self._gui.platformModule
        """pyautogui's X11 layer: input through XTEST on its own connection, `_display`."""

    def pointer(self) -> tuple[int, int]:
        x, y = self._gui.position()
        return (int(x), int(y))

    def valid_key(self, key: str) -> bool:
        return bool(self._gui.isValidKey(key_name(key)))

    def give(self, action: Action) -> None:
        """Give `action` as input, at once (`X11Backend.perform` adds the backend's waits)."""
        self._input(action)

    def _input(self, action: Action) -> None:
        x11 = self._x11
        k = action.kind
        if k is ActionKind.CLICK:
            # Between the clicks of a double click, no pause: the app takes them as one.
            x, y = self._at(action.x, action.y)
            for _ in range(action.clicks):  # each press and release moves there first
                x11._click(x, y, action.button)
        elif k is ActionKind.TYPE:
            type_text(self._gui, action.text, action.typing_pause())
        elif k is ActionKind.PRESS:
            for i in range(action.clicks):
                if i:  # a repeated key with no pause would read as auto-repeat
                    time.sleep(KEY_PAUSE_MIN)
                for key in map(key_name, action.keys):
                    x11._keyDown(key)
                    x11._keyUp(key)
        elif k is ActionKind.HOTKEY:
            keys = [key_name(key) for key in action.keys]
            for key in keys:
                x11._keyDown(key)
            for key in reversed(keys):
                x11._keyUp(key)
        elif k is ActionKind.SCROLL:
            x11._scroll(action.amount, *self._at(action.x, action.y))
        elif k is ActionKind.MOVE:
            x11._moveTo(*self._at(action.x, action.y))
        elif k is ActionKind.DRAG:
            self._drag(action)
        else:  # pragma: no cover - exhaustive over ActionKind
            raise ValueError(f"unknown action {k}")

    def _drag(self, action: Action) -> None:
        """Press, move in steps over `DRAG_SECONDS`, release: the app sees the motion."""
        x11 = self._x11
        x, y = self._at(action.x, action.y)
        x2, y2 = self._at(action.x2, action.y2)
        x11._mouseDown(x, y, action.button)
        try:
            for point in drag_path(x, y, x2, y2):
                x11._moveTo(*point)
        finally:  # never leave the button held down (Ctrl-C mid-drag)
            x11._mouseUp(x2, y2, action.button)

    def _at(self, x: int | None, y: int | None) -> tuple[int, int]:
        """A point of an action, the pointer's where it has none (as pyautogui does)."""
        if x is None or y is None:
            here = self.pointer()
            return (here[0] if x is None else x, here[1] if y is None else y)
        return (x, y)
