"""The X11 backend: mss for pixels, pyautogui's X11 layer (XTEST) for input.

Input goes through `pyautogui.platformModule` (`_moveTo`, `_mouseDown`, `_keyDown`, ...),
below the module functions that read pyautogui's process-wide settings: this backend
never sets `PAUSE` or `FAILSAFE`, and the settings of a program using mm (the SDK) neither
pause mm's input nor stop it. Replay paces itself, and has its own fail-safe: it checks
the screen's corners between actions and raises `Aborted` (exit 130).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from mmcli.backends.base import Backend, ChangeLog
from mmcli.desktop.display import ensure_xauthority
from mmcli.errors import DisplayError
from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Frame, Rect

if TYPE_CHECKING:
    from mmcli.desktop.input_watch import EventSource, Grabber

DRAG_SECONDS = 0.2
"""Apps need pointer motion between press and release to see a drag."""
DRAG_STEPS = 10
CLICK_SETTLE = 0.02
"""After a click, time for the app to take it before the pointer moves on (without it a Tk
dialog opened by the click was seen not to appear). Waited before the next pointer motion,
not after the click: keys typed into the clicked field need not wait."""
MOVES = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.MOVE, ActionKind.DRAG}
HELD = {ActionKind.CLICK, ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY, ActionKind.SCROLL}
"""Actions performed with the display held still from the check on (not drags: apps need
to see the pointer's motion as it happens)."""


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


def type_text(gui: Any, text: str) -> None:
    """Runs pyautogui's keymap types right through its X11 layer, other characters through
    `type_unicode`."""
    run = ""
    plain = True
    for char in text:
        ok = pyautogui_types(gui, char)
        if not run or ok == plain:
            run, plain = run + char, ok
            continue
        _type_run(gui, run, plain)
        run, plain = char, ok
    if run:
        _type_run(gui, run, plain)


def _type_run(gui: Any, run: str, plain: bool) -> None:
    if plain:
        for char in run:  # as pyautogui.write does, without its pause and fail-safe
            gui.platformModule._keyDown(char)
            gui.platformModule._keyUp(char)
    else:
        type_unicode(run)


def key_name(key: str) -> str:
    """A key as pyautogui's keymap names it: names lower case, single characters as they
    are ('A' is shift+a)."""
    return key.lower() if len(key) > 1 else key


class X11Backend(Backend):
    def __init__(self) -> None:
        self._gui = import_pyautogui()
        self._x11 = self._gui.platformModule
        """pyautogui's X11 layer: input through XTEST on its own connection, `_display`."""
        import mss

        try:
            self._mss = mss.MSS() if hasattr(mss, "MSS") else mss.mss()
        except Exception as e:
            raise DisplayError(f"cannot grab display {os.environ.get('DISPLAY')}: {e}") from None
        self._monitor = self._mss.monitors[1]
        self._held: Any = None
        """pyautogui's own X connection while it holds the server (`perform_checked`)."""
        self._clicked_at = 0.0
        self._watch = _watch_screen()

    def size(self) -> tuple[int, int]:
        return (int(self._monitor["width"]), int(self._monitor["height"]))

    def grab(self) -> Frame:
        shot = self._mss.grab(self._monitor)
        return Frame(shot.raw, shot.width, shot.height)

    def pointer(self) -> tuple[int, int]:
        x, y = self._gui.position()
        return (int(x), int(y))

    def move(self, x: int, y: int) -> None:
        self._let_click_land()
        self._x11._moveTo(x, y)
        self.input_at = time.monotonic()

    def changes(self) -> ChangeLog | None:
        """The X server's own reports of each change (DAMAGE), when it has the extension."""
        if self._watch is None or self._watch.broken:
            return None
        return self._watch.log

    def _let_click_land(self) -> None:
        wait = self._clicked_at + CLICK_SETTLE - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def grab_rect(self, rect: Rect) -> np.ndarray:
        if self._held is not None:
            from Xlib import X

            root = self._held.screen().root
            image = root.get_image(rect.x, rect.y, rect.w, rect.h, X.ZPixmap, 0xFFFFFFFF)
            return np.frombuffer(image.data, np.uint8).reshape(rect.h, rect.w, 4)
        region = {"left": rect.x, "top": rect.y, "width": rect.w, "height": rect.h}
        shot = self._mss.grab(region)
        return np.frombuffer(shot.raw, np.uint8).reshape(shot.height, shot.width, 4)

    def perform_checked(self, action: Action, unchanged: Callable[[], bool]) -> bool:
        """Hold every other X client still (a server grab, on pyautogui's own connection,
        through which the input then goes), check, act, release: nothing can map a dialog
        or move a window between the check and the action."""
        display = getattr(self._x11, "_display", None)
        # Non-ASCII text is typed through a keymap changed for it, which the app must
        # fetch before the keys arrive: it cannot while every other client is held.
        remaps = action.kind is ActionKind.TYPE and not all(
            pyautogui_types(self._gui, c) for c in action.text
        )
        if display is None or action.kind not in HELD or remaps:
            return super().perform_checked(action, unchanged)
        if action.kind in MOVES:
            self._let_click_land()
        display.grab_server()
        display.sync()
        self._held = display
        try:
            if not unchanged():
                return False
            self._act(action)
        finally:
            self._held = None
            display.ungrab_server()
            display.sync()
        return True

    def workarea(self) -> Rect | None:
        """`_NET_WORKAREA` of the current desktop, as the window manager sets it around
        its panels."""
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            from Xlib import X

            root = display.screen().root
            prop = root.get_full_property(display.intern_atom("_NET_WORKAREA"), X.AnyPropertyType)
        except Exception:  # no window manager, or one that went away
            return None
        if prop is None or len(prop.value) < 4:
            return None
        x, y, w, h = (int(v) for v in prop.value[:4])
        return Rect(x, y, w, h) if w > 0 and h > 0 else None

    def focus_window_at(self, x: int, y: int) -> bool:
        """Through the window manager (EWMH `_NET_ACTIVE_WINDOW`): the client window at the
        point, found below the top-level window there by its `WM_STATE`, is activated when
        it is not the active one; waits until the window manager says it is."""
        display = getattr(self._x11, "_display", None)
        if display is None:
            return False
        try:
            return _focus_window_at(display, x, y)
        except Exception:  # a window vanished under us, or no window manager: do nothing
            return False

    def window_at(self, x: int, y: int) -> str | None:
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            return _window_title_at(display, x, y)
        except Exception:  # the window vanished under us
            return None

    def valid_key(self, key: str) -> bool:
        return bool(self._gui.isValidKey(key_name(key)))

    def perform(self, action: Action) -> None:
        self._act(action)

    def _act(self, action: Action) -> None:
        if action.kind in MOVES:
            self._let_click_land()
        try:
            self._input(action)
        finally:
            self.input_at = time.monotonic()
            if action.kind is ActionKind.CLICK:
                self._clicked_at = self.input_at

    def _input(self, action: Action) -> None:
        x11 = self._x11
        k = action.kind
        if k is ActionKind.CLICK:
            # Between the clicks of a double click, no pause: the app takes them as one.
            x, y = self._at(action.x, action.y)
            for _ in range(action.clicks):  # each press and release moves there first
                x11._click(x, y, action.button)
        elif k is ActionKind.TYPE:
            type_text(self._gui, action.text)
        elif k is ActionKind.PRESS:
            for _ in range(action.clicks):
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
            for i in range(1, DRAG_STEPS + 1):
                time.sleep(DRAG_SECONDS / DRAG_STEPS)
                x11._moveTo(
                    round(x + (x2 - x) * i / DRAG_STEPS), round(y + (y2 - y) * i / DRAG_STEPS)
                )
        finally:  # never leave the button held down (Ctrl-C mid-drag)
            x11._mouseUp(x2, y2, action.button)

    def _at(self, x: int | None, y: int | None) -> tuple[int, int]:
        """A point of an action, the pointer's where it has none (as pyautogui does)."""
        if x is None or y is None:
            here = self.pointer()
            return (here[0] if x is None else x, here[1] if y is None else y)
        return (x, y)

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
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


def _watch_screen() -> Any:
    """A `ScreenWatch` on the display, or None where DAMAGE cannot be used (`settle` then
    samples the screen)."""
    try:
        from mmcli.backends.damage import ScreenWatch

        return ScreenWatch(ChangeLog())
    except Exception:
        return None


FOCUS_WAIT = 0.5
"""How long the window manager may take to activate a window."""


def _focus_window_at(display: Any, x: int, y: int) -> bool:
    from Xlib import X
    from Xlib.protocol import event

    root = display.screen().root
    active_atom = display.intern_atom("_NET_ACTIVE_WINDOW")
    supported = root.get_full_property(display.intern_atom("_NET_SUPPORTED"), X.AnyPropertyType)
    if supported is None or active_atom not in supported.value:
        return False
    top = root.translate_coords(root, x, y).child
    client = _client_below(display, top) if top else None
    if client is None or _active(display, active_atom) == client.id:
        return False
    message = event.ClientMessage(
        window=client, client_type=active_atom, data=(32, [2, X.CurrentTime, 0, 0, 0])
    )
    mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
    root.send_event(message, event_mask=mask)
    display.flush()
    deadline = time.monotonic() + FOCUS_WAIT
    while time.monotonic() < deadline:
        if _active(display, active_atom) == client.id:
            return True
        time.sleep(0.01)
    return False


TITLE_LIMIT = 200
"""A window title longer than this is cut: it only names the window in messages."""


def _window_title_at(display: Any, x: int, y: int) -> str | None:
    """The title (EWMH `_NET_WM_NAME`, else `WM_NAME`) of the application window at the
    point: the client below the window manager's frame there, or, with no window manager,
    the first window below the top-level one that has a title."""
    from Xlib import X

    root = display.screen().root
    top = root.translate_coords(root, x, y).child
    if not top:
        return None
    net_name = display.intern_atom("_NET_WM_NAME")
    client = _client_below(display, top)
    pending = [client] if client is not None else [top]
    for _ in range(32):
        if not pending:
            break
        window = pending.pop(0)
        prop = window.get_full_property(net_name, X.AnyPropertyType)
        raw = prop.value if prop is not None else window.get_wm_name()
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        if raw:
            return str(raw)[:TITLE_LIMIT]
        pending.extend(window.query_tree().children)
    return None


def _active(display: Any, atom: int) -> int | None:
    from Xlib import X

    prop = display.screen().root.get_full_property(atom, X.AnyPropertyType)
    return int(prop.value[0]) if prop is not None and len(prop.value) else None


def _client_below(display: Any, window: Any, depth: int = 3) -> Any:
    """The application's window at or below a top-level (window manager frame) window."""
    from Xlib import X

    wm_state = display.intern_atom("WM_STATE")
    pending = [(window, 0)]
    while pending:
        current, level = pending.pop(0)
        if current.get_full_property(wm_state, X.AnyPropertyType) is not None:
            return current
        if level < depth:
            pending.extend((child, level + 1) for child in current.query_tree().children)
    return None


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
