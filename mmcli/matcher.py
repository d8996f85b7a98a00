"""Deciding whether the live screen is the screen a step was recorded on.

Matchers are small functions in a registry; each compares one aspect of a recorded
fingerprint with the live one and returns the differences it will not tolerate. A
`Policy` names which matchers run and with what tolerances. A step matches when no
matcher reports a difference; otherwise the differences say where, what, and by how much
against the tolerance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from mmcli.fingerprint import PATCH_SIZE, Fingerprint, Frame, Rect, fingerprint_of


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
    """Tolerate changes in tiles wholly outside the recording's task area."""


class Policy(StrEnum):
    """How strictly replay compares screens. `default` suits most apps."""

    STRICT = "strict"
    DEFAULT = "default"
    LOOSE = "loose"

    @property
    def tolerance(self) -> Tolerance:
        return _TOLERANCES[self]


_TOLERANCES = {
    Policy.STRICT: Tolerance(tile_bits=0, tile_tone=0, tile_detail=0, patch_cells=0,
                             patch_delta=1, outside_area=False),
    Policy.DEFAULT: Tolerance(tile_bits=4, tile_tone=3, tile_detail=1, patch_cells=6,
                              patch_delta=15, outside_area=True),
    Policy.LOOSE: Tolerance(tile_bits=8, tile_tone=6, tile_detail=3, patch_cells=24,
                            patch_delta=15, outside_area=True),
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
    live: Fingerprint

    @property
    def ok(self) -> bool:
        return not self.differences

    def summary(self, limit: int = 3) -> str:
        if self.ok:
            return "screen matches"
        parts = [str(d) for d in self.differences[:limit]]
        more = len(self.differences) - limit
        return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class Context:
    """What a matcher may know besides the two fingerprints."""

    tolerance: Tolerance
    ignore: Sequence[Rect] = ()
    area: Rect | None = None


Matcher = Callable[[Fingerprint, Fingerprint, Context], list[Difference]]
MATCHERS: dict[str, Matcher] = {}


def matcher(name: str) -> Callable[[Matcher], Matcher]:
    def register(fn: Matcher) -> Matcher:
        MATCHERS[name] = fn
        return fn

    return register


@matcher("geometry")
def match_geometry(
    recorded: Fingerprint, live: Fingerprint, ctx: Context
) -> list[Difference]:
    if (recorded.width, recorded.height) == (live.width, live.height):
        return []
    region = Rect(0, 0, live.width, live.height)
    return [Difference("geometry", region, f"screen is {live.width}x{live.height}, recorded "
                       f"{recorded.width}x{recorded.height}; width", live.width, recorded.width)]


AREA_MARGIN = 48
"""Tiles this close to the task area still count as inside it."""


@matcher("grid")
def match_grid(recorded: Fingerprint, live: Fingerprint, ctx: Context) -> list[Difference]:
    tol = ctx.tolerance
    area = ctx.area.grow(AREA_MARGIN) if ctx.area is not None and tol.outside_area else None
    dist = recorded.grid - live.grid
    found: list[Difference] = []
    for i, (bits, tone, detail) in enumerate(zip(dist.bits, dist.tone, dist.detail, strict=True)):
        if bits <= tol.tile_bits and tone <= tol.tile_tone and detail <= tol.tile_detail:
            continue
        region = dist.tile_rect(i, live.width, live.height)
        if any(region.intersects(r) for r in ctx.ignore):
            continue
        if area is not None and not region.intersects(area):
            continue
        if bits > tol.tile_bits:
            found.append(Difference("grid", region, "tile bits", bits, tol.tile_bits))
        elif detail > tol.tile_detail:
            found.append(Difference("grid", region, "tile detail", detail, tol.tile_detail))
        else:
            found.append(Difference("grid", region, "tile tone", tone, tol.tile_tone))
    return sorted(found, key=lambda d: -d.amount)


@matcher("target")
def match_target(recorded: Fingerprint, live: Fingerprint, ctx: Context) -> list[Difference]:
    tol = ctx.tolerance
    if recorded.patch is None or live.patch is None:
        return []
    dist = recorded.patch - live.patch
    half = PATCH_SIZE // 2
    region = Rect(recorded.patch.x - half, recorded.patch.y - half, PATCH_SIZE, PATCH_SIZE)
    if dist.cells > tol.patch_cells:
        return [Difference("target", region, "patch cells", dist.cells, tol.patch_cells)]
    if dist.max_delta > tol.patch_delta:
        return [Difference("target", region, "patch level", dist.max_delta, tol.patch_delta)]
    return []


DEFAULT_MATCHERS = ("geometry", "target", "grid")


def live_fingerprint(recorded: Fingerprint, frame: Frame) -> Fingerprint:
    """Fingerprint the live frame the way `recorded` was taken: same masks, same target."""
    target = (recorded.patch.x, recorded.patch.y) if recorded.patch else None
    return fingerprint_of(frame, target, recorded.masks)


def compare(
    recorded: Fingerprint,
    frame: Frame,
    policy: Policy = Policy.DEFAULT,
    ignore: Sequence[Rect] = (),
    matchers: Sequence[str] = DEFAULT_MATCHERS,
    area: Rect | None = None,
) -> Verdict:
    live = live_fingerprint(recorded, frame)
    ctx = Context(policy.tolerance, ignore, area)
    differences: list[Difference] = []
    for name in matchers:
        differences.extend(MATCHERS[name](recorded, live, ctx))
        if differences and name == "geometry":
            break
    return Verdict(tuple(differences), live)
