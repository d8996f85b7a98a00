"""The window structure of an X display as its window manager tells it (EWMH): the
client windows it lists, the one it made active, the window at a point and its title,
and every top-level window as the X server stacks them with what it says it is (its
type, whether it is transient for another, override-redirect, the input focus).

Each function takes a python-xlib display and may raise when a window vanishes under it;
`X11Backend` catches that and answers "not known" (`mm doctor` says when it always
raises). Both python-xlib 0.33 and 0.15 (python3-xlib, pyautogui's dependency, which
installs the same `Xlib` package and may be the one active) are read right: they differ in
the type of a format-8 value (`as_bytes`).
"""

from __future__ import annotations

import time
from typing import Any

from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import MAX_CLASS, MAX_TITLE, StackedWindow, WindowRef, sanitized

FOCUS_WAIT = 0.5
"""How long the window manager may take to activate a window."""


def activate(display: Any, xid: int) -> bool:
    """Ask the window manager (EWMH `_NET_ACTIVE_WINDOW`, as a pager would) to make the
    client window `xid` the active one; True once it says it is, False when it has no
    such request or it did not within `FOCUS_WAIT`."""
    from Xlib import X
    from Xlib.protocol import event

    root = display.screen().root
    active_atom = display.intern_atom("_NET_ACTIVE_WINDOW")
    supported = root.get_full_property(display.intern_atom("_NET_SUPPORTED"), X.AnyPropertyType)
    if supported is None or active_atom not in supported.value:
        return False
    client = display.create_resource_object("window", xid)
    if active(display, active_atom) == client.id:
        return True
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
    windows = [display.create_resource_object("window", int(wid)) for wid in prop.value]
    described = _describe(display, windows)
    return [ref for w in windows if (ref := described[w.id][0]) is not None]


WINDOW_TYPES = (
    "NORMAL", "DIALOG", "DOCK", "NOTIFICATION", "TOOLTIP", "POPUP_MENU", "DROPDOWN_MENU",
    "MENU", "SPLASH", "UTILITY", "TOOLBAR", "DESKTOP", "COMBO", "DND",
)  # fmt: skip
"""EWMH `_NET_WM_WINDOW_TYPE_*`: what a window says it is."""


def stacked_windows(display: Any) -> list[StackedWindow] | None:
    """Every viewable top-level window, bottom to top, with what its client says it is;
    None with no window manager. Asked in a few batches of requests sent at once (each
    batch one round trip to the server): one request at a time, a desktop with Calc's
    31 top-level windows took 25 ms a call, and replay asks at every check."""
    from Xlib.protocol import request

    x = display.display
    root = display.screen().root
    mask = x.info.resource_id_mask  # an id's other bits tell the connection that made it
    stacking = _get_property(display, root, display.get_atom("_NET_CLIENT_LIST_STACKING"))
    tree = request.QueryTree(display=x, defer=True, window=root)
    focus = request.GetInputFocus(display=x, defer=True)
    clients = _property_value(root, stacking)
    if clients is None:
        return None  # no window manager: the window system says nothing we rely on
    managed = clients_by_frame(display, [int(w) for w in clients[1]])
    focused = focus_chain(display, focus)
    tree.reply()
    shown = []
    for top, attrs, frame in viewable(display, list(tree.children)):
        # A managed client's frame is the window manager's, even where it placed the frame
        # itself (IceWM's frames are override-redirect, and hold the input focus).
        client = managed.get(top.id)
        override = bool(attrs.override_redirect) and client is None
        shown.append((top, frame, top if override else client, override))
    described = _describe(display, [c for _, _, c, _ in shown if c is not None])
    found = []
    for top, frame, client, override in shown:
        ref, kind, transient, owner, pid = (
            described[client.id] if client is not None else (None, "", False, 0, 0)
        )
        if client is None or ref is None:  # not a client window: what it is is unknown
            found.append(
                StackedWindow(WindowRef("", frame), frame, focused=top.id in focused, top=top.id)
            )
            continue
        found.append(
            StackedWindow(
                ref,
                frame,
                kind=kind,
                transient=transient,
                owner=owner,
                override_redirect=override,
                focused=bool({top.id, client.id} & focused),
                xid=client.id,
                pid=pid,
                client=client.id & ~mask,
                top=top.id,
            )
        )
    return found


