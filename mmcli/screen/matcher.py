"""Deciding whether the live screen is the screen a step was recorded on.

Matchers are small functions in a registry; each compares one aspect of the recorded step
with the live screen and returns the differences it will not tolerate (`regions`, in
`judge_regions`, also says what it excused and why). A `Policy` names
the tolerances. A step matches when no matcher reports a difference; otherwise the
differences say where, what, and by how much against the tolerance.

Two ways to look at the whole screen, chosen by what the recording has:

- `regions` (when the step's thumbnail is there): an exact diff of the downscaled
  screens finds *where* the screen changed; each changed region is then asked of the
  named excuses in order (`excuses`): outside the task area (a notification in a corner),
  a caret-like mark, or a small part of the screen in a state the recorded task itself
  shows at another step (a focus ring, a hovered button) is harmless; anything else, or
  anything touching the action's target, is not. Windows the window system calls
  harmless here (`windows.left_out`: a notification over no target) are blanked first.
- `grid` (fingerprint only): per-tile hash, tone and detail distances against tolerances.

`target` always checks the patch around the action's target at full resolution (its
central 32 x 32 px when `regions` judges the rest), and `geometry` refuses a screen of
another size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

import numpy as np

from mmcli.screen.analysis import (
    PIXEL_THRESHOLD,
    blank,
    changed_regions,
    grid_of,
    patch_of,
)
from mmcli.screen.excuses import Scene, excuse_for, inside_area
from mmcli.screen.fingerprint import PATCH_SIZE, Fingerprint, Frame, Grid, Patch, Rect


@dataclass(frozen=True)
class Tolerance:
    tile_bits: int
    """Difference-hash bits (of 64) a tile may differ by: caret blinks cost 1-2."""
    tile_tone: int
    """Mean luma levels (of 255) a tile may differ by."""
    tile_detail: int
    """Detail levels (about 6 % of gradient energy each) a tile may differ by."""
    patch_cells: int
    """Target-patch cells (of 256) that may differ by more than one level."""
    patch_delta: int
    """Largest difference of one target-patch cell, in levels of 15."""
    outside_area: bool
    """Tolerate changes wholly outside the recording's task area."""
    seen_states: bool
    """Tolerate small regions in a state the recorded task shows at another step."""
    carets: bool
    """Tolerate caret-like marks (thin, short, vertical) at pointer steps, and at keyboard
    steps in the field that has the focus (a caret blinking in another phase)."""


class Policy(StrEnum):
    """How strictly replay compares screens. `default` suits most apps."""

    STRICT = "strict"
    DEFAULT = "default"
    LOOSE = "loose"

    @property
    def tolerance(self) -> Tolerance:
        return _TOLERANCES[self]


_TOLERANCES = {
    Policy.STRICT: Tolerance(
        tile_bits=0,
        tile_tone=0,
        tile_detail=0,
        patch_cells=0,
        patch_delta=1,
        outside_area=False,
        seen_states=False,
        carets=False,
    ),
    Policy.DEFAULT: Tolerance(
        tile_bits=4,
        tile_tone=3,
        tile_detail=1,
        patch_cells=6,
        patch_delta=15,
        outside_area=True,
        seen_states=True,
        carets=True,
    ),
    Policy.LOOSE: Tolerance(
        tile_bits=8,
        tile_tone=6,
        tile_detail=3,
        patch_cells=24,
        patch_delta=15,
        outside_area=True,
        seen_states=True,
        carets=True,
    ),
}


@dataclass(frozen=True)
class Difference:
    """One thing about the live screen that the step did not expect."""

    matcher: str
    region: Rect
    measure: str
    amount: int
    tolerance: int

    def __str__(self) -> str:
        return f"{self.matcher}: {self.measure} {self.amount} > {self.tolerance} in {self.region}"


@dataclass(frozen=True)
class Verdict:
    differences: tuple[Difference, ...]
    excused: tuple[str, ...] = ()
    """Changes seen and tolerated, with the reason (for diagnostics)."""

    @property
    def ok(self) -> bool:
        return not self.differences

    def summary(self, limit: int = 3) -> str:
        if self.ok:
            return "screen matches"
        parts = [str(d) for d in self.differences[:limit]]
        more = len(self.differences) - limit
        return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


