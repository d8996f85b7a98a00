"""Image analysis: computing a fingerprint from a frame, and finding what changed.

- `fingerprint_of` (`grid_of`, `patch_of`): the values of `fingerprint` from a `Frame`.
- `changed_region(s)`, `changed_regions_fine`: where two screens differ, as separate
  regions (a clock ticking in one corner and a caret in another are two).
- `grow_to_text_run`, `merge_rects`, `covered_share`: a changed region widened to the run
  of text it belongs to, rectangles joined, how much of a region masks cover.
- `blank`, `small_slice`: masks and screen rectangles on the downscaled image.
- `find_template`: where a recorded piece of screen appears on another.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from itertools import takewhile

import numpy as np
from PIL import Image

from mmcli.screen.fingerprint import (
    GRID_COLS,
    GRID_ROWS,
    PATCH_CELLS,
    PATCH_SIZE,
    SCALE,
    Fingerprint,
    Frame,
    Grid,
    Patch,
    Rect,
)

HASH_W, HASH_H = 9, 8
"""Each tile is box-resized to 9x8 luma cells; 8x8 horizontal differences make 64 bits."""
DHASH_STEP = 2
"""A difference-hash bit is set when the right cell is brighter by more than this, so that
flat areas do not flip bits on one level of noise."""
DETAIL_SCALE = 12
"""Detail level = DETAIL_SCALE * log2(1 + gradient energy): one level is about 6 %."""
LINE_GROW = 6
"""A volatile region grows at most this many downscaled rows up and down (a text line)."""
PIXEL_THRESHOLD = 12
"""Luma levels by which a downscaled pixel must differ to count as changed (what the
matcher counts)."""


def covered_share(masks: Iterable[Rect], region: Rect) -> float:
    """The share (0-1) of `region` that `masks` cover together (overlaps counted once)."""
    if region.w <= 0 or region.h <= 0:
        return 0.0
    covered = np.zeros((-(-region.h // SCALE), -(-region.w // SCALE)), dtype=bool)
    for m in masks:
        inside = m.intersection(region)
        if inside is None:
            continue
        x0, y0 = (inside.x - region.x) // SCALE, (inside.y - region.y) // SCALE
        x1 = -(-(inside.right - region.x) // SCALE)
        y1 = -(-(inside.bottom - region.y) // SCALE)
        covered[y0:y1, x0:x1] = True
    return float(covered.mean())


def blank(small: np.ndarray, masks: Iterable[Rect]) -> np.ndarray:
    """A downscaled image with `masks` (screen pixels) filled with 0; the input if none."""
    masks = list(masks)
    if not masks:
        return small
    out = small.copy()
    for m in masks:
        ys, xs = small_slice(m, out.shape)
        out[ys, xs] = 0
    return out


def grid_of(
    small: np.ndarray, masks: Sequence[Rect] = (), cols: int = GRID_COLS, rows: int = GRID_ROWS
) -> Grid:
    """The grid of a downscaled luma image (`Frame.small`), with `masks` blanked first."""
    small = blank(small, masks)
    cells = np.asarray(
        Image.fromarray(small).resize((cols * HASH_W, rows * HASH_H), Image.Resampling.BOX),
        dtype=np.int16,
    )
    tiles = cells.reshape(rows, HASH_H, cols, HASH_W).transpose(0, 2, 1, 3)
    bits = (tiles[..., 1:] - tiles[..., :-1]) > DHASH_STEP  # (rows, cols, 8, 8)
    packed = np.packbits(bits.reshape(rows * cols, 64), axis=1)  # big-endian bytes
    hashes = packed.view(">u8").reshape(-1)
    tones = tiles.mean(axis=(2, 3)).round().astype(np.uint8).reshape(-1)
    return Grid(
        cols,
        rows,
        tuple(int(h) for h in hashes),
        tuple(int(t) for t in tones),
        tuple(int(d) for d in _details(small, cols, rows)),
    )


def _details(small: np.ndarray, cols: int, rows: int) -> np.ndarray:
    """Per tile: DETAIL_SCALE * log2(1 + sum of absolute luma gradients), 0-255."""
    s = small.astype(np.int32)
    grad = np.zeros_like(s)
    grad[:, :-1] += np.abs(np.diff(s, axis=1))
    grad[:-1, :] += np.abs(np.diff(s, axis=0))
    h, w = s.shape
    ys = [r * h // rows for r in range(rows)]
    xs = [c * w // cols for c in range(cols)]
    energy = np.add.reduceat(np.add.reduceat(grad, ys, axis=0), xs, axis=1)
    return np.minimum(DETAIL_SCALE * np.log2(1 + energy), 255).round().astype(np.uint8).reshape(-1)


def patch_of(frame: Frame, x: int, y: int) -> Patch:
    """The 4-bit luma cells of the `PATCH_SIZE` square centred on (x, y), clamped inside
    the screen so that a target near an edge still gets a full patch."""
    half = PATCH_SIZE // 2
    x0 = min(max(x - half, 0), max(frame.width - PATCH_SIZE, 0))
    y0 = min(max(y - half, 0), max(frame.height - PATCH_SIZE, 0))
    block = frame.pixels[y0 : y0 + PATCH_SIZE, x0 : x0 + PATCH_SIZE, :3].astype(np.uint16)
    luma = (block[..., 0] * 29 + block[..., 1] * 150 + block[..., 2] * 77) >> 8
    h, w = luma.shape
    side = PATCH_SIZE // PATCH_CELLS
    padded = np.zeros((PATCH_SIZE, PATCH_SIZE), dtype=np.uint16)
    padded[:h, :w] = luma
    cells = padded.reshape(PATCH_CELLS, side, PATCH_CELLS, side).mean(axis=(1, 3))
    return Patch(x, y, (cells // 16).astype(np.uint8).tobytes())


def fingerprint_of(
    frame: Frame,
    target: tuple[int, int] | None,
    masks: Sequence[Rect] = (),
    pointer: tuple[int, int] | None = None,
) -> Fingerprint:
    patch = patch_of(frame, *target) if target is not None else None
    grid = grid_of(frame.small, masks)
    return Fingerprint(frame.width, frame.height, grid, patch, pointer, tuple(masks))


def changed_region(before: np.ndarray, after: np.ndarray, threshold: int = 12) -> Rect | None:
    """Bounding box (screen pixels) of what changed between two downscaled luma images."""
    if before.shape != after.shape:
        h, w = after.shape
        return Rect(0, 0, w * SCALE, h * SCALE)
    delta = np.abs(before.astype(np.int16) - after.astype(np.int16)) > threshold
    ys, xs = np.nonzero(delta)
    if len(xs) == 0:
        return None
    x0, y0 = int(xs.min()) * SCALE, int(ys.min()) * SCALE
    x1, y1 = (int(xs.max()) + 1) * SCALE, (int(ys.max()) + 1) * SCALE
    return Rect(x0, y0, x1 - x0, y1 - y0)


BLOCK = 8
"""Changed-region analysis works on blocks of 8x8 downscaled pixels (32x32 px)."""


def changed_regions(
    before: np.ndarray, after: np.ndarray, threshold: int = 12, within: Rect | None = None
) -> list[Rect]:
    """The separate regions (screen pixels) that changed between two downscaled images;
    with `within`, only what changed inside it (a change outside never joins one inside).

    Changed blocks that touch (8-neighbourhood) form one region, so a clock ticking in one
    corner and a caret blinking in another give two small rectangles, not one big one.
    """
    if before.shape != after.shape:
        h, w = after.shape
        whole = Rect(0, 0, w * SCALE, h * SCALE)
        return [whole if within is None else within.intersection(whole) or within]
    moved = _moved(before, after, threshold)
    if within is not None:
        ys, xs = small_slice(within, moved.shape)
        inside = np.zeros_like(moved)
        inside[ys, xs] = moved[ys, xs]
        moved = inside
    return _regions_of(moved)


def changed_within(
    before: np.ndarray, after: np.ndarray, within: Rect, threshold: int = 12
) -> Rect | None:
    """The smallest rectangle (screen pixels) around the downscaled pixels inside `within`
    that changed between two downscaled images, as `changed_regions` counts them; None
    when none did. A region of `changed_regions` joins changes up to a block apart: this
    is what of it lies in one place."""
    if before.shape != after.shape:
        return within
    ys, xs = small_slice(within, after.shape)
    return box_of(_moved(before[ys, xs], after[ys, xs], threshold), ys.start, xs.start)


WINDOW_MIN = (120, 48)
"""A change at least this wide and tall (px, its tight box) is a window that opened or
closed (a dialog, a menu), not a widget's own answer to a click (a caret, a selected row,
a selected icon)."""


def window_changed_at(before: np.ndarray, after: np.ndarray, point: tuple[int, int]) -> bool:
    """Whether, between two downscaled images, a change of at least `WINDOW_MIN` covers
    `point`: what was under it is another window now."""
    spot = Rect(point[0], point[1], 1, 1)
    for region in changed_regions(before, after):
        if not spot.intersects(region):
            continue
        tight = changed_within(before, after, region)
        if tight is not None and tight.w >= WINDOW_MIN[0] and tight.h >= WINDOW_MIN[1]:
            return spot.intersects(tight)
    return False


def box_of(cells: np.ndarray, top: int, left: int) -> Rect | None:
    """The smallest rectangle (screen pixels) around the True downscaled pixels of
    `cells`, a window of the screen whose first row and column are `top` and `left`; None
    when there are none."""
    py, px = np.nonzero(cells)
    if not py.size:
        return None
    return Rect(
        (left + int(px.min())) * SCALE,
        (top + int(py.min())) * SCALE,
        (int(px.max() - px.min()) + 1) * SCALE,
        (int(py.max() - py.min()) + 1) * SCALE,
    )


def _moved(before: np.ndarray, after: np.ndarray, threshold: int) -> np.ndarray:
    """Where two downscaled images differ by more than `threshold` luma levels."""
    return np.asarray(np.abs(before.astype(np.int16) - after.astype(np.int16)) > threshold)


def moved_pixels(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Where two downscaled images differ as `changed_regions` counts it (12 levels)."""
    return _moved(before, after, 12)


