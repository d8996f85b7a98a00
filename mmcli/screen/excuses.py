"""The `regions` matcher's excuses: named rules, run in order, each saying why a changed
region of the live screen is harmless.

`judge_regions` (in `matcher`) asks each rule of `EXCUSES` in turn about every region the
screen changed in; the first that applies excuses it, under its name (`Verdict.excused`
reads "outside the task area: 8x8 at (348, 200)"); a region no rule excuses is a
difference. The rules, in order:

- `outside the task area`: a change wholly away from where the task acts (a notification
  in a corner) and outside the windows it acts in, never one on the action's target;
- `desktop that stayed where it was as the window moved` (`--relocate`): the desktop
  around a moved window, unchanged where it stands;
- `caret-like mark`: at a pointer step, a caret in its other blink phase;
- `caret in the focused field`: at a keyboard step, the same in the field the keys go to;
- `a state the task shows at another step`: a small part of the screen (a focus ring, a
  hovered button) in a state the recorded task itself shows, at most `SEEN_LIMIT` a check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mmcli.screen.analysis import PIXEL_THRESHOLD, small_slice
from mmcli.screen.carets import CARET_MAX, caret_blink, in_focused_field
from mmcli.screen.fingerprint import SCALE, Fingerprint, Frame, Rect

if TYPE_CHECKING:
    from mmcli.screen.matcher import Context, References

SHADOW = 8
"""How far beside and below a moved window's frame its shadow may reach (a compositor's:
xfwm4 draws one, measured differing from the desktop 1-9 px below the frame): where the
moved window stands now, with it."""
AREA_MARGIN = 48
"""Changes this close to the task area still count as inside it."""
SEEN_MAX = (400, 80)
"""Largest region (px) that may be excused as a state seen elsewhere in the task: a
widget, not a dialog."""
SEEN_LIMIT = 3
"""At most this many regions per check may be excused as seen states."""
TYPED_MARGIN = 4
"""A changed region this close (px) to where the task types counts as in that field."""


@dataclass
class Scene:
    """One `regions` check as its excuses see it: the recorded step, the live screen and
    the recorded one (downscaled, masked alike), and what was excused so far."""

    recorded: Fingerprint
    frame: Frame
    """The live screen at full resolution."""
    now: np.ndarray
    """The live screen downscaled, with the step's masks and the ignored regions blanked."""
    reference: np.ndarray
    """The step's recorded screen, downscaled and blanked alike."""
    ctx: Context
    target: Rect | None = None
    """The action's target itself (the patch's central half), where it has one."""
    excused: Counter[str] = field(default_factory=Counter)
    """How many regions each rule has excused in this check."""

    def on_target(self, region: Rect) -> bool:
        return self.target is not None and region.intersects(self.target)


@dataclass(frozen=True)
class Excuse:
    """A named reason to let a changed region be."""

    name: str
    """What explanations call it: `Verdict.excused` lists "NAME: REGION"."""
    applies: Callable[[Rect, Scene], bool]

    def explain(self, region: Rect) -> str:
        return f"{self.name}: {region}"


def caret_sized(region: Rect) -> bool:
    return region.w <= CARET_MAX[0] and region.h <= CARET_MAX[1]


def _outside_area(region: Rect, scene: Scene) -> bool:
    return not scene.on_target(region) and not inside_area(region, scene.ctx)


def _desktop_left_behind(region: Rect, scene: Scene) -> bool:
    return not scene.on_target(region) and left_behind(
        region, scene.reference, scene.ctx, scene.now
    )


def _caret_at_pointer_step(region: Rect, scene: Scene) -> bool:
    return (
        scene.ctx.tolerance.carets
        and scene.ctx.pointer_step
        and caret_sized(region)
        and caret_blink(scene.frame, scene.now, region, scene.reference)
    )


def _caret_in_focused_field(region: Rect, scene: Scene) -> bool:
    patch = scene.recorded.patch
    return (
        scene.ctx.tolerance.carets
        and not scene.ctx.pointer_step
        and patch is not None
        and caret_sized(region)
        and in_focused_field(region, (patch.x, patch.y), scene.reference, scene.now)
        and caret_blink(scene.frame, scene.now, region, scene.reference)
    )


