"""The windows of the hostile matrix (`hostile.py`) on a real desktop: where one goes
(`placement`, pure geometry), and how it is opened, placed and given the focus or not
(`arrange`).

    client = placement("over", task, task_frame, target, (150, 50), frame, work_area)
    arranged = arrange(bench, case)   # after the app started, before replay
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.desktop.bench import SMALL_DIALOG, SMALL_TERMINAL
from benchmarks.desktop.desktop import PANEL_HEIGHT, Geometry

if TYPE_CHECKING:
    from benchmarks.desktop.bench import Bench
    from benchmarks.desktop.hostile import Case

HELPER = Path(__file__).resolve().parent / "assets" / "hostile_window.py"
INSET = 12
"""How far (px) inside the task window's client area a window put "over" it stands."""
MARGIN = 40
"""How far (px) every window not put on the target stays from it (frame included)."""
EDGE_OVERLAP = 8
"""How much (px) of the task's client area a window at its "edge" covers."""
FAR_GAP = 120
"""The least distance (px) between a "far" window's frame and the task window's frame."""
FAR_INSET = 16
"""How far (px) inside the work area's corners a "far" window stands."""
LARGEST = (170, 80)
"""The size a managed window that does not fit inside the task window beside the target
is shrunk to (Chromium's popup opens at the app window's size), for every place."""


class CannotPlace(RuntimeError):
    """The window cannot be where the case puts it: it does not fit (too big for the
    task window), or the app does not let it stay over the task window once the task has
    the focus. The case is not applicable to this app."""


@dataclass(frozen=True)
class Box:
    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    def grown(self, by: int) -> Box:
        return Box(self.x - by, self.y - by, self.w + 2 * by, self.h + 2 * by)

    def contains(self, point: tuple[int, int]) -> bool:
        return self.x <= point[0] < self.right and self.y <= point[1] < self.bottom

    def inside(self, other: Box) -> bool:
        return (
            other.x <= self.x
            and other.y <= self.y
            and self.right <= other.right
            and self.bottom <= other.bottom
        )

    def overlaps(self, other: Box) -> bool:
        return (
            self.x < other.right
            and other.x < self.right
            and self.y < other.bottom
            and other.y < self.bottom
        )

    def gap(self, other: Box) -> int:
        """How far apart the two are: the larger of the horizontal and vertical gaps (0
        when they overlap or touch)."""
        return max(
            other.x - self.right,
            self.x - other.right,
            other.y - self.bottom,
            self.y - other.bottom,
            0,
        )


@dataclass(frozen=True)
class Extents:
    """A window manager's frame around a client (`_NET_FRAME_EXTENTS`); none for an
    override-redirect window."""

    left: int = 0
    right: int = 0
    top: int = 0
    bottom: int = 0

    def outer(self, client: Box) -> Box:
        return Box(
            client.x - self.left,
            client.y - self.top,
            client.w + self.left + self.right,
            client.h + self.top + self.bottom,
        )

    def client(self, outer: Box) -> Box:
        return Box(
            outer.x + self.left,
            outer.y + self.top,
            outer.w - self.left - self.right,
            outer.h - self.top - self.bottom,
        )