FINE_THRESHOLD = 32
"""A full-resolution pixel whose colour moved by more than this (any channel) changed."""


def changed_regions_fine(before: Frame, after: Frame, threshold: int = 12) -> list[Rect]:
    """The regions that changed between two frames, seen at least as finely as the matcher
    sees them: a downscaled pixel counts as changed when its luma moved by more than
    `threshold` (what `changed_regions` and the matcher count) or when any of its
    full-resolution pixels moved by more than `FINE_THRESHOLD`. One stroke of a small
    glyph (a clock's digit 7 becoming 8) can move a downscaled pixel by less than the
    threshold, yet the matcher sees the next tick, which changes several digits at once:
    what is learned as changing alone must not miss what the matcher will see."""
    if before.small.shape != after.small.shape:
        return changed_regions(before.small, after.small, threshold)
    delta = _moved(before.small, after.small, threshold)
    a = before.pixels.view(np.uint32)[..., 0]
    b = after.pixels.view(np.uint32)[..., 0]
    ys, xs = np.nonzero(a != b)
    if len(ys):
        moved = np.abs(
            before.pixels[ys, xs, :3].astype(np.int16) - after.pixels[ys, xs, :3].astype(np.int16)
        ).max(axis=1)
        strong = moved > FINE_THRESHOLD
        sy, sx = ys[strong] // SCALE, xs[strong] // SCALE
        keep = (sy < delta.shape[0]) & (sx < delta.shape[1])
        delta[sy[keep], sx[keep]] = True
    return _regions_of(delta)