@dataclass
class References:
    """Recorded downscaled screens (from the thumbnails), where the recording has them,
    with the step's masks and the ignored regions already blanked (`prepare`)."""

    this: np.ndarray | None = None
    """The step being checked."""
    path: Sequence[np.ndarray] = ()
    """The other steps on the recorded path through it (states the task passes through)."""
    typed: Sequence[Sequence[Rect]] = ()
    """For each of `path`: where the task types between that step and the step being
    checked (what its typing changed). A region there, in the state of that step, is the
    typing already done (or undone), never a harmless state."""

    @classmethod
    def prepare(
        cls,
        this: np.ndarray | None,
        path: Sequence[np.ndarray],
        masks: Sequence[Rect],
        typed: Sequence[Sequence[Rect]] = (),
    ) -> References:
        if this is None:
            return cls()
        return cls(blank(this, masks), [blank(p, masks) for p in path], typed)


@dataclass
class Live:
    """The live screen, with the parts matchers need computed once, on demand."""

    frame: Frame
    recorded: Fingerprint

    @cached_property
    def patch(self) -> Patch | None:
        p = self.recorded.patch
        return patch_of(self.frame, p.x, p.y) if p is not None else None

    @cached_property
    def grid(self) -> Grid:
        g = self.recorded.grid
        return grid_of(self.frame.small, self.recorded.masks, g.cols, g.rows)


@dataclass(frozen=True)
class Context:
    """What a matcher may know besides the recorded step and the live screen."""

    tolerance: Tolerance
    ignore: Sequence[Rect] = ()
    area: Rect | None = None
    references: References = field(default_factory=References)
    pointer_step: bool = True
    """The action is a pointer action (click, scroll, move, drag), not keyboard input."""
    workarea: Rect | None = None
    """The screen less the desktop's panels (their clock, the taskbar), where known."""
    unmoved: np.ndarray | None = None
    """With `--relocate`, the live downscaled screen as it stands, when the check looks at
    it shifted back by `offset` (the window moved): the desktop around the window did not
    move with it."""
    offset: tuple[int, int] = (0, 0)
    left_out: Sequence[Rect] = ()
    """Windows the window system says are harmless here (`windows.left_out`: a
    notification or a dock over no target), left out of the `regions` check."""
    moved_windows: Sequence[Rect] = ()
    """With `--relocate`, the frames of the task's windows where they stand now, as the
    window system tells it (title bars included): the live screen there shows the task."""
    task_windows: Sequence[Rect] = ()
    """The client areas of the windows the task acted in, as recorded: a change anywhere
    inside them is inside the task, however far from its actions (a cell of the sheet the
    task types into)."""


Matcher = Callable[[Fingerprint, Live, Context], list[Difference]]
MATCHERS: dict[str, Matcher] = {}


def matcher(name: str) -> Callable[[Matcher], Matcher]:
    def register(fn: Matcher) -> Matcher:
        MATCHERS[name] = fn
        return fn

    return register


def target_rect(patch: Patch, core: bool = False) -> Rect:
    """The patch's square on screen, or its central half: the target itself."""
    half = PATCH_SIZE // (4 if core else 2)
    return Rect(patch.x - half, patch.y - half, 2 * half, 2 * half)


@matcher("geometry")
def match_geometry(recorded: Fingerprint, live: Live, ctx: Context) -> list[Difference]:
    w, h = live.frame.width, live.frame.height
    if (recorded.width, recorded.height) == (w, h):
        return []
    return [
        Difference(
            "geometry",
            Rect(0, 0, w, h),
            f"screen is {w}x{h}, recorded {recorded.width}x{recorded.height}; width",
            w,
            recorded.width,
        )
    ]


@matcher("target")
def match_target(recorded: Fingerprint, live: Live, ctx: Context) -> list[Difference]:
    tol = ctx.tolerance
    if recorded.patch is None or live.patch is None:
        return []
    # With a recorded screen to compare regions against, the patch's outer half (the
    # neighbours of the target) is judged by `regions`; the target itself stays strict.
    core = ctx.references.this is not None
    # At a keyboard step the target is where the keys go, in the field typed into: what
    # the step masks there (a param's text, longer or shorter at replay) is relaxed in
    # the patch as in the regions. A click on a mask stays strict; beside one (a longer
    # name above the line clicked), only what the mask covers of the patch is relaxed.
    relaxed = recorded.masks
    if ctx.pointer_step and any(m.holds(recorded.patch.x, recorded.patch.y) for m in relaxed):
        relaxed = ()
    dist = recorded.patch.distance(live.patch, core=core, leave_out=relaxed)
    region = target_rect(recorded.patch, core=core)
    if dist.cells > tol.patch_cells:
        return [Difference("target", region, "patch cells", dist.cells, tol.patch_cells)]
    if dist.max_delta > tol.patch_delta:
        return [Difference("target", region, "patch level", dist.max_delta, tol.patch_delta)]
    return []


