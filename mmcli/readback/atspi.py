"""The text of the field at a screen point, read through the accessibility tree (AT-SPI).

AT-SPI is a D-Bus protocol on a bus of its own (the accessibility bus). Apps whose
toolkit speaks it (GTK 3 and 4, Qt with accessibility on, Firefox, Chromium with
`--force-renderer-accessibility`, LibreOffice, Java with the ATK bridge) register their
tree there when they start, if the bus is up by then. This module speaks the protocol
directly (through `bus`), so it runs in a pip venv.

`read_field(point, pid)` finds the editable text object where the text was typed: the
focused object with a Text interface in the app of process `pid` (its window's
`_NET_WM_PID`), if it lies at `point`; else the deepest object at `point`
(`Component.GetAccessibleAtPoint`, screen coordinates, from the app's window there). It
returns the object's whole text, extents, role and app as a `FieldText`, or a `NotRead`
with the reason: no session bus, no accessibility bus, no app for that process, the app
not answering, nothing with text at the point.

Every call has a timeout (`Limits.call_timeout`), the whole read a deadline
(`Limits.deadline`), and what is read is bounded (apps, children, objects walked, depth,
characters, reply bytes), so a hostile or huge tree costs a bounded wait and memory.

What the apps measured needed to expose their text (besides the bus up before they
start): GTK 3 nothing; Qt 5 `QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1`; Chromium
`--force-renderer-accessibility` and `ACCESSIBILITY_ENABLED=1`. The session's
`org.a11y.Status.IsEnabled` set to true (as a desktop does while a screen reader runs)
stands for either environment variable. A read took 8-14 ms there (median of 20; a walk
of a Qt tree, which has no Collection interface, costs the most); a Tk app exposes
nothing, and the read says so at once.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jeepney import DBusAddress

from mmcli.readback.bus import Bus, BusError, CallFailed, session_bus_address
from mmcli.readback.field import FieldText, NotRead
from mmcli.screen.fingerprint import Rect

ROOT_PATH = "/org/a11y/atspi/accessible/root"
NULL_PATH = "/org/a11y/atspi/null"
REGISTRY = "org.a11y.atspi.Registry"
ACCESSIBLE = "org.a11y.atspi.Accessible"
COMPONENT = "org.a11y.atspi.Component"
TEXT = "org.a11y.atspi.Text"
COLLECTION = "org.a11y.atspi.Collection"
PROPERTIES = "org.freedesktop.DBus.Properties"
SCREEN_COORDS = 0  # ATSPI_COORD_TYPE_SCREEN

# AtspiStateType bits (at-spi2-core's atspi-constants.h).
STATE_ACTIVE = 1
STATE_EDITABLE = 7
STATE_FOCUSED = 12
STATE_SHOWING = 25
STATE_VISIBLE = 30
STATE_MANAGES_DESCENDANTS = 31

MANY_CHILDREN = 10000

Ref = tuple[str, str]
"""An accessible object: its app's unique bus name and its object path."""


@dataclass(frozen=True)
class Limits:
    """Bounds on one read: seconds and sizes."""

    call_timeout: float = 0.3
    deadline: float = 1.0
    """Seconds for the whole read, bus lookup included."""
    max_apps: int = 100
    max_children: int = 200
    """Children of one object looked at (a longer list is cut)."""
    max_nodes: int = 1500
    """Objects visited when searching an app for its focused object."""
    max_depth: int = 40
    max_chars: int = 65536
    """Characters of text read (a longer text is read as `partial`)."""


class DeadlinePassed(BusError):
    """The whole read's deadline passed."""


class Unavailable(Exception):
    """No accessibility read is possible (the message says why)."""


def read_field(
    point: tuple[int, int] | None,
    pid: int | None = None,
    limits: Limits | None = None,
    display: str | None = None,
) -> FieldText | NotRead:
    """The text of the field at `point` (screen pixels) in the app of process `pid` (None:
    any app); a `NotRead` when there is none or AT-SPI cannot be reached. `display`: the
    X display whose root window may name the accessibility bus (default `DISPLAY`)."""
    limits = limits or Limits()
    deadline = time.monotonic() + limits.deadline
    try:
        address = find_bus(display, limits.call_timeout)
        with Bus(address, timeout=min(limits.call_timeout, _left(deadline))) as bus:
            return _Reader(bus, limits, deadline).read(point, pid)
    except Unavailable as e:
        return NotRead("accessibility", str(e))
    except BusError as e:
        return NotRead("accessibility", f"the accessibility bus: {e}")


