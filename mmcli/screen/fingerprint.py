"""Screen fingerprints: what a recording keeps of the screen before each action.

A fingerprint has three parts, each a small value object that subtracts to a distance and
prints as a hex string that fits in TOML:

- `Grid`: the screen cut into tiles (16 x 9 by default: 120 x 120 px at 1920x1080); per
  tile a 64-bit difference hash (structure: widgets, edges), a mean tone (brightness:
  dialogs, disabled widgets) and a detail level (log of the tile's gradient energy: a
  small label appearing in an empty area, which averaging hashes cannot see). It tells
  *where* the screen changed.
- `Patch`: a 64 x 64 px patch around the action's target at full resolution, kept as
  16 x 16 cells of 4-bit luma. It tells whether the thing about to be clicked or typed
  into is still the thing that was.
- geometry and the pointer position.

A `Frame` is the grabbed screen, with a luma image downscaled 4x for the grid (about 2 ms
at 1920x1080) and the full-resolution pixels for the patch. Computing a fingerprint from a
frame, and the other image analysis (changed regions, text runs, templates), is
`analysis`'s; this module holds the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

SCALE = 4
"""The grid works on the screen downscaled by this factor."""
GRID_COLS, GRID_ROWS = 16, 9
PATCH_SIZE = 64
PATCH_CELLS = 16


@dataclass(frozen=True)
class Rect:
    """A screen rectangle in pixels."""

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

    def inside(self, outer: Rect) -> bool:
        """Whether this rectangle lies wholly within `outer`."""
        return (
            outer.x <= self.x
            and outer.y <= self.y
            and self.right <= outer.right
            and self.bottom <= outer.bottom
        )

    def holds(self, x: int, y: int) -> bool:
        """Whether the point (x, y) lies within this rectangle."""
        return self.x <= x < self.right and self.y <= y < self.bottom

    def intersects(self, other: Rect) -> bool:
        return (
            self.x < other.right
            and other.x < self.right
            and self.y < other.bottom
            and other.y < self.bottom
        )

    def union(self, other: Rect) -> Rect:
        x, y = min(self.x, other.x), min(self.y, other.y)
        return Rect(x, y, max(self.right, other.right) - x, max(self.bottom, other.bottom) - y)

    def intersection(self, other: Rect) -> Rect | None:
        x, y = max(self.x, other.x), max(self.y, other.y)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        return Rect(x, y, right - x, bottom - y) if right > x and bottom > y else None

    def minus(self, cut: Rect) -> list[Rect]:
        """This rectangle less `cut`: up to four bands (above, below, left, right)."""
        inner = self.intersection(cut)
        if inner is None:
            return [self]
        bands = [
            Rect(self.x, self.y, self.w, inner.y - self.y),
            Rect(self.x, inner.bottom, self.w, self.bottom - inner.bottom),
            Rect(self.x, inner.y, inner.x - self.x, inner.h),
            Rect(inner.right, inner.y, self.right - inner.right, inner.h),
        ]
        return [b for b in bands if b.w > 0 and b.h > 0]

    def grow(self, margin: int) -> Rect:
        return Rect(self.x - margin, self.y - margin, self.w + 2 * margin, self.h + 2 * margin)

    def moved(self, dx: int, dy: int) -> Rect:
        return Rect(self.x + dx, self.y + dy, self.w, self.h)

    def within_grid(self, step: int) -> Rect | None:
        """The largest rectangle inside this one whose edges fall on a `step` px grid:
        the cells of a downscaled screen that lie wholly in it (None: no whole cell)."""
        x, y = -(-self.x // step) * step, -(-self.y // step) * step
        right, bottom = self.right // step * step, self.bottom // step * step
        return Rect(x, y, right - x, bottom - y) if right > x and bottom > y else None

    def around_grid(self, step: int) -> Rect:
        """The smallest rectangle around this one whose edges fall on a `step` px grid:
        the cells of a downscaled screen it touches."""
        x, y = self.x // step * step, self.y // step * step
        right, bottom = -(-self.right // step) * step, -(-self.bottom // step) * step
        return Rect(x, y, right - x, bottom - y)

    def as_list(self) -> list[int]:
        return [self.x, self.y, self.w, self.h]

    @classmethod
    def parse(cls, text: str) -> Rect:
        """Parse `X,Y,W,H` (as given to `--ignore-region`)."""
        parts = text.replace("x", ",").split(",")
        if len(parts) != 4:
            raise ValueError(f"expected X,Y,W,H, got {text!r}")
        x, y, w, h = (int(p) for p in parts)
        if w <= 0 or h <= 0:
            raise ValueError(f"width and height must be positive in {text!r}")
        return cls(x, y, w, h)

    def __str__(self) -> str:
        return f"{self.w}x{self.h} at ({self.x}, {self.y})"


class Frame:
    """One grabbed screen, ready to fingerprint.

    `pixels` is the full-resolution BGRA buffer as a (height, width, 4) uint8 array;
    `small` the luma image downscaled by `SCALE`. Luma is computed on the BGRA bytes read
    as RGBX, i.e. with the red and blue weights swapped: a fixed, documented function is
    all a fingerprint needs, and it saves a channel shuffle that costs 5x the grab.
    """

    def __init__(self, raw: bytes | bytearray, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.raw = raw
        image = Image.frombuffer("RGBX", (width, height), raw, "raw", "RGBX", 0, 1)
        self.small: np.ndarray = np.asarray(image.convert("L").reduce(SCALE))

    @property
    def pixels(self) -> np.ndarray:
        return np.frombuffer(self.raw, np.uint8).reshape(self.height, self.width, 4)

    def thumbnail(self) -> Image.Image:
        """A true-colour image downscaled by `SCALE`, for humans."""
        image = Image.frombuffer("RGB", (self.width, self.height), self.raw, "raw", "BGRX", 0, 1)
        return image.reduce(SCALE)

    @staticmethod
    def small_from_thumbnail(image: Image.Image) -> np.ndarray:
        """The `small` luma image of a screen, recomputed from its `thumbnail()` (within
        one level of rounding)."""
        r, g, b = image.convert("RGB").split()
        return np.asarray(Image.merge("RGB", (b, g, r)).convert("L"))

    @classmethod
    def from_image(cls, image: Image.Image) -> Frame:
        """A frame from a PIL image (fake backends and tests)."""
        rgb = image.convert("RGB")
        b, g, r = (rgb.getchannel(c) for c in "BGR")
        bgrx = Image.merge("RGBA", (b, g, r, Image.new("L", rgb.size, 255)))
        return cls(bgrx.tobytes(), rgb.width, rgb.height)


def _popcount(values: np.ndarray) -> np.ndarray:
    return np.unpackbits(values.view(np.uint8).reshape(*values.shape, 8), axis=-1).sum(axis=-1)


@dataclass(frozen=True)
class GridDistance:
    """Per-tile distances between two grids, row-major."""

    cols: int
    rows: int
    bits: tuple[int, ...]
    """Hamming distance of each tile's 64-bit difference hash."""
    tone: tuple[int, ...]
    """Absolute difference of each tile's mean luma (0-255)."""
    detail: tuple[int, ...]
    """Absolute difference of each tile's detail level."""

    def tile_rect(self, index: int, width: int, height: int) -> Rect:
        return tile_rect(index, self.cols, self.rows, width, height)