@matcher("grid")
def match_grid(recorded: Fingerprint, live: Live, ctx: Context) -> list[Difference]:
    tol = ctx.tolerance
    dist = recorded.grid - live.grid
    found: list[Difference] = []
    for i, (bits, tone, detail) in enumerate(zip(dist.bits, dist.tone, dist.detail, strict=True)):
        if bits <= tol.tile_bits and tone <= tol.tile_tone and detail <= tol.tile_detail:
            continue
        region = dist.tile_rect(i, live.frame.width, live.frame.height)
        if any(region.intersects(r) for r in ctx.ignore) or not inside_area(region, ctx):
            continue
        if bits > tol.tile_bits:
            found.append(Difference("grid", region, "tile bits", bits, tol.tile_bits))
        elif detail > tol.tile_detail:
            found.append(Difference("grid", region, "tile detail", detail, tol.tile_detail))
        else:
            found.append(Difference("grid", region, "tile tone", tone, tol.tile_tone))
    return sorted(found, key=lambda d: -d.amount)


def judge_regions(
    recorded: Fingerprint, live: Live, ctx: Context
) -> tuple[list[Difference], list[str]]:
    """The `regions` matcher, also returning what it excused and why: each changed region
    is asked of the excuses in order (`excuses.EXCUSES`); one none excuses is a difference."""
    reference = ctx.references.this
    if reference is None:
        return match_grid(recorded, live, ctx), []
    now = blank(live.frame.small, [*recorded.masks, *ctx.ignore, *ctx.left_out])
    reference = blank(reference, [*ctx.ignore, *ctx.left_out])
    target = target_rect(recorded.patch, core=True) if recorded.patch is not None else None
    scene = Scene(recorded, live.frame, now, reference, ctx, target)
    found: list[Difference] = []
    excused = [f"{LEFT_OUT}: {r}" for r in ctx.left_out]
    for region in changed_regions(reference, now, PIXEL_THRESHOLD):
        excuse = excuse_for(region, scene)
        if excuse is not None:
            excused.append(excuse.explain(region))
            continue
        what = "changed region on the target" if scene.on_target(region) else "changed region"
        found.append(Difference("regions", region, f"{what} (px)", region.w * region.h, 0))
    found.sort(key=lambda d: -d.amount)
    return found, excused


LEFT_OUT = "a notification or dock window over no target, left out"

DEFAULT_MATCHERS = ("geometry", "target", "regions")


def compare(
    recorded: Fingerprint,
    frame: Frame,
    policy: Policy = Policy.DEFAULT,
    ignore: Sequence[Rect] = (),
    area: Rect | None = None,
    references: References | None = None,
    pointer_step: bool = True,
    matchers: Sequence[str] = DEFAULT_MATCHERS,
    workarea: Rect | None = None,
    unmoved: Frame | None = None,
    offset: tuple[int, int] = (0, 0),
    left_out: Sequence[Rect] = (),
    moved_windows: Sequence[Rect] = (),
    task_windows: Sequence[Rect] = (),
) -> Verdict:
    """Check the live `frame` against a recorded step. With `unmoved` (`--relocate`),
    `frame` is the live screen shifted back by `offset` and `unmoved` the screen as it
    stands. `left_out`: rectangles of windows the `regions` check leaves out (a
    notification over no target); the coarse grid never leaves anything out.
    `task_windows`: the client areas of the task's windows, all inside the task."""
    live = Live(frame, recorded)
    ctx = Context(
        policy.tolerance,
        ignore,
        area,
        references or References(),
        pointer_step,
        workarea,
        None if unmoved is None else blank(unmoved.small, [*recorded.masks, *ignore]),
        offset,
        left_out,
        moved_windows,
        task_windows,
    )
    differences: list[Difference] = []
    excused: list[str] = []
    for name in matchers:
        if name == "regions":
            found, why = judge_regions(recorded, live, ctx)
            differences.extend(found)
            excused.extend(why)
        else:
            differences.extend(MATCHERS[name](recorded, live, ctx))
        if differences and name == "geometry":
            break
    return Verdict(tuple(differences), tuple(excused))