def _seen_state(region: Rect, scene: Scene) -> bool:
    refs = scene.ctx.references
    return (
        not scene.on_target(region)
        and scene.excused[SEEN_STATE.name] < SEEN_LIMIT
        and region.w <= SEEN_MAX[0]
        and region.h <= SEEN_MAX[1]
        and scene.ctx.tolerance.seen_states
        and bool(refs.path)
        and seen_elsewhere(region, scene.now, refs)
    )


OUTSIDE_AREA = Excuse("outside the task area", _outside_area)
LEFT_BEHIND = Excuse("desktop that stayed where it was as the window moved", _desktop_left_behind)
CARET = Excuse("caret-like mark", _caret_at_pointer_step)
FOCUSED_CARET = Excuse("caret in the focused field", _caret_in_focused_field)
SEEN_STATE = Excuse("a state the task shows at another step", _seen_state)
EXCUSES = (OUTSIDE_AREA, LEFT_BEHIND, CARET, FOCUSED_CARET, SEEN_STATE)
"""The rules in the order they are asked: the first that applies excuses the region."""


def excuse_for(region: Rect, scene: Scene) -> Excuse | None:
    """The first rule that excuses `region` (counted in `scene`), or None."""
    for excuse in EXCUSES:
        if excuse.applies(region, scene):
            scene.excused[excuse.name] += 1
            return excuse
    return None


def inner_workarea(workarea: Rect) -> Rect:
    """The work area (the screen less the desktop's panels) on the downscaled grid: a row
    of cells that straddles a panel's edge (a panel 30 px tall on an 800 px screen starts
    at y 770) is the panel's."""
    return workarea.within_grid(SCALE) or workarea


def task_window_areas(clients: Iterable[Rect], workarea: Rect | None) -> list[Rect]:
    """The client areas of the windows the task acted in, within the desktop's work area
    (a maximized window's client area never takes in a panel's clock)."""
    areas = sorted(set(clients), key=Rect.as_list)
    if workarea is None:
        return areas
    inner = inner_workarea(workarea)
    return [a for a in (r.intersection(inner) for r in areas) if a is not None]


def inside_area(region: Rect, ctx: Context) -> bool:
    """Whether a changed region is part of the task: near where it acts and what it
    changed (`Context.area`), or anywhere inside the windows it acted in (the app's
    window is the task: a cell changed far from the actions is a different sheet)."""
    if ctx.area is None or not ctx.tolerance.outside_area:
        return True
    near = ctx.area.grow(AREA_MARGIN)
    if ctx.workarea is not None:  # the margin never reaches into the desktop's panels
        # Regions are found on the downscaled screen, or a new taskbar button would be
        # "near the task".
        near = near.intersection(inner_workarea(ctx.workarea)) or ctx.area
    return region.intersects(near) or any(region.intersects(w) for w in ctx.task_windows)


def seen_elsewhere(region: Rect, live: np.ndarray, refs: References) -> bool:
    """Whether `region` of the live screen is in the state another step of the path shows,
    with no typing of the task into it between that step and this one: a field that
    already shows what the task is about to type is "already done", not "safe to do"."""
    ys, xs = small_slice(region.grow(SCALE), live.shape)
    want = live[ys, xs].astype(np.int16)
    for i, other in enumerate(refs.path):
        if other.shape != live.shape:
            continue
        typed = refs.typed[i] if i < len(refs.typed) else ()
        if any(region.intersects(r.grow(TYPED_MARGIN)) for r in typed):
            continue
        if np.abs(other[ys, xs].astype(np.int16) - want).max(initial=0) <= PIXEL_THRESHOLD:
            return True
    return False