@dataclass(frozen=True)
class Grid:
    cols: int
    rows: int
    hashes: tuple[int, ...]
    tones: tuple[int, ...]
    details: tuple[int, ...]

    def __sub__(self, other: Grid) -> GridDistance:
        if (self.cols, self.rows) != (other.cols, other.rows):
            raise ValueError("grids of different shapes cannot be compared")
        a = np.array(self.hashes, dtype=np.uint64)
        b = np.array(other.hashes, dtype=np.uint64)
        bits = _popcount(a ^ b)
        return GridDistance(
            self.cols,
            self.rows,
            tuple(int(v) for v in bits),
            _absdiff(self.tones, other.tones),
            _absdiff(self.details, other.details),
        )

    def __str__(self) -> str:
        return "".join(f"{h:016x}" for h in self.hashes)

    def tones_hex(self) -> str:
        return bytes(self.tones).hex()

    def details_hex(self) -> str:
        return bytes(self.details).hex()

    @classmethod
    def parse(cls, cols: int, rows: int, hashes: str, tones: str, details: str) -> Grid:
        n = cols * rows
        if len(hashes) != 16 * n or len(tones) != 2 * n or len(details) != 2 * n:
            raise ValueError(
                f"a {cols}x{rows} grid needs {16 * n} hash, {2 * n} tone and {2 * n} detail digits"
            )
        parsed = tuple(int(hashes[i : i + 16], 16) for i in range(0, len(hashes), 16))
        return cls(cols, rows, parsed, tuple(bytes.fromhex(tones)), tuple(bytes.fromhex(details)))


