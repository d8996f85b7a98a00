"""Deciding whether the live screen is the screen a step was recorded on.

Matchers are small functions in a registry; each compares one aspect of the recorded step
with the live screen and returns the differences it will not tolerate (`regions`, in
`judge_regions`, also says what it excused and why). A `Policy` names
the tolerances. A step matches when no matcher reports a difference; otherwise the
differences say where, what, and by how much against the tolerance.

Two ways to look at the whole screen, chosen by what the recording has:

- `regions` (when the step's thumbnail is there): an exact diff of the downscaled
  screens finds *where* the screen changed; each changed region is then judged: outside
  the task area (a notification in a corner), a caret-like mark at a pointer step, or a
  small part of the screen in a state the recorded task itself shows at another step (a
  focus ring, a hovered button) is harmless; anything else, or anything touching the
  action's target, is not.
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

from mmcli.screen.fingerprint import (
    PATCH_SIZE,
    SCALE,
    Fingerprint,
    Frame,
    Grid,
    Patch,
    Rect,
    blank,
    changed_regions,
    grid_of,
    patch_of,
    small_slice,
)


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

AREA_MARGIN = 48
"""Changes this close to the task area still count as inside it."""
SEEN_MAX = (400, 80)
"""Largest region (px) that may be excused as a state seen elsewhere in the task: a
widget, not a dialog."""
SEEN_LIMIT = 3
"""At most this many regions per check may be excused as seen states."""
CARET_MAX = (8, 32)
"""A caret-like mark: at most this wide and tall (px)."""
FIELD_REACH = 480
"""At a keyboard step, a caret-like mark at most this far (px) left or right of the focus
point, on its line, may be the focused field's caret."""
PIXEL_THRESHOLD = 12
"""Luma levels by which a downscaled pixel must differ to count as changed."""
CARET_WIDTH = 3
"""A caret is at most this many full-resolution pixels wide; a glyph of even a small font
is wider, though once downscaled both fit in a caret-like mark."""
CARET_MIN_HEIGHT = 8
"""A caret is at least this many px tall (the height of a line of small text)."""
CARET_INK = 48
"""Luma levels by which a full-resolution pixel must differ from its surroundings to be ink."""
TYPED_MARGIN = 4
"""A changed region this close (px) to where the task types counts as in that field."""


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
    dist = recorded.patch.distance(live.patch, core=core)
    region = target_rect(recorded.patch, core=core)
    if dist.cells > tol.patch_cells:
        return [Difference("target", region, "patch cells", dist.cells, tol.patch_cells)]
    if dist.max_delta > tol.patch_delta:
        return [Difference("target", region, "patch level", dist.max_delta, tol.patch_delta)]
    return []


def _inside_area(region: Rect, ctx: Context) -> bool:
    if ctx.area is None or not ctx.tolerance.outside_area:
        return True
    near = ctx.area.grow(AREA_MARGIN)
    if ctx.workarea is not None:  # the margin never reaches into the desktop's panels
        # Regions are found on the downscaled screen: a row of cells that straddles the
        # panel's edge (a panel 30 px tall on an 800 px screen starts at y 770) is the
        # panel's, or a new taskbar button would be "near the task".
        inner = ctx.workarea.within_grid(SCALE) or ctx.workarea
        near = near.intersection(inner) or ctx.area
    return region.intersects(near)


@matcher("grid")
def match_grid(recorded: Fingerprint, live: Live, ctx: Context) -> list[Difference]:
    tol = ctx.tolerance
    dist = recorded.grid - live.grid
    found: list[Difference] = []
    for i, (bits, tone, detail) in enumerate(zip(dist.bits, dist.tone, dist.detail, strict=True)):
        if bits <= tol.tile_bits and tone <= tol.tile_tone and detail <= tol.tile_detail:
            continue
        region = dist.tile_rect(i, live.frame.width, live.frame.height)
        if any(region.intersects(r) for r in ctx.ignore) or not _inside_area(region, ctx):
            continue
        if bits > tol.tile_bits:
            found.append(Difference("grid", region, "tile bits", bits, tol.tile_bits))
        elif detail > tol.tile_detail:
            found.append(Difference("grid", region, "tile detail", detail, tol.tile_detail))
        else:
            found.append(Difference("grid", region, "tile tone", tone, tol.tile_tone))
    return sorted(found, key=lambda d: -d.amount)


def _seen(region: Rect, live: np.ndarray, refs: References) -> bool:
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