def find_bus(display: str | None = None, timeout: float = 0.3) -> str:
    """The accessibility bus's address: `AT_SPI_BUS_ADDRESS`, else the `AT_SPI_BUS`
    property of the X root window, else `org.a11y.Bus.GetAddress` on the session bus."""
    address = os.environ.get("AT_SPI_BUS_ADDRESS", "")
    if address:
        return address
    address = _root_window_bus(display or os.environ.get("DISPLAY", ""))
    if address:
        return address
    session = session_bus_address()
    if not session:
        raise Unavailable("no accessibility bus: no AT_SPI_BUS on the display, no session bus")
    a11y = DBusAddress("/org/a11y/bus", "org.a11y.Bus", "org.a11y.Bus")
    try:
        with Bus(session, timeout=timeout) as bus:
            (address,) = bus.call(a11y, "GetAddress")
    except CallFailed as e:
        raise Unavailable(f"no accessibility bus on the session bus ({e.name})") from None
    except BusError as e:
        raise Unavailable(f"the session bus: {e}") from None
    if not isinstance(address, str) or not address:
        raise Unavailable("the session bus gave no accessibility bus address")
    return address


def _root_window_bus(display: str) -> str:
    """The AT_SPI_BUS property of `display`'s root window ('' when absent or unreadable)."""
    if not display:
        return ""
    try:
        from Xlib import X
        from Xlib import display as xdisplay

        conn = xdisplay.Display(display)
    except Exception:  # python-xlib raises many kinds: no server, no Xauthority, bad name
        return ""
    try:
        root = conn.screen().root
        prop = root.get_full_property(conn.intern_atom("AT_SPI_BUS"), X.AnyPropertyType)
    except Exception:
        return ""
    finally:
        conn.close()
    if prop is None:
        return ""
    value = prop.value
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text.strip("\0").strip()