def viewable(display: Any, tops: list[Any]) -> list[tuple[Any, Any, Rect]]:
    """Each of `tops` (the root window's children, bottom to top) that is viewable, with
    its attributes and its place on the screen (border included); asked in one batch."""
    from Xlib import X
    from Xlib.protocol import request

    x = display.display
    attributes = [request.GetWindowAttributes(display=x, defer=True, window=t) for t in tops]
    geometries = [request.GetGeometry(display=x, defer=True, drawable=t) for t in tops]
    found = []
    for top, attrs, g in zip(tops, attributes, geometries, strict=True):
        if gone(attrs, g) or attrs.map_state != X.IsViewable:
            continue
        frame = Rect(g.x, g.y, g.width + 2 * g.border_width, g.height + 2 * g.border_width)
        found.append((top, attrs, frame))
    return found


def clients_by_frame(display: Any, clients: list[int]) -> dict[int, Any]:
    """The window manager's clients by the root window's child that holds each (its
    frame, or the client itself when it is not reparented): each level up asked for all
    clients at once."""
    from Xlib.protocol import request

    root_id = display.screen().root.id
    climbing = {wid: display.create_resource_object("window", wid) for wid in clients}
    tops = dict(climbing)
    found = {}
    for _ in range(8):
        if not climbing:
            break
        asked = {
            wid: request.QueryTree(display=display.display, defer=True, window=top)
            for wid, top in climbing.items()
        }
        climbing = {}
        for wid, tree in asked.items():
            if gone(tree):
                continue  # closed since the window manager listed it
            parent = tree.parent
            if parent is None or isinstance(parent, int) or parent.id == root_id:
                found[tops[wid].id] = display.create_resource_object("window", wid)
            else:
                tops[wid] = climbing[wid] = parent
    for wid in climbing:  # deeper than 8 levels: as far as was climbed
        found[tops[wid].id] = display.create_resource_object("window", wid)
    return found


Described = tuple[WindowRef | None, str, bool, int, int]


def _describe(display: Any, clients: list[Any]) -> dict[int, Described]:
    """Each client's `window_ref`, `_NET_WM_WINDOW_TYPE` (its first type EWMH names, ""
    for none), whether it is transient for another (`WM_TRANSIENT_FOR`) and for which
    (0: not told as a window), and its process (`_NET_WM_PID`, 0 when unset), all asked
    at once."""
    from Xlib import X, Xatom
    from Xlib.protocol import request

    x = display.display
    root = display.screen().root
    type_atom = display.get_atom("_NET_WM_WINDOW_TYPE")
    pid_atom = display.get_atom("_NET_WM_PID")
    names = {display.get_atom(f"_NET_WM_WINDOW_TYPE_{t}"): t for t in WINDOW_TYPES}
    asked = [
        (
            c,
            request.GetWindowAttributes(display=x, defer=True, window=c),
            _get_property(display, c, Xatom.WM_CLASS, Xatom.STRING),
            request.GetGeometry(display=x, defer=True, drawable=c),
            request.TranslateCoords(
                display=x, defer=True, src_wid=c, dst_wid=root, src_x=0, src_y=0
            ),
            _get_property(display, c, type_atom),
            _get_property(display, c, Xatom.WM_TRANSIENT_FOR),
            _get_property(display, c, pid_atom),
        )
        for c in clients
    ]
    found: dict[int, Described] = {}
    for c, attrs, wm_class, g, at, types, transient_for, pid in asked:
        if gone(attrs, g, at, wm_class[0], types[0], transient_for[0], pid[0]):
            found[c.id] = (None, "", False, 0, 0)  # closed under the query: not known
            continue
        ref = None
        if attrs.map_state == X.IsViewable:
            ref = WindowRef(_class_name(c, wm_class), Rect(at.x, at.y, g.width, g.height))
        kind = ""
        value = _property_value(c, types)
        for atom in value[1] if value is not None else ():
            if int(atom) in names:
                kind = names[int(atom)]
                break
        transient, owner = _first_long(_property_value(c, transient_for))
        process = _first_long(_property_value(c, pid))[1]
        found[c.id] = (ref, kind, transient, owner, process)
    return found


def _first_long(value: tuple[int, Any] | None) -> tuple[bool, int]:
    """Whether a property holds anything, and its first 32-bit value (0: none, or the
    property is of another format)."""
    if value is None or not len(value[1]):
        return False, 0
    return True, int(value[1][0]) if value[0] == 32 else 0


def gone(*asked: Any) -> bool:
    """Whether the window these requests asked about was destroyed under them (their
    replies are X errors): a window closes between the window manager's list and the
    questions about it, and is then simply not there, never a failure of the whole stack."""
    from Xlib import error

    gone = False
    for request in asked:
        try:
            request.reply()
        except (error.BadWindow, error.BadDrawable, error.BadMatch):
            gone = True
    return gone


PROPERTY_LONGS = 256
"""32-bit units of a property asked for in one request (`_get_property`); a longer one is
read again whole."""


