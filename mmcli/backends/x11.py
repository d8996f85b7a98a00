"""The X11 backend: mss for pixels, XTEST for input (`xinput`), on the X display named.

The display is a value given (`--display`, else $MM_DISPLAY, else $DISPLAY, read once by
`desktop.display.chosen`), never written to the environment: every connection is opened
to it by name, and an agent spawned is given it (`agent_env`). Input goes below any
library's process-wide settings: a program using mm (the SDK) with its own pyautogui
neither pauses mm's input nor stops it. Replay paces itself, and has its own fail-safe:
it checks the screen's corners between actions and raises `Aborted` (exit 130).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mmcli.backends import x11windows
from mmcli.backends.base import Backend, ChangeLog
from mmcli.backends.xinput import XInput
from mmcli.backends.xinput import import_pyautogui as import_pyautogui  # as docs/sdk.md has it
from mmcli.errors import DisplayError
from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import StackedWindow, WindowRef, over_the_keyboard

if TYPE_CHECKING:
    from mmcli.desktop.input_watch import EventSource, Grabber
    from mmcli.readback.field import FieldText, NotRead
    from mmcli.screen.under import SeenUnder

CLICK_SETTLE = 0.02
"""After a click, time for the app to take it before the pointer moves on (without it a Tk
dialog opened by the click was seen not to appear). Waited before the next pointer motion,
not after the click: keys typed into the clicked field need not wait."""
MOVES = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.MOVE, ActionKind.DRAG}
HELD = {ActionKind.CLICK, ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY, ActionKind.SCROLL}
"""Actions performed with the display held still from the check on (not drags: apps need
to see the pointer's motion as it happens)."""


class X11Backend(XInput, Backend):
    """The screen of the X display `name` through mss and DAMAGE; input through `XInput`."""

    def __init__(self, name: str) -> None:
        XInput.__init__(self, name)
        self._mss = _mss(name)
        self._monitor = self._mss.monitors[1]
        self._held: Any = None
        """The X connection while it holds the server (`perform_checked`)."""
        self._clicked_at = 0.0
        self._watch = _watch_screen(name)
        self._keeping = False
        """The server keeps each window's own pixels at our asking (`x11under.keep`)."""

    def agent_env(self) -> dict[str, str]:
        """The display, and what the apps an agent starts there need to expose their
        accessibility tree where the display has a bus (`readback.expose`)."""
        from mmcli.readback.expose import exposing_env

        return {"DISPLAY": self.name, **exposing_env(self.name, os.environ)}

    def size(self) -> tuple[int, int]:
        return (int(self._monitor["width"]), int(self._monitor["height"]))

    def grab(self) -> Frame:
        shot = self._mss.grab(self._monitor)
        return Frame(shot.raw, shot.width, shot.height)

    def move(self, x: int, y: int) -> None:
        self._let_click_land()
        self._xtest.move(x, y)
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
            data = x11windows.as_bytes(image.data)  # python-xlib 0.15: a str where valid UTF-8
            return np.frombuffer(data, np.uint8).reshape(rect.h, rect.w, 4)
        region = {"left": rect.x, "top": rect.y, "width": rect.w, "height": rect.h}
        shot = self._mss.grab(region)
        return np.frombuffer(shot.raw, np.uint8).reshape(shot.height, shot.width, 4)

    def perform_checked(self, action: Action, unchanged: Callable[[], bool]) -> bool:
        """Hold every other X client still (a server grab, on the backend's connection,
        through which the input then goes), check, act, release: nothing can map a dialog
        or move a window between the check and the action."""
        display = self._display
        # Text on no key is typed through a keymap changed for it, which the app must
        # fetch before the keys arrive: it cannot while every other client is held.
        remaps = action.kind is ActionKind.TYPE and not self._xtest.on_keys(action.text)
        if action.kind not in HELD or remaps:
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
        display = self._display
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

    def windows(self) -> list[WindowRef] | None:
        """The windows the window manager lists (EWMH `_NET_CLIENT_LIST_STACKING`, bottom
        to top); None with no window manager to ask."""
        display = self._display
        try:
            return x11windows.client_windows(display)
        except Exception:  # a window vanished under us, or no window manager
            return None

    def stack(self) -> list[StackedWindow] | None:
        """The top-level windows as the X server stacks them (the root window's children,
        bottom to top): each managed window's client with its frame, each
        override-redirect window as itself; with its EWMH type, `WM_TRANSIENT_FOR` and
        whether it has the input focus. None with no window manager (`windows`)."""
        display = self._display
        try:
            return x11windows.stacked_windows(display)
        except Exception:  # a window vanished under us, or no window manager
            return None

    def window_at(self, x: int, y: int) -> WindowRef | None:
        display = self._display
        try:
            root = display.screen().root
            top = root.translate_coords(root, x, y).child
            client = x11windows.client_below(display, top) if top else None
            return x11windows.window_ref(display, client) if client is not None else None
        except Exception:
            return None

    def keyboard_window(self) -> WindowRef | None:
        """EWMH `_NET_ACTIVE_WINDOW`: the client window the window manager gave the
        focus to (None with no window manager, or none active)."""
        return self._window_ref(self._active())

    def _active(self) -> int | None:
        """The xid `_NET_ACTIVE_WINDOW` names (None with no window manager, or none)."""
        display = self._display
        try:
            return x11windows.active(display, display.intern_atom("_NET_ACTIVE_WINDOW")) or None
        except Exception:  # no window manager
            return None

    def _window_ref(self, xid: int | None) -> WindowRef | None:
        if xid is None:
            return None
        display = self._display
        try:
            return x11windows.window_ref(display, display.create_resource_object("window", xid))
        except Exception:  # the window vanished under us
            return None

    def activate(self, xid: int) -> bool:
        """Through the window manager (EWMH `_NET_ACTIVE_WINDOW`): the client window `xid`
        is made the active one; waits until the window manager says it is."""
        display = self._display
        if not xid:
            return False
        try:
            return x11windows.activate(display, xid)
        except Exception:  # the window vanished under us, or no window manager: do nothing
            return False

    def seen_under(self, frame: Frame, covering: Sequence[StackedWindow]) -> SeenUnder | None:
        """What the server keeps of each top-level window (`x11under`) painted over the
        places of `covering`: a compositing manager's, else kept at our asking from the
        first such look on (that look reads the covering window's pixels where an app had
        not yet drawn again what it hid). None where nothing is kept."""
        from mmcli.backends import x11under
        from mmcli.screen.under import compose, shaded

        if not covering or any(w.top == 0 for w in covering):
            return None
        places = [shaded(w.frame) for w in covering]
        try:
            if not self._keeping and x11under.compositing(self._display) is None:
                self._keeping = x11under.keep(self._display)
            layers = x11under.layers(self._display, places, {w.top for w in covering})
        except Exception:  # a window vanished under us: nothing is told
            return None
        return None if layers is None else compose(frame, places, layers)

    def window_title_at(self, x: int, y: int) -> str | None:
        display = self._display
        try:
            return x11windows.window_title_at(display, x, y)
        except Exception:  # the window vanished under us
            return None

    def read_field(
        self, box: Rect | None, frame: Frame | None = None, prefer: str = ""
    ) -> FieldText | NotRead:
        """The focused field's text through the accessibility tree, in the app of the
        window that has the keyboard; else OCR of `box` (`readback.reader`)."""
        from mmcli.readback.reader import read

        if frame is None and box is not None:
            frame = self.grab()
        pid, window = self._keyboard() if prefer != "ocr" else (None, None)
        stacked: list[StackedWindow] = []  # asked once, by `covered`, for both

        def covered() -> list[Rect]:
            stacked[:] = self.stack() or []
            return over_the_keyboard(stacked)

        def under(frame: Frame, places: Sequence[Rect]) -> SeenUnder | None:
            return self._kept_under(frame, [w for w in stacked if w.frame in places])

        return read(pid, box, frame, prefer or "accessibility", covered, self.name, window, under)

    def _kept_under(self, frame: Frame, covering: Sequence[StackedWindow]) -> SeenUnder | None:
        """`frame` seen under `covering` (`seen_under`), only where a compositing manager
        keeps each window's pixels whole: what the server keeps at our asking holds, at
        first, the covering window's pixels where an app has yet to draw again what it
        hid, and a field read there would read the cover's text."""
        from mmcli.backends import x11under

        if not covering:
            return None
        try:
            if x11under.compositing(self._display) is None:
                return None
        except Exception:  # the server answers oddly: nothing is told
            return None
        return self.seen_under(frame, covering)

    def _keyboard(self) -> tuple[int | None, Rect | None]:
        """The process of the window that has the keyboard and its client area, from one
        look at `_NET_ACTIVE_WINDOW` (each None where not told)."""
        xid = self._active()
        if xid is None:
            return None, None
        try:
            pid = x11windows.window_pid(self._display, xid)
        except Exception:  # the window vanished under us
            return None, None
        ref = self._window_ref(xid)
        return pid, ref.rect if ref is not None else None

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

    def release_kept(self) -> None:
        """Let the server draw each window straight to the screen again, where it kept
        their pixels at our asking (`seen_under`)."""
        if self._keeping:
            from mmcli.backends import x11under

            self._keeping = False
            with contextlib.suppress(Exception):  # the server may be gone already
                x11under.let_go(self._display)

    def close(self) -> None:
        self.release_kept()
        if self._watch is not None:
            self._watch.close()
        self._mss.close()
        self.close_input()

    def open_grabber(self) -> Grabber:
        return _MSSGrabber(self.name)

    def input_source(self) -> EventSource | None:
        from mmcli.backends.xrecord import XRecordSource

        try:
            return XRecordSource(self.name)
        except Exception as e:  # no RECORD extension, or the connection was refused
            raise DisplayError(f"cannot watch the input of {self.name}: {e}") from None


def _mss(name: str) -> Any:
    """An mss screen grabber on the X display `name`."""
    import mss

    try:
        return mss.MSS(display=name) if hasattr(mss, "MSS") else mss.mss(display=name)
    except Exception as e:
        raise DisplayError(f"cannot grab display {name}: {e}") from None


def _watch_screen(name: str) -> Any:
    """A `ScreenWatch` on the display, or None where DAMAGE cannot be used (`settle` then
    samples the screen)."""
    try:
        from mmcli.backends.damage import ScreenWatch

        return ScreenWatch(ChangeLog(), name)
    except Exception:
        return None


class _MSSGrabber:
    """An mss instance of its own, for a thread other than the backend's."""

    def __init__(self, name: str) -> None:
        self._mss = _mss(name)
        self._monitor = self._mss.monitors[1]

    def grab(self) -> Frame:
        shot = self._mss.grab(self._monitor)
        return Frame(shot.raw, shot.width, shot.height)

    def close(self) -> None:
        self._mss.close()