def in_focused_field(region: Rect, focus: tuple[int, int], *screens: np.ndarray) -> bool:
    """Whether `region` lies in the same field as the focus point (the last clicked one):
    on its line, and with no widget edge between them on any of `screens`.

    A caret blinks: replay may see it in the other phase than the recording did. A caret
    in *another* field means the keystrokes would land there, so the mark must be where
    the focused field's caret can be. An edge is a column that differs from the line's
    background in every row of the mark's height; text glyphs leave some rows blank (and
    where they do not, they block the excuse, which only costs waiting for the caret's
    phase).
    """
    fx, fy = focus
    if not region.y - SCALE <= fy <= region.bottom + SCALE:
        return False
    if region.x <= fx < region.right:
        return True
    if fx < region.x:
        start, stop = fx // SCALE, region.x // SCALE
    else:
        start, stop = -(-region.right // SCALE), fx // SCALE + 1
    if (stop - start) * SCALE > FIELD_REACH:
        return False
    for screen in screens:
        ys, _ = small_slice(region, screen.shape)
        band = screen[ys, start:stop].astype(np.int16)
        if band.size == 0:
            return False
        edges = (np.abs(band - int(np.median(band))) > PIXEL_THRESHOLD).all(axis=0)
        if edges.any():
            return False
    return True


def _ink_columns(luma: np.ndarray, region: Rect, origin: tuple[int, int], ink: int) -> np.ndarray:
    """Per column of `region`: whether it holds ink, against each row's background (the
    row's median over `luma`, which covers the region widened by a margin, so that a
    horizontal border crossing the region is background, not ink). `origin` is the
    top-left of `luma` in the same units as `region`."""
    x0 = max(region.x - origin[0], 0)
    y0 = max(region.y - origin[1], 0)
    rows = luma[y0 : y0 + region.h].astype(np.int16)
    background = np.median(rows, axis=1, keepdims=True).astype(np.int16)
    inside = rows[:, x0 : x0 + region.w]
    return np.asarray((np.abs(inside - background) > ink).any(axis=0))


def _luma_around(frame: Frame, region: Rect, margin: int) -> tuple[np.ndarray, int, int] | None:
    """The full-resolution luma of `region` grown by `margin`, clipped to the screen, with
    its top-left corner (None: the region is off the screen)."""
    x0, y0 = max(region.x - margin, 0), max(region.y - margin, 0)
    x1 = min(region.right + margin, frame.width)
    y1 = min(region.bottom + margin, frame.height)
    if x1 <= x0 or y1 <= y0:
        return None
    bgr = frame.pixels[y0:y1, x0:x1, :3].astype(np.int16)
    return (bgr[..., 0] + 2 * bgr[..., 1] + bgr[..., 2]) // 4, x0, y0


def ink_columns(frame: Frame, region: Rect) -> np.ndarray | None:
    """Per column of `region` on the full-resolution frame: whether it holds ink against
    its row's background (None: the region is off the screen)."""
    around = _luma_around(frame, region, 6)
    if around is None:
        return None
    luma, x0, y0 = around
    return _ink_columns(luma, region, (x0, y0), CARET_INK)


def caret_blink(frame: Frame, now: np.ndarray, region: Rect, reference: np.ndarray) -> bool:
    """Whether what changed in `region` is one caret-thin bar, a text line tall, drawn on
    one of the two screens only: a caret in its other blink phase, also right beside the
    last glyph typed, where the live screen's ink is not caret-thin (the glyph is there
    on both screens; only the bar comes and goes).

    Told from the downscaled difference: every changed pixel changed the same way (ink
    added, or ink taken away: a glyph replaced by another does both), within two adjacent
    downscaled columns, and the ink it amounts to, row by row, is at most `CARET_WIDTH`
    px wide (the contrast of ink on its background measured on the live screen) and at
    least `CARET_MIN_HEIGHT` px tall. A glyph added beside the text is wider than a caret
    somewhere (a bowl, an arch, a serif, a crossbar); a narrow one (l, I, |) is no wider,
    the limit of any rule that tells a caret by its shape."""
    # One downscaled pixel around the region too: a glyph's faint part beside it counts.
    ys, xs = small_slice(region.grow(SCALE), reference.shape)
    was, live = reference[ys, xs].astype(np.int16), now[ys, xs].astype(np.int16)
    if was.size == 0 or was.shape != live.shape:
        return False
    delta = was - live
    moved = np.abs(delta) > PIXEL_THRESHOLD // 2
    if not (np.abs(delta) > PIXEL_THRESHOLD).any():
        return False
    signs = np.sign(delta[moved])
    if not (signs == signs[0]).all():
        return False
    columns = np.flatnonzero(moved.any(axis=0))
    if columns[-1] - columns[0] > 1:
        return False
    contrast = _ink_contrast(frame, region)
    if contrast is None:
        return False
    width = np.abs(np.where(moved, delta, 0)).sum(axis=1) * SCALE / contrast
    if width.max() > CARET_WIDTH + 0.5:
        return False
    # The bar's height: its ink over its width (a full downscaled row holds its width).
    return float(width.sum()) * SCALE / float(width.max()) >= CARET_MIN_HEIGHT


def _ink_contrast(frame: Frame, region: Rect) -> float | None:
    """How far ink stands from its background around `region` on the live screen (luma
    levels): the median is the background, the farthest pixel from it the ink. Never less
    than `CARET_INK` * 2, so a caret with no text beside it (nothing to measure) reads as
    wider than it is, not narrower."""
    around = _luma_around(frame, region, 8)
    if around is None:
        return None
    luma = around[0]
    background = float(np.median(luma))
    ink = float(np.abs(luma - background).max())
    return max(ink, 2.0 * CARET_INK)


def on_focus_line(region: Rect, focus: tuple[int, int]) -> bool:
    """Whether `region` stands on the focus point's line, within a field's reach of it."""
    fx, fy = focus
    if not region.y - SCALE <= fy <= region.bottom + SCALE:
        return False
    return region.x - FIELD_REACH <= fx <= region.right + FIELD_REACH


def judge_regions(
    recorded: Fingerprint, live: Live, ctx: Context
) -> tuple[list[Difference], list[str]]:
    """The `regions` matcher, also returning what it excused and why."""
    reference = ctx.references.this
    if reference is None:
        return match_grid(recorded, live, ctx), []
    tol = ctx.tolerance
    now = blank(live.frame.small, [*recorded.masks, *ctx.ignore])
    regions = changed_regions(reference, now, PIXEL_THRESHOLD)
    target = target_rect(recorded.patch, core=True) if recorded.patch is not None else None
    seen_states = tol.seen_states and bool(ctx.references.path)
    found: list[Difference] = []
    excused: list[str] = []
    seen = 0
    for region in regions:
        size = region.w * region.h
        on_target = target is not None and region.intersects(target)
        if not on_target and not _inside_area(region, ctx):
            excused.append(f"outside the task area: {region}")
        elif not on_target and _left_behind(region, reference, ctx):
            excused.append(f"desktop that stayed where it was as the window moved: {region}")
        elif (
            tol.carets
            and ctx.pointer_step
            and region.w <= CARET_MAX[0]
            and region.h <= CARET_MAX[1]
            and caret_blink(live.frame, now, region, reference)
        ):
            excused.append(f"caret-like mark: {region}")
        elif (
            tol.carets
            and not ctx.pointer_step
            and recorded.patch is not None
            and region.w <= CARET_MAX[0]
            and region.h <= CARET_MAX[1]
            and in_focused_field(region, (recorded.patch.x, recorded.patch.y), reference, now)
            and caret_blink(live.frame, now, region, reference)
        ):
            excused.append(f"caret in the focused field: {region}")
        elif (
            not on_target
            and seen < SEEN_LIMIT
            and region.w <= SEEN_MAX[0]
            and region.h <= SEEN_MAX[1]
            and seen_states
            and _seen(region, now, ctx.references)
        ):
            seen += 1
            excused.append(f"a state the task shows at another step: {region}")
        else:
            what = "changed region on the target" if on_target else "changed region"
            found.append(Difference("regions", region, f"{what} (px)", size, 0))
    found.sort(key=lambda d: -d.amount)
    return found, excused


def _left_behind(region: Rect, reference: np.ndarray, ctx: Context) -> bool:
    """With the window moved (`--relocate`), whether a difference beside the task is only
    the desktop that stayed put: shifting the live screen back by the offset brings other
    desktop content (the wallpaper, another window) into the margin around the task. It is
    excused only when the live screen, *unshifted*, shows exactly what the recording
    showed both where the region is and where its content now comes from: nothing there
    is new (a dialog beside the moved window is new at the place it stands, and stays a
    difference). The one ring of downscaled pixels along the task area's edge, where the
    window's frame and the desktop share a pixel, is not asked to match. Inside the task
    area proper, nothing is excused this way."""
    unmoved, area = ctx.unmoved, ctx.area
    if unmoved is None or area is None or not ctx.tolerance.outside_area:
        return False
    if region.intersects(area) or unmoved.shape != reference.shape:
        return False
    edge = area.grow(SCALE)
    for dx, dy in ((0, 0), ctx.offset):
        place = Rect(region.x + dx, region.y + dy, region.w, region.h)
        ys, xs = small_slice(place, reference.shape)
        if (ys.stop - ys.start) * SCALE < place.h or (xs.stop - xs.start) * SCALE < place.w:
            return False  # partly off the screen: what is there cannot be told
        was = reference[ys, xs].astype(np.int16)
        differs = np.abs(was - unmoved[ys, xs].astype(np.int16)) > PIXEL_THRESHOLD
        # Cells on the task area's edge (in the recording's coordinates) are let be.
        cx = np.arange(xs.start, xs.stop) * SCALE - dx
        cy = np.arange(ys.start, ys.stop) * SCALE - dy
        off_x = (cx + SCALE <= edge.x) | (cx >= edge.right)
        off_y = (cy + SCALE <= edge.y) | (cy >= edge.bottom)
        judged = off_y[:, None] | off_x[None, :]
        if (differs & judged).any():
            return False
    return True


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
) -> Verdict:
    """Check the live `frame` against a recorded step. With `unmoved` (`--relocate`),
    `frame` is the live screen shifted back by `offset` and `unmoved` the screen as it
    stands."""
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