def _regions_of(delta: np.ndarray) -> list[Rect]:
    """Changed downscaled pixels grouped into regions (screen pixels), as described in
    `changed_regions`."""
    h, w = delta.shape
    bh, bw = -(-h // BLOCK), -(-w // BLOCK)
    padded = np.zeros((bh * BLOCK, bw * BLOCK), dtype=bool)
    padded[:h, :w] = delta
    blocks: np.ndarray = np.asarray(padded.reshape(bh, BLOCK, bw, BLOCK).any(axis=(1, 3)))
    seen = np.zeros_like(blocks)
    regions: list[Rect] = []
    for by, bx in zip(*np.nonzero(blocks), strict=True):
        if seen[by, bx]:
            continue
        stack, cells = [(int(by), int(bx))], []
        seen[by, bx] = True
        while stack:
            y, x = stack.pop()
            cells.append((y, x))
            for ny in range(max(y - 1, 0), min(y + 2, bh)):
                for nx in range(max(x - 1, 0), min(x + 2, bw)):
                    if blocks[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
        ys, xs = [c[0] for c in cells], [c[1] for c in cells]
        # Tighten the block-level box to the changed pixels inside it.
        y0, y1 = min(ys) * BLOCK, (max(ys) + 1) * BLOCK
        x0, x1 = min(xs) * BLOCK, (max(xs) + 1) * BLOCK
        py, px = np.nonzero(delta[y0:y1, x0:x1])
        regions.append(
            Rect(
                (x0 + int(px.min())) * SCALE,
                (y0 + int(py.min())) * SCALE,
                (int(px.max() - px.min()) + 1) * SCALE,
                (int(py.max() - py.min()) + 1) * SCALE,
            )
        )
    return regions


def merge_rects(rects: Iterable[Rect], margin: int = 4) -> list[Rect]:
    """Union overlapping (or nearly touching) rectangles until none overlap."""
    pending = [r.grow(margin) for r in rects]
    merged: list[Rect] = []
    while pending:
        current = pending.pop()
        changed = True
        while changed:
            changed = False
            for other in list(pending):
                if current.intersects(other):
                    current = current.union(other)
                    pending.remove(other)
                    changed = True
        merged.append(current)
    return sorted(merged, key=lambda r: (r.y, r.x))


GROUND_SPREAD = 6
"""A column of a text's line is still the blank ground it stands on while every pixel of
it is within this many levels of that ground (downscaled: a field's 1 px border, or a
spreadsheet's light grid line between two white cells, shifts its column by 10 or more)."""
SPILL = 2
"""Columns right beside an echo's box (found by its picture, a few px off its text) that
hold ink are still its letters."""


def ground_reach(
    small: np.ndarray, rect: Rect, left: int, right: int, spill: int = 0
) -> tuple[int, int]:
    """How far (px, at most `left` and `right`) the blank ground of the text in `rect`
    runs left and right of it over its rows: to its field's edge, a grid line or other
    content. On each side the ground is the first column the next one repeats (letters
    change from column to column), past at most `spill` columns of letters (an echo's
    box, found by its picture a few px off its text: `SPILL`); it runs while each column
    repeats it row for row within `GROUND_SPREAD` (a border above the text, the same all
    along, does not end it). A longer value typed there at replay shows within it."""
    ys, xs = small_slice(rect, small.shape)
    band = small[ys].astype(np.int16)
    if band.size == 0 or xs.stop <= xs.start:
        return (0, 0)

    def same(a: int, b: int) -> bool:
        return int(np.abs(band[:, a] - band[:, b]).max()) <= GROUND_SPREAD

    def reach(columns: list[int]) -> int:
        for k in range(len(columns) - 1):
            if same(columns[k], columns[k + 1]):  # the ground: count the columns like it
                like = takewhile(partial(same, columns[k]), columns[k:])
                return (k + sum(1 for _ in like)) * SCALE
            column = band[:, columns[k]]
            if k >= spill or int(column.max() - column.min()) <= GROUND_SPREAD:
                return 0  # not letters spilt past the box: an edge, a line, other content
        return 0

    lo = list(range(xs.start - 1, max(xs.start - 1 - left // SCALE, -1), -1))
    hi = list(range(xs.stop, min(xs.stop + right // SCALE, band.shape[1])))
    return (min(reach(lo), left), min(reach(hi), right))


RUN_REACH = 48
"""A volatile region grows at most this many downscaled pixels (192 px) left or right."""
EDGE_ROWS = 3
NEAR = 16
"""The background of a changed region is the most common value this many downscaled
pixels around it (and `EDGE_ROWS` above and below): the widget it is in. A median over a
wider band straddles window edges, wallpaper and the root window."""
"""A widget or window edge is a column that differs from its surroundings over the text
line and this many downscaled rows above and below it: growth stops there."""


def grow_to_text_run(small: np.ndarray, region: Rect, gap: int = 3, ink: int = 24) -> Rect:
    """Widen `region` to the run of content it belongs to, within its widget.

    When a clock's last digit changes, the whole "12:34:56" will change some time later,
    and a digit that changes between 5 and 6 touches fewer rows than one between 9 and 0:
    a region seen changing is grown left and right across columns that hold content
    (darker or lighter than the background right around it by `ink` levels) until `gap` empty
    columns (downscaled pixels), a widget edge, or `RUN_REACH`, then up and down across
    rows, to the first empty row (a line of text has ink in every row of its run) and by
    `LINE_GROW` rows at most. The background is the neighbourhood's, never the whole
    screen row's: on a coloured desktop that would be the wallpaper, and every widget on
    the row would read as content.
    """
    ys, xs = small_slice(region, small.shape)
    if small[ys, xs].size == 0:
        return region
    lo, hi = max(xs.start - RUN_REACH, 0), min(xs.stop + RUN_REACH, small.shape[1])
    above, below = max(ys.start - EDGE_ROWS, 0), ys.stop + EDGE_ROWS
    near = small[above:below, max(xs.start - NEAR, 0) : xs.stop + NEAR]
    background = int(np.bincount(near.ravel()).argmax())
    tall = small[above:below, lo:hi].astype(np.int16)
    walls = np.asarray((np.abs(tall - background) > ink).all(axis=0))
    has_ink = np.asarray((np.abs(small[ys, lo:hi].astype(np.int16) - background) > ink).any(axis=0))
    left, right = _run(has_ink, xs.start - lo, xs.stop - 1 - lo, gap, walls)
    left, right = left + lo, right + lo
    rows = slice(max(ys.start - LINE_GROW, 0), ys.stop + LINE_GROW)
    top, bottom = _run(
        _ink(small[rows, left : right + 1], ink, axis=1),
        ys.start - rows.start,
        ys.stop - 1 - rows.start,
        1,
    )
    top, bottom = top + rows.start, bottom + rows.start
    return Rect(
        left * SCALE, top * SCALE, (right + 1 - left) * SCALE, (bottom + 1 - top) * SCALE
    ).union(region)


def _ink(band: np.ndarray, ink: int, axis: int) -> np.ndarray:
    """Per column (axis=0) or row (axis=1) of `band`: whether it holds any content."""
    values = band.astype(np.int16)
    return np.asarray((np.abs(values - int(np.median(values))) > ink).any(axis=axis))


def _run(
    has_ink: np.ndarray, first: int, last: int, gap: int, walls: np.ndarray | None = None
) -> tuple[int, int]:
    """Extend [first, last] over `has_ink` until `gap` empty places on each side, or a
    wall (which is not crossed)."""

    def wall(i: int) -> bool:
        return walls is not None and bool(walls[i])

    empty = 0
    while first > 0 and empty < gap and not wall(first - 1):
        first -= 1
        empty = 0 if has_ink[first] else empty + 1
    first += empty
    empty = 0
    while last < len(has_ink) - 1 and empty < gap and not wall(last + 1):
        last += 1
        empty = 0 if has_ink[last] else empty + 1
    return first, last - empty


def small_slice(region: Rect, shape: tuple[int, ...]) -> tuple[slice, slice]:
    """The downscaled-image slices covering a screen region (clipped)."""
    h, w = shape[:2]
    x0, y0 = max(region.x // SCALE, 0), max(region.y // SCALE, 0)
    # A stop left of (or above) the start would count from the far end: a region wholly
    # off the screen's left or top covers nothing.
    x1 = max(min(-(-region.right // SCALE), w), x0)
    y1 = max(min(-(-region.bottom // SCALE), h), y0)
    return slice(y0, y1), slice(x0, x1)


def _window_sums(values: np.ndarray, th: int, tw: int) -> np.ndarray:
    """Sum of every th x tw window (valid positions), by integral image."""
    s = np.pad(values, ((1, 0), (1, 0))).cumsum(axis=0).cumsum(axis=1)
    return s[th:, tw:] - s[:-th, tw:] - s[th:, :-tw] + s[:-th, :-tw]


def find_template(image: np.ndarray, template: np.ndarray, threshold: float = 0.9) -> list[Rect]:
    """Where `template` appears in `image` (both downscaled luma), by normalized
    cross-correlation: insensitive to the background it is drawn on (the same text in a
    white field and in a grey status bar). Returns screen-pixel rectangles, the best
    match first, none overlapping a better one."""
    return [rect for _, rect in scored_matches(image, template, threshold)]


def scored_matches(
    image: np.ndarray, template: np.ndarray, threshold: float, scale: int = SCALE
) -> list[tuple[float, Rect]]:
    """`find_template`'s matches with their correlation; `scale`: screen pixels per
    pixel of `image` (1: a full-resolution image)."""
    th, tw = template.shape
    h, w = image.shape
    if th > h or tw > w or th * tw == 0:
        return []
    t = template.astype(np.float64)
    t0 = t - t.mean()
    t_norm = float(np.sqrt((t0**2).sum()))
    if t_norm < 1e-6:
        return []
    img = image.astype(np.float64)
    size = (h + th - 1, w + tw - 1)
    spectrum = np.fft.rfft2(img, size) * np.fft.rfft2(t0[::-1, ::-1], size)
    corr = np.fft.irfft2(spectrum, size)[th - 1 : h, tw - 1 : w]
    n = th * tw
    sums = _window_sums(img, th, tw)
    variance = _window_sums(img * img, th, tw) - sums * sums / n
    denom = np.sqrt(np.maximum(variance, 0)) * t_norm
    score = np.where(denom > 1e-6, corr / np.maximum(denom, 1e-6), 0.0)
    ys, xs = np.nonzero(score >= threshold)
    found: list[tuple[float, Rect]] = []
    for y, x in sorted(zip(ys.tolist(), xs.tolist(), strict=True), key=lambda p: -score[p]):
        rect = Rect(x * scale, y * scale, tw * scale, th * scale)
        if not any(rect.intersects(f) for _, f in found):
            found.append((float(score[y, x]), rect))
    return found
