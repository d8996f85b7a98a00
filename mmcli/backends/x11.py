"""The X11 backend: mss for pixels, pyautogui's X11 layer (XTEST) for input (`xinput`).

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
from mmcli.backends.xinput import XInput, pyautogui_types
from mmcli.backends.xinput import import_pyautogui as import_pyautogui  # as docs/sdk.md has it
from mmcli.errors import DisplayError
from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import StackedWindow, WindowRef

if TYPE_CHECKING:
    from mmcli.desktop.input_watch import EventSource, Grabber

CLICK_SETTLE = 0.02
"""After a click, time for the app to take it before the pointer moves on (without it a Tk
dialog opened by the click was seen not to appear). Waited before the next pointer motion,
not after the click: keys typed into the clicked field need not wait."""
MOVES = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.MOVE, ActionKind.DRAG}
HELD = {ActionKind.CLICK, ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY, ActionKind.SCROLL}
"""Actions performed with the display held still from the check on (not drags: apps need
to see the pointer's motion as it happens)."""


class X11Backend(XInput, Backend):
    """The screen through mss and DAMAGE; input through `XInput` (pyautogui's X11 layer)."""

    def __init__(self) -> None:
        XInput.__init__(self)
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

    def windows(self) -> list[WindowRef] | None:
        """The windows the window manager lists (EWMH `_NET_CLIENT_LIST_STACKING`, bottom
        to top); None with no window manager to ask."""
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            return _client_windows(display)
        except Exception:  # a window vanished under us, or no window manager
            return None

    def stack(self) -> list[StackedWindow] | None:
        """The top-level windows as the X server stacks them (the root window's children,
        bottom to top): each managed window's client with its frame, each
        override-redirect window as itself; with its EWMH type, `WM_TRANSIENT_FOR` and
        whether it has the input focus. None with no window manager (`windows`)."""
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            return _stacked_windows(display)
        except Exception:  # a window vanished under us, or no window manager
            return None

    def window_at(self, x: int, y: int) -> WindowRef | None:
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            root = display.screen().root
            top = root.translate_coords(root, x, y).child
            client = _client_below(display, top) if top else None
            return _window_ref(display, client) if client is not None else None
        except Exception:
            return None

    def keyboard_window(self) -> WindowRef | None:
        """EWMH `_NET_ACTIVE_WINDOW`: the client window the window manager gave the
        focus to (None with no window manager, or none active)."""
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            active = _active(display, display.intern_atom("_NET_ACTIVE_WINDOW"))
            if not active:
                return None
            return _window_ref(display, display.create_resource_object("window", active))
        except Exception:  # the window vanished under us, or no window manager
            return None

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

    def window_title_at(self, x: int, y: int) -> str | None:
        display = getattr(self._x11, "_display", None)
        if display is None:
            return None
        try:
            return _window_title_at(display, x, y)
        except Exception:  # the window vanished under us
            return None

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


def _client_windows(display: Any) -> list[WindowRef] | None:
    from Xlib import X

    root = display.screen().root
    prop = root.get_full_property(
        display.intern_atom("_NET_CLIENT_LIST_STACKING"), X.AnyPropertyType
    )
    if prop is None:
        return None
    found = []
    for wid in prop.value:
        ref = _window_ref(display, display.create_resource_object("window", int(wid)))
        if ref is not None:
            found.append(ref)
    return found


WINDOW_TYPES = (
    "NORMAL", "DIALOG", "DOCK", "NOTIFICATION", "TOOLTIP", "POPUP_MENU", "DROPDOWN_MENU",
    "MENU", "SPLASH", "UTILITY", "TOOLBAR", "DESKTOP", "COMBO", "DND",
)  # fmt: skip
"""EWMH `_NET_WM_WINDOW_TYPE_*`: what a window says it is."""


def _stacked_windows(display: Any) -> list[StackedWindow] | None:
    from Xlib import X

    root = display.screen().root
    clients = root.get_full_property(
        display.get_atom("_NET_CLIENT_LIST_STACKING"), X.AnyPropertyType
    )
    if clients is None:
        return None  # no window manager: the window system says nothing we rely on
    managed = _clients_by_frame(display, [int(w) for w in clients.value])
    focused = _focus_chain(display)
    found = []
    for top in root.query_tree().children:
        attributes = top.get_attributes()
        if attributes.map_state != X.IsViewable:
            continue
        g = top.get_geometry()
        frame = Rect(g.x, g.y, g.width + 2 * g.border_width, g.height + 2 * g.border_width)
        override = bool(attributes.override_redirect)
        client = top if override else managed.get(top.id)
        ref = _window_ref(display, client) if client is not None else None
        if client is None or ref is None:  # not a client window: what it is is unknown
            found.append(StackedWindow(WindowRef("", frame), frame, focused=top.id in focused))
            continue
        found.append(
            StackedWindow(
                ref,
                frame,
                kind=_window_type(display, client),
                transient=_transient(display, client),
                override_redirect=override,
                focused=bool({top.id, client.id} & focused),
            )
        )
    return found


def _clients_by_frame(display: Any, clients: list[int]) -> dict[int, Any]:
    """The window manager's clients by the root window's child that holds each (its
    frame, or the client itself when it is not reparented)."""
    root_id = display.screen().root.id
    found = {}
    for wid in clients:
        client = display.create_resource_object("window", wid)
        top = client
        for _ in range(8):
            parent = top.query_tree().parent
            if parent is None or isinstance(parent, int) or parent.id == root_id:
                break
            top = parent
        found[top.id] = client
    return found


def _window_type(display: Any, window: Any) -> str:
    """The first type of `_NET_WM_WINDOW_TYPE` that EWMH names ("" for none)."""
    from Xlib import X

    prop = window.get_full_property(display.get_atom("_NET_WM_WINDOW_TYPE"), X.AnyPropertyType)
    if prop is None:
        return ""
    names = {display.get_atom(f"_NET_WM_WINDOW_TYPE_{t}"): t for t in WINDOW_TYPES}
    for atom in prop.value:
        if int(atom) in names:
            return names[int(atom)]
    return ""


def _transient(display: Any, window: Any) -> bool:
    from Xlib import X

    prop = window.get_full_property(display.get_atom("WM_TRANSIENT_FOR"), X.AnyPropertyType)
    return prop is not None and len(prop.value) > 0


def _focus_chain(display: Any) -> set[int]:
    """The window with the X input focus and its ancestors (ids); empty when the focus is
    on no window or follows the pointer."""
    focus = display.get_input_focus().focus
    root = display.screen().root
    chain: set[int] = set()
    for _ in range(16):
        if isinstance(focus, int) or focus is None or focus.id == root.id:
            break
        chain.add(focus.id)
        focus = focus.query_tree().parent
    return chain


def _window_ref(display: Any, window: Any) -> WindowRef | None:
    """A client window's class and its client area in screen coordinates (None if it is
    not mapped or went away)."""
    from Xlib import X

    if window.get_attributes().map_state != X.IsViewable:
        return None
    names = window.get_wm_class()
    wm_class = ".".join(names) if names else ""
    geometry = window.get_geometry()
    at = display.screen().root.translate_coords(window, 0, 0)  # its origin on the screen
    return WindowRef(wm_class, Rect(at.x, at.y, geometry.width, geometry.height))


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