def left_behind(
    region: Rect, reference: np.ndarray, ctx: Context, now: np.ndarray | None = None
) -> bool:
    """With the window moved (`--relocate`), whether a difference beside the task is only
    the desktop that stayed put: shifting the live screen back by the offset brings other
    desktop content (the wallpaper, another window) into the margin around the task. It is
    excused only when the live screen, *unshifted*, shows exactly what the recording
    showed both where the region is and where its content now comes from: nothing there
    is new (a dialog beside the moved window is new at the place it stands, and stays a
    difference). Where the moved task itself now stands (its area moved, and its window's
    frames where the window system tells them, `Context.moved_windows`), the live screen shows
    the task, which the shifted check judges: that is not asked to match the desktop
    recorded there.
    Where the content came from beyond the screen (the black strip shifting brings in
    along the edge the window moved towards), there is nothing to judge; nor in the
    desktop's panels (`Context.workarea`), where a clock ticks on its own.
    The one ring of downscaled pixels along the task area's edge, where the window's frame
    and the desktop share a pixel, is not asked to match. Inside the task area proper,
    nothing is excused this way: a region found as one block may take in cells of the
    area, and it is refused if any of those differs (`now`, the shifted live screen;
    without it, if it takes in any)."""
    unmoved, area = ctx.unmoved, ctx.area
    if unmoved is None or area is None or not ctx.tolerance.outside_area:
        return False
    if unmoved.shape != reference.shape:
        return False
    # A region found on the grid may reach into that ring (a title bar just inside the
    # area's edge); one that reaches further is inside the task, where it differs.
    proper = area.grow(-SCALE)
    inner = region.intersection(proper)
    if region.inside(proper) or (
        inner is not None and (now is None or _differs(inner, now, reference))
    ):
        return False
    edge = area.grow(SCALE)
    moved = area.moved(*ctx.offset)
    screen = Rect(0, 0, reference.shape[1] * SCALE, reference.shape[0] * SCALE)
    if ctx.workarea is not None:  # the panels change on their own (a clock): not judged
        screen = inner_workarea(ctx.workarea).intersection(screen) or screen
    for dx, dy in ((0, 0), ctx.offset):
        # Where the content came from lies partly beyond the screen's edge when the
        # region reaches the edge the window moved towards: shifted back, that strip is
        # black, and nothing beyond the screen can be new. The rest is judged, but for
        # the desktop's panels, which are never the task's surroundings.
        place = Rect(region.x + dx, region.y + dy, region.w, region.h).intersection(screen)
        if place is None:
            continue
        ys, xs = small_slice(place, reference.shape)
        was = reference[ys, xs].astype(np.int16)
        differs = np.abs(was - unmoved[ys, xs].astype(np.int16)) > PIXEL_THRESHOLD
        # Cells on the task area's edge (in the recording's coordinates) are let be.
        cx = np.arange(xs.start, xs.stop) * SCALE - dx
        cy = np.arange(ys.start, ys.stop) * SCALE - dy
        off_x = (cx + SCALE <= edge.x) | (cx >= edge.right)
        off_y = (cy + SCALE <= edge.y) | (cy >= edge.bottom)
        judged = off_y[:, None] | off_x[None, :]
        # Cells the moved task covers now (live coordinates) show the task.
        lx = np.arange(xs.start, xs.stop) * SCALE
        ly = np.arange(ys.start, ys.stop) * SCALE
        # (A cell it covers in part holds its edge: let be, as the ring above.)
        covered = np.zeros(differs.shape, bool)
        shadows = (
            Rect(w.x - SHADOW, w.y, w.w + 2 * SHADOW, w.h + SHADOW) for w in ctx.moved_windows
        )
        for task in (moved, *shadows):
            if task is not None:
                task_x = (lx + SCALE > task.x) & (lx < task.right)
                task_y = (ly + SCALE > task.y) & (ly < task.bottom)
                covered |= task_y[:, None] & task_x[None, :]
        if (differs & judged & ~covered).any():
            return False
    return True


def _differs(region: Rect, now: np.ndarray, reference: np.ndarray) -> bool:
    """Whether any downscaled pixel of `region` differs between the two screens."""
    ys, xs = small_slice(region, reference.shape)
    delta = np.abs(now[ys, xs].astype(np.int16) - reference[ys, xs].astype(np.int16))
    return bool((delta > PIXEL_THRESHOLD).any())