def placement(
    place: str,
    task: Box,
    task_frame: Extents,
    target: tuple[int, int],
    size: tuple[int, int],
    frame: Extents,
    area: Box,
) -> Box:
    """Where a window of `size` (its client; `frame` around it) goes for the place:
    "target" centred on the first target; "over" inside the task's client area (`INSET`
    from its edges, frame included) and `MARGIN` clear of the target; "edge" covering
    `EDGE_OVERLAP` px of the task's client area at its right (else left) edge, `MARGIN`
    clear of the target; "far" in the corner of the work `area` farthest from the task's
    frame, at least `FAR_GAP` from it. Returns the client's box; `CannotPlace` when the
    window does not fit there."""
    w, h = size
    ow, oh = w + frame.left + frame.right, h + frame.top + frame.bottom
    clear = [
        frame.client(Box(x, y, ow, oh))
        for x, y in _candidates(place, task, task_frame, (ow, oh), area)
        if place in ("target", "far") or not Box(x, y, ow, oh).grown(MARGIN).contains(target)
    ]
    if place == "target":
        return Box(target[0] - w // 2, target[1] - h // 2, w, h)
    if place == "far":
        around = task_frame.outer(task)
        best = max(clear, key=lambda c: frame.outer(c).gap(around))
        if frame.outer(best).gap(around) < FAR_GAP:
            raise CannotPlace(f"no corner of the work area is {FAR_GAP} px from the task")
        return best
    if not clear:
        raise CannotPlace(f"a {ow}x{oh} window does not fit {place} the task clear of its target")
    return clear[0]


def _candidates(
    place: str, task: Box, task_frame: Extents, outer: tuple[int, int], area: Box
) -> list[tuple[int, int]]:
    """The outer top-left corners to try for the place, in order of preference."""
    ow, oh = outer
    if place == "over":
        room = task.grown(-INSET)
        spots = [
            (room.right - ow, room.bottom - oh),
            (room.x, room.bottom - oh),
            (room.right - ow, room.y),
            (room.x, room.y),
        ]
        return [(x, y) for x, y in spots if Box(x, y, ow, oh).inside(room)]
    if place == "edge":
        ys = [task.y + (task.h - oh) // 2, task.bottom - INSET - oh, task.y + INSET]
        xs = [task.right - EDGE_OVERLAP, task.x + EDGE_OVERLAP - ow]
        return [(x, y) for x in xs for y in ys if Box(x, y, ow, oh).inside(area)]
    if place == "far":
        room = area.grown(-FAR_INSET)
        return [(x, y) for x in (room.x, room.right - ow) for y in (room.y, room.bottom - oh)]
    return []


# ----- on the desktop ---------------------------------------------------------------------


@dataclass(frozen=True)
class Arranged:
    """What the window of a case turned out to be, once arranged (kept with the run)."""

    wid: int
    client: Box
    outer: Box
    override_redirect: bool
    focused: bool
    """The window holds the X input focus."""
    task_focused: bool
    """The task window holds it."""
    covers_task: bool
    """Its frame covers part of the task window's client area."""
    above_task: bool
    """It is stacked above the task window."""


OTHER: dict[str, tuple[list[str], str, str]] = {
    "dialog": (SMALL_DIALOG, "^session$", "classname"),
    "terminal": (SMALL_TERMINAL, "^logs$", "classname"),
    **{
        kind: (
            [sys.executable, str(HELPER), "--kind", kind, "--title", f"hostile {kind}"],
            f"^hostile {kind}$",
            "name",
        )
        for kind in ("normal", "override", "tooltip")
    },
}
"""Another app's window of each kind (but the notification, from dunst): how it is
started, and its name or class to find it by."""


def arrange(bench: Bench, case: Case) -> Arranged:
    """Open the case's window (the app's own was opened at start), put it at the case's
    place relative to the task window and its first target, and give it the focus or
    give the focus back to the task window without raising it (the window then stays over
    the task, and a click into the task would raise the task over it)."""
    d, app = bench.desktop, bench.app
    wid = _open(bench, case)
    override = _override_redirect(wid)
    frame = Extents() if override else _frame_extents(wid)
    task, target = _box(app.geometry()), app.first_field()
    task_frame, area = _frame_extents(app.wid), _work_area(d.size)

    def place(name: str) -> Box:
        own = d.geometry(wid)
        return placement(name, task, task_frame, target, (own.w, own.h), frame, area)

    try:  # every place with the same window: one that fits beside the target
        place("over")
    except CannotPlace:
        if override:
            raise
        _shrink(wid, bench)
    client = place(case.place.key)
    got = d.move(wid, client.x, client.y)
    if (got.x, got.y) != (client.x, client.y):
        raise RuntimeError(f"the {case.kind.key} window went to {got.x},{got.y}, not {client}")
    if case.focus.takes and not override:
        d.activate(wid)
    elif case.focus.takes:
        _focus(wid)
    elif case.focus.under:
        d.activate(app.wid)  # raised over the window, and focused
    else:
        # Chromium and Tk raise their window when it is given the focus: the window is
        # raised again after, without the focus.
        _focus(app.wid)
        _run("xdotool", "windowraise", str(wid))
    d.settle()
    focus = _focused()
    outer = frame.outer(_box(d.geometry(wid)))
    covers = outer.overlaps(task)
    if covers != case.place.covers_task:
        raise RuntimeError(f"the window at {outer} {'covers' if covers else 'misses'} {task}")
    above = _stacked_above(wid, app.wid)
    if covers and above is case.focus.under:
        where = "over" if above else "under"
        raise CannotPlace(f"the {case.kind.key} window stayed {where} the task window")
    return Arranged(wid, client, outer, override, focus == wid, focus == app.wid, covers, above)


def _open(bench: Bench, case: Case) -> int:
    d, app = bench.desktop, bench.app
    if case.whose.own:
        return d.wait_window(app.own_title(case.kind.key), timeout=30)
    if case.kind.key == "notification":
        d.notify("New mail", "3 unread messages from Alice")
        return d.wait_window("^Dunst$", by="class", timeout=10)
    argv, pattern, by = OTHER[case.kind.key]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app.extra.append(proc)
    return d.wait_window(pattern, by=by, timeout=30)


def _run(*argv: str) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    return result.stdout.strip() if result.returncode == 0 else ""


def _box(g: Geometry) -> Box:
    return Box(g.x, g.y, g.w, g.h)


def _override_redirect(wid: int) -> bool:
    return "Override Redirect State: yes" in _run("xwininfo", "-id", str(wid))


def _frame_extents(wid: int, timeout: float = 3.0) -> Extents:
    """The window manager's frame around a managed window, once it has said it."""
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(
            r"= (\d+), (\d+), (\d+), (\d+)", _run("xprop", "-id", str(wid), "_NET_FRAME_EXTENTS")
        )
        if found:
            return Extents(*(int(v) for v in found.groups()))
        if time.monotonic() > deadline:
            return Extents()
        time.sleep(0.05)


def _work_area(size: tuple[int, int]) -> Box:
    """The desktop less its panels (`_NET_WORKAREA`), else the screen above our panel."""
    found = re.search(r"= (\d+), (\d+), (\d+), (\d+)", _run("xprop", "-root", "_NET_WORKAREA"))
    if found:
        return Box(*(int(v) for v in found.groups()))
    return Box(0, 0, size[0], size[1] - PANEL_HEIGHT)


def _shrink(wid: int, bench: Bench, timeout: float = 3.0) -> None:
    g = bench.desktop.geometry(wid)
    w, h = min(g.w, LARGEST[0]), min(g.h, LARGEST[1])
    if (w, h) == (g.w, g.h):
        return
    _run("xdotool", "windowsize", str(wid), str(w), str(h))
    deadline = time.monotonic() + timeout
    while bench.desktop.geometry(wid) == g and time.monotonic() < deadline:
        time.sleep(0.05)
    bench.desktop.settle()


def _focus(wid: int, timeout: float = 2.0) -> None:
    """The X input focus to the window, without raising it (`XSetInputFocus`); an app
    may keep it elsewhere (Qt, in its modal dialog): the case says where it was."""
    _run("xdotool", "windowfocus", str(wid))
    deadline = time.monotonic() + timeout
    while _focused() != wid and time.monotonic() < deadline:
        time.sleep(0.05)


def _stacked_above(wid: int, other: int) -> bool:
    """Whether the window (its frame, if managed) is stacked above the other's."""
    from Xlib import display

    conn = display.Display()
    try:
        root = conn.screen().root

        def top(xid: int) -> int:
            window = conn.create_resource_object("window", xid)
            while (parent := window.query_tree().parent).id != root.id:
                window = parent
            return int(window.id)

        order = [int(w.id) for w in root.query_tree().children]  # bottom to top
        return order.index(top(wid)) > order.index(top(other))
    finally:
        conn.close()


def _focused() -> int | None:
    out = _run("xdotool", "getwindowfocus")
    return int(out) if out.isdigit() else None