def _get_property(display: Any, window: Any, atom: int, kind: int = 0) -> tuple[Any, int, int]:
    """A GetProperty request for `atom` of `window` (`kind` 0: any type), sent, its reply
    not awaited; with what it asked for."""
    from Xlib.protocol import request

    asked = request.GetProperty(
        display=display.display,
        defer=True,
        delete=False,
        window=window,
        property=atom,
        type=kind,
        long_offset=0,
        long_length=PROPERTY_LONGS,
    )
    return asked, atom, kind


def _property_value(window: Any, asked: tuple[Any, int, int]) -> tuple[int, Any] | None:
    """The (format, value) a `_get_property` request got; None when the window has no
    such property. One longer than was asked for is read again whole."""
    reply, atom, kind = asked
    reply.reply()
    if not reply.property_type:
        return None
    if reply.bytes_after:
        prop = window.get_full_property(atom, kind)
        return None if prop is None else (int(prop.format), prop.value)
    fmt, value = reply.value
    return int(fmt), value


def _class_name(window: Any, asked: tuple[Any, int, int]) -> str:
    """`WM_CLASS` as "instance.class" (as `get_wm_class` reads it), "" when unset."""
    value = _property_value(window, asked)
    if value is None or value[0] != 8:
        return ""
    parts = property_text(value[1], "ISO-8859-1").split("\0")
    return sanitized(".".join(parts[:2]), MAX_CLASS) if len(parts) >= 2 else ""


def as_bytes(value: bytes | str) -> bytes:
    """The bytes of a format-8 property or string python-xlib read. 0.33 gives bytes;
    0.15 (python3-xlib, which pyautogui brings and which installs the same `Xlib`) gives a
    str where they are valid UTF-8, decoded so: encoded back, they are the bytes sent."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def property_text(value: bytes | str, encoding: str) -> str:
    """A text property's value (`as_bytes`) decoded as its type says: `STRING` is
    ISO-8859-1 (ICCCM), `UTF8_STRING` UTF-8."""
    return as_bytes(value).decode(encoding, "replace")


def focus_chain(display: Any, asked: Any) -> set[int]:
    """The window with the X input focus and its ancestors (ids); empty when the focus is
    on no window or follows the pointer. `asked`: the GetInputFocus request, sent."""
    asked.reply()
    focus = asked.focus
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
    return _describe(display, [window])[window.id][0]


def window_title_at(display: Any, x: int, y: int) -> str | None:
    """The title (EWMH `_NET_WM_NAME`, else `WM_NAME`) of the application window at the
    point: the client below the window manager's frame there, or, with no window manager,
    the first window below the top-level one that has a title."""
    from Xlib import X, Xatom

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
        # WM_NAME (type STRING, as `get_wm_name` asks for it) decoded here as Latin-1:
        # python-xlib 0.15's `get_wm_name` gives an accented title as undecoded bytes.
        prop = window.get_full_property(net_name, X.AnyPropertyType)
        encoding = "utf-8"
        if prop is None:
            prop, encoding = window.get_full_property(Xatom.WM_NAME, Xatom.STRING), "ISO-8859-1"
        raw = property_text(prop.value, encoding) if prop is not None and prop.format == 8 else ""
        title = sanitized(raw, MAX_TITLE)
        if title:
            return title
        pending.extend(window.query_tree().children)
    return None


def window_pid(display: Any, xid: int) -> int | None:
    """The process of client window `xid`, as it says (EWMH `_NET_WM_PID`); None unset."""
    from Xlib import X

    window = display.create_resource_object("window", xid)
    prop = window.get_full_property(display.intern_atom("_NET_WM_PID"), X.AnyPropertyType)
    return int(prop.value[0]) if prop is not None and len(prop.value) else None


def active(display: Any, atom: int) -> int | None:
    from Xlib import X

    prop = display.screen().root.get_full_property(atom, X.AnyPropertyType)
    return int(prop.value[0]) if prop is not None and len(prop.value) else None


def client_below(display: Any, window: Any, depth: int = 3) -> Any:
    """The application's window at or below a top-level (window manager frame) window:
    the first, level by level, with `WM_STATE`; each level's windows asked at once."""
    from Xlib.protocol import request

    wm_state = display.intern_atom("WM_STATE")
    level = [window]
    for n in range(depth + 1):
        states = [(w, _get_property(display, w, wm_state)) for w in level]
        trees = (
            [request.QueryTree(display=display.display, defer=True, window=w) for w in level]
            if n < depth
            else []
        )
        for w, asked in states:
            if _property_value(w, asked) is not None:
                return w
        level = [child for tree in trees for child in _reply(tree).children]
        if not level:
            return None
    return None


def _reply(asked: Any) -> Any:
    asked.reply()
    return asked