class _Reader:
    """One read on one connection to the accessibility bus."""

    def __init__(self, bus: Bus, limits: Limits, deadline: float) -> None:
        self.bus = bus
        self.limits = limits
        self.deadline = deadline

    # ----- calls -----------------------------------------------------------------------

    def call(
        self, ref: Ref, interface: str, method: str, sig: str | None = None, *args: Any
    ) -> Any:
        timeout = min(self.limits.call_timeout, _left(self.deadline))
        body = self.bus.call(DBusAddress(ref[1], ref[0], interface), method, sig, args, timeout)
        return body[0] if len(body) == 1 else body

    def prop(self, ref: Ref, interface: str, name: str) -> Any:
        _signature, value = self.call(ref, PROPERTIES, "Get", "ss", interface, name)
        return value

    def states(self, ref: Ref) -> set[int]:
        words = self.call(ref, ACCESSIBLE, "GetState")
        return {i for i in range(64) if i // 32 < len(words) and words[i // 32] >> (i % 32) & 1}

    def interfaces(self, ref: Ref) -> set[str]:
        return set(self.call(ref, ACCESSIBLE, "GetInterfaces")[:64])

    def extents(self, ref: Ref) -> Rect:
        x, y, w, h = self.call(ref, COMPONENT, "GetExtents", "u", SCREEN_COORDS)
        return Rect(int(x), int(y), max(0, int(w)), max(0, int(h)))

    def children(self, ref: Ref) -> list[Ref]:
        """The object's first `max_children` children (none of one with more than
        `MANY_CHILDREN`: a huge table or list, not a form)."""
        count = int(self.prop(ref, ACCESSIBLE, "ChildCount"))
        if count <= 0 or count > MANY_CHILDREN:
            return []
        return [
            _ref(c) for c in self.call(ref, ACCESSIBLE, "GetChildren")[: self.limits.max_children]
        ]

    # ----- the read --------------------------------------------------------------------

    def read(self, point: tuple[int, int] | None, pid: int | None) -> FieldText | NotRead:
        apps = self.apps(pid)
        if not apps:
            who = f"process {pid}" if pid is not None else "any process"
            return NotRead("accessibility", f"no accessible app for {who}")
        elsewhere = False
        for app in apps:
            focused = self.guarded(self.focused_text, app)
            if focused is None:
                continue
            if point is None or _near(self.extents(focused), point):
                return self.field(focused, app)
            elsewhere = True
        if point is not None:
            found = self.text_at(apps, point)
            if isinstance(found, tuple):
                return self.field(*found)
            if found:
                return NotRead("accessibility", found)
        if elsewhere:
            why = f"no accessible text field at {point} (the focused one is elsewhere)"
            return NotRead("accessibility", why)
        if point is not None:
            return NotRead("accessibility", f"no accessible window at {point}")
        return NotRead("accessibility", "no focused editable text field")

    def guarded(self, find: Callable[[Ref], Ref | None], app: Ref) -> Ref | None:
        """`find(app)`, or None when that app does not answer in time (another may)."""
        try:
            return find(app)
        except DeadlinePassed:
            raise
        except BusError:
            return None

    def apps(self, pid: int | None) -> list[Ref]:
        """The registered apps (those of process `pid` when given)."""
        registry = (REGISTRY, ROOT_PATH)
        apps = self.children(registry)[: self.limits.max_apps]
        if pid is None:
            return apps
        daemon = DBusAddress(
            "/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus"
        )
        out = []
        for app in apps:
            try:
                timeout = min(self.limits.call_timeout, _left(self.deadline))
                (owner,) = self.bus.call(
                    daemon, "GetConnectionUnixProcessID", "s", (app[0],), timeout
                )
            except CallFailed:
                continue
            if owner == pid:
                out.append(app)
        return out

    def focused_text(self, app: Ref) -> Ref | None:
        """The app's focused object, if it is editable text."""
        try:
            candidates: Iterable[Ref] = self.matches_focused(app)
        except CallFailed:  # no Collection interface (Qt, GTK 4): walk the tree
            candidates = self.walk_focused(app)
        for ref in candidates:
            if self.is_editable_text(ref):
                return ref
        return None

    def is_editable_text(self, ref: Ref) -> bool:
        return STATE_EDITABLE in self.states(ref) and TEXT in self.interfaces(ref)

    def matches_focused(self, app: Ref) -> list[Ref]:
        """Collection.GetMatches for objects whose states include FOCUSED (one call)."""
        states = [1 << STATE_FOCUSED, 0]
        match_all, sort_canonical = 1, 1
        rule: tuple[object, ...] = (
            states,
            match_all,
            {},
            match_all,
            [0, 0, 0, 0],
            match_all,
            [],
            match_all,
            False,
        )
        found = self.call(
            app, COLLECTION, "GetMatches", "(aiia{ss}iaiiasib)uib", rule, sort_canonical, 5, True
        )
        return [_ref(r) for r in found[:5]]

    def walk_focused(self, app: Ref) -> Iterator[Ref]:
        """The focused objects found walking the app's showing (or visible) objects,
        breadth first."""
        todo: deque[tuple[Ref, int]] = deque((c, 1) for c in self.children(app))
        seen = 0
        while todo and seen < self.limits.max_nodes:
            ref, depth = todo.popleft()
            seen += 1
            states = self.states(ref)
            if STATE_FOCUSED in states:
                yield ref
            # GTK 4 (4.8) sets SHOWING on its windows alone, VISIBLE on what they show:
            # its focused entry lies under objects that are only VISIBLE.
            if not states & {STATE_SHOWING, STATE_VISIBLE} or STATE_MANAGES_DESCENDANTS in states:
                continue
            if depth < self.limits.max_depth and len(todo) < self.limits.max_nodes:
                todo.extend((c, depth + 1) for c in self.children(ref))

    def text_at(self, apps: list[Ref], point: tuple[int, int]) -> tuple[Ref, Ref] | str:
        """(object, app) of the editable text at `point`, the deepest object there, from
        the apps' windows that hold the point (an active one first); else why not ('':
        no window there)."""
        windows = []
        for app in apps:
            for window in self.guarded_children(app):
                try:
                    if _near(self.extents(window), point, margin=0):
                        inactive = STATE_ACTIVE not in self.states(window)
                        windows.append((inactive, window, app))
                except DeadlinePassed:
                    raise
                except BusError:
                    continue
        reason = ""
        for _inactive, window, app in sorted(windows):
            ref = self.deepest_at(window, point)
            if ref != window and self.is_editable_text(ref):
                return ref, app
            role = self.call(ref, ACCESSIBLE, "GetRoleName")
            reason = reason or f"the object at {point} is no editable text (a {str(role)[:40]})"
        return reason

    def guarded_children(self, app: Ref) -> list[Ref]:
        try:
            return self.children(app)
        except DeadlinePassed:
            raise
        except BusError:
            return []

    def deepest_at(self, window: Ref, point: tuple[int, int]) -> Ref:
        """The deepest object at `point` under `window` (GetAccessibleAtPoint, repeated)."""
        ref = window
        for _ in range(self.limits.max_depth):
            try:
                inner = _ref(
                    self.call(ref, COMPONENT, "GetAccessibleAtPoint", "iiu", *point, SCREEN_COORDS)
                )
            except CallFailed:
                break
            if inner[1] == NULL_PATH or inner == ref:
                break
            ref = inner
        return ref

    def field(self, ref: Ref, app: Ref) -> FieldText:
        count = int(self.prop(ref, TEXT, "CharacterCount"))
        end = min(max(count, 0), self.limits.max_chars)
        text = str(self.call(ref, TEXT, "GetText", "ii", 0, end))[: self.limits.max_chars]
        role = str(self.call(ref, ACCESSIBLE, "GetRoleName"))[:100]
        name = str(self.prop(app, ACCESSIBLE, "Name"))[:100]
        return FieldText(
            text,
            "accessibility",
            rect=self.extents(ref),
            partial=count > end,
            role=role,
            app=name,
        )


def _ref(value: Any) -> Ref:
    """An object reference from a D-Bus `(so)`."""
    name, path = value
    return str(name), str(path)


def _near(rect: Rect, point: tuple[int, int], margin: int = 4) -> bool:
    x, y = point
    return (
        rect.x - margin <= x < rect.right + margin and rect.y - margin <= y < rect.bottom + margin
    )


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlinePassed("the read's deadline passed")
    return left