def _absdiff(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(abs(x - y) for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class PatchDistance:
    max_delta: int
    """Largest difference of one cell, in 4-bit levels (0-15)."""
    cells: int
    """Cells differing by more than one level."""

    def __str__(self) -> str:
        return f"{self.cells} cells differ (max {self.max_delta}/15)"


@dataclass(frozen=True)
class Patch:
    """Luma around an action's target: `PATCH_CELLS`^2 cells of 4 bits, row-major."""

    x: int
    y: int
    cells: bytes

    def __sub__(self, other: Patch) -> PatchDistance:
        return self.distance(other)

    def distance(
        self, other: Patch, core: bool = False, leave_out: Sequence[Rect] = ()
    ) -> PatchDistance:
        """Cell distances over the whole patch, or only its central half (`core`), less
        the cells wholly inside `leave_out` (screen rectangles)."""
        a = np.frombuffer(self.cells, np.uint8).astype(np.int16).reshape(PATCH_CELLS, -1)
        b = np.frombuffer(other.cells, np.uint8).astype(np.int16).reshape(PATCH_CELLS, -1)
        delta = np.abs(a - b)
        size = PATCH_SIZE // PATCH_CELLS
        x0, y0 = self.x - PATCH_SIZE // 2, self.y - PATCH_SIZE // 2
        for r in leave_out:
            c0, c1 = -(-(r.x - x0) // size), (r.right - x0) // size
            r0, r1 = -(-(r.y - y0) // size), (r.bottom - y0) // size
            c0, r0 = max(c0, 0), max(r0, 0)
            if c1 > c0 and r1 > r0:
                delta[r0:r1, c0:c1] = 0
        if core:
            q = PATCH_CELLS // 4
            delta = delta[q:-q, q:-q]
        return PatchDistance(int(delta.max(initial=0)), int((delta > 1).sum()))

    def __str__(self) -> str:
        return "".join(f"{c:x}" for c in self.cells)

    @classmethod
    def parse(cls, x: int, y: int, text: str) -> Patch:
        if len(text) != PATCH_CELLS * PATCH_CELLS:
            raise ValueError(f"a patch needs {PATCH_CELLS * PATCH_CELLS} hex digits")
        return cls(x, y, bytes(int(c, 16) for c in text))


@dataclass(frozen=True)
class Fingerprint:
    width: int
    height: int
    grid: Grid
    patch: Patch | None = None
    pointer: tuple[int, int] | None = None
    masks: tuple[Rect, ...] = field(default=())
    """Regions blanked before hashing the grid (expected to differ at replay)."""


def tile_rect(index: int, cols: int, rows: int, width: int, height: int) -> Rect:
    r, c = divmod(index, cols)
    x0, x1 = c * width // cols, (c + 1) * width // cols
    y0, y1 = r * height // rows, (r + 1) * height // rows
    return Rect(x0, y0, x1 - x0, y1 - y0)


def same_picture(a: Frame, b: Frame, threshold: int = 12, leave_out: Sequence[Rect] = ()) -> bool:
    """True when two frames show the same screen (used to wait for the screen to settle):
    no downscaled pixel differs by more than `threshold` luma levels, outside the
    downscaled pixels wholly within `leave_out`."""
    if a.small.shape != b.small.shape:
        return False
    moved = np.abs(a.small.astype(np.int16) - b.small.astype(np.int16)) > threshold
    for r in leave_out:
        x0, y0 = -(-r.x // SCALE), -(-r.y // SCALE)
        moved[y0 : max(r.bottom // SCALE, y0), x0 : max(r.right // SCALE, x0)] = False
    return not bool(moved.any())
