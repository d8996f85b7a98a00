"""The window structure of an X display as its window manager tells it (EWMH): the
client windows it lists, the one it made active, the window at a point and its title,
and every top-level window as the X server stacks them with what it says it is (its
type, whether it is transient for another, override-redirect, the input focus).

Each function takes a python-xlib display and may raise when a window vanishes under it;
`X11Backend` catches that and answers "not known".
"""

from __future__ import annotations

import time
from typing import Any

from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import StackedWindow, WindowRef

FOCUS_WAIT = 0.5
"""How long the window manager may take to activate a window."""


def focus_window_at(display: Any, x: int, y: int) -> bool:
    from Xlib import X
    from Xlib.protocol import event

    root = display.screen().root
    active_atom = display.intern_atom("_NET_ACTIVE_WINDOW")
    supported = root.get_full_property(display.intern_atom("_NET_SUPPORTED"), X.AnyPropertyType)
    if supported is None or active_atom not in supported.value:
        return False
    top = root.translate_coords(root, x, y).child
    client = client_below(display, top) if top else None
    if client is None or active(display, active_atom) == client.id:
        return False
    message = event.ClientMessage(
        window=client, client_type=active_atom, data=(32, [2, X.CurrentTime, 0, 0, 0])
    )
    mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
    root.send_event(message, event_mask=mask)
    display.flush()
    deadline = time.monotonic() + FOCUS_WAIT
    while time.monotonic() < deadline:
        if active(display, active_atom) == client.id:
            return True
        time.sleep(0.01)
    return False


def client_windows(display: Any) -> list[WindowRef] | None:
    from Xlib import X

    root = display.screen().root
    prop = root.get_full_property(
        display.intern_atom("_NET_CLIENT_LIST_STACKING"), X.AnyPropertyType
    )
    if prop is None:
        return None
    found = []
    for wid in prop.value:
        ref = window_ref(display, display.create_resource_object("window", int(wid)))
        if ref is not None:
            found.append(ref)
    return found


WINDOW_TYPES = (
    "NORMAL", "DIALOG", "DOCK", "NOTIFICATION", "TOOLTIP", "POPUP_MENU", "DROPDOWN_MENU",
    "MENU", "SPLASH", "UTILITY", "TOOLBAR", "DESKTOP", "COMBO", "DND",
)  # fmt: skip
"""EWMH `_NET_WM_WINDOW_TYPE_*`: what a window says it is."""


def stacked_windows(display: Any) -> list[StackedWindow] | None:
    from Xlib import X

    root = display.screen().root
    clients = root.get_full_property(
        display.get_atom("_NET_CLIENT_LIST_STACKING"), X.AnyPropertyType
    )
    if clients is None:
        return None  # no window manager: the window system says nothing we rely on
    managed = clients_by_frame(display, [int(w) for w in clients.value])
    focused = focus_chain(display)
    found = []
    for top in root.query_tree().children:
        attributes = top.get_attributes()
        if attributes.map_state != X.IsViewable:
            continue
        g = top.get_geometry()
        frame = Rect(g.x, g.y, g.width + 2 * g.border_width, g.height + 2 * g.border_width)
        # A managed client's frame is the window manager's, even where it placed the frame
        # itself (IceWM's frames are override-redirect, and hold the input focus).
        client = managed.get(top.id)
        override = bool(attributes.override_redirect) and client is None
        if override:
            client = top
        ref = window_ref(display, client) if client is not None else None
        if client is None or ref is None:  # not a client window: what it is is unknown
            found.append(StackedWindow(WindowRef("", frame), frame, focused=top.id in focused))
            continue
        found.append(
            StackedWindow(
                ref,
                frame,
                kind=window_type(display, client),
                transient=transient(display, client),
                override_redirect=override,
                focused=bool({top.id, client.id} & focused),
            )
        )
    return found


def clients_by_frame(display: Any, clients: list[int]) -> dict[int, Any]:
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


def window_type(display: Any, window: Any) -> str:
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


def transient(display: Any, window: Any) -> bool:
    from Xlib import X

    prop = window.get_full_property(display.get_atom("WM_TRANSIENT_FOR"), X.AnyPropertyType)
    return prop is not None and len(prop.value) > 0


def focus_chain(display: Any) -> set[int]:
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


def window_ref(display: Any, window: Any) -> WindowRef | None:
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


def window_title_at(display: Any, x: int, y: int) -> str | None:
    """The title (EWMH `_NET_WM_NAME`, else `WM_NAME`) of the application window at the
    point: the client below the window manager's frame there, or, with no window manager,
    the first window below the top-level one that has a title."""
    from Xlib import X

    root = display.screen().root
    top = root.translate_coords(root, x, y).child
    if not top:
        return None
    net_name = display.intern_atom("_NET_WM_NAME")
    client = client_below(display, top)
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


def active(display: Any, atom: int) -> int | None:
    from Xlib import X

    prop = display.screen().root.get_full_property(atom, X.AnyPropertyType)
    return int(prop.value[0]) if prop is not None and len(prop.value) else None


def client_below(display: Any, window: Any, depth: int = 3) -> Any:
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
