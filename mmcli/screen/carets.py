"""Telling a caret from a glyph: a thin bar a text line tall, blinking in a field.

A caret blinks: replay may see it in the other phase than the recording did, and the
recorder sees it come and go between two actions. These read the full-resolution ink of a
small changed region (`ink_columns`, `caret_blink`) and where it stands against the focus
point (`in_focused_field`, `on_focus_line`).
"""

from __future__ import annotations

import numpy as np

from mmcli.screen.analysis import PIXEL_THRESHOLD, small_slice
from mmcli.screen.fingerprint import SCALE, Frame, Rect

CARET_MAX = (8, 32)
"""A caret-like mark: at most this wide and tall (px)."""
FIELD_REACH = 480
"""At a keyboard step, a caret-like mark at most this far (px) left or right of the focus
point, on its line, may be the focused field's caret."""
CARET_WIDTH = 3
"""A caret is at most this many full-resolution pixels wide; a glyph of even a small font
is wider, though once downscaled both fit in a caret-like mark."""
CARET_MIN_HEIGHT = 8
"""A caret is at least this many px tall (the height of a line of small text)."""
CARET_INK = 48
"""Luma levels by which a full-resolution pixel must differ from its surroundings to be ink."""
BAR_CLEAR_ROWS = 4
"""Rows a caret-like bar stands clear of ink on both sides (`without_bars`)."""


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


def ink_mask(frame: Frame, region: Rect) -> np.ndarray | None:
    """Per pixel of `region` on the full-resolution frame: whether it is ink against the
    ground around it (the median over the region widened by 6 px: a field's ground, even
    where a glyph's bar fills a row); None: the region is off the screen."""
    around = _luma_around(frame, region, 6)
    if around is None:
        return None
    luma, ax, ay = around
    x0, y0 = max(region.x - ax, 0), max(region.y - ay, 0)
    ground = int(np.median(luma))
    inside = luma[y0 : y0 + region.h, x0 : x0 + region.w].astype(np.int16)
    return np.asarray(np.abs(inside - ground) > CARET_INK)


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


def typed_lines(
    lines: list[Rect], focus: tuple[int, int] | None, window: Rect | None
) -> list[Rect]:
    """Of the lines of text that changed as text was typed, those it wrote: on the line
    of the last clicked point (`focus`); when nothing changed there, those inside the
    window that had the keyboard (`window`: a hotkey opened a dialog whose field holds
    the focus, GIMP's export dialog, its name field far from the menu item clicked
    before, while the taskbar's button and the image window's title changed too); none
    when neither is known."""
    if focus is not None:
        on_line = [b for b in lines if on_focus_line(b, focus)]
        if on_line:
            return on_line
    if window is None:
        return []
    inside = window.grow(SCALE)
    return [b for b in lines if b.inside(inside)]


def on_focus_line(region: Rect, focus: tuple[int, int]) -> bool:
    """Whether `region` stands on the focus point's line, within a field's reach of it."""
    fx, fy = focus
    if not region.y - SCALE <= fy <= region.bottom + SCALE:
        return False
    return region.x - FIELD_REACH <= fx <= region.right + FIELD_REACH


def without_bars(rgb: np.ndarray) -> np.ndarray:
    """`rgb` (height x width x 3) with every caret-like bar painted with the background
    beside it: a vertical run of ink `CARET_MIN_HEIGHT` to `CARET_MAX` px tall, ink
    against its background `CARET_WIDTH` px to one side all along, and against both
    sides for `BAR_CLEAR_ROWS` rows or more (a caret right after the text touches the
    last glyph, but stands clear of it above and below: it spans the whole line).

    For a screen judged with no text legible (`llm.screens.coarse`), where a caret is
    blurred into a block that changes colour with its blink phase: both sides are painted
    alike, so the bars a text shows (an "l", an "H"'s stems) are gone from both, and a
    caret from whichever had it. Anything wider than a bar or not clear of its
    neighbours stays: a dot, a tick, a box, the bowls and bars of a line of text."""
    d = CARET_WIDTH
    out = rgb.copy()
    height, width = rgb.shape[:2]
    if width <= 2 * d or height < CARET_MIN_HEIGHT:
        return out
    luma = rgb[..., :3].astype(np.int16).sum(axis=2) // 3
    left, mid, right = luma[:, : -2 * d], luma[:, d:-d], luma[:, 2 * d :]
    to_left, to_right = mid - left, mid - right
    ink_left, ink_right = np.abs(to_left) > CARET_INK, np.abs(to_right) > CARET_INK
    clear = ink_left & ink_right & (np.sign(to_left) == np.sign(to_right))
    ink = ink_left | ink_right
    # Runs down each column: transitions of the column-major mask, in order.
    padded = np.zeros((ink.shape[1], height + 2), dtype=np.int8)
    padded[:, 1:-1] = ink.T
    steps = np.diff(padded, axis=1)
    cols, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)
    tall = ends - starts
    keep = (tall >= CARET_MIN_HEIGHT) & (tall <= CARET_MAX[1])
    for col, y0, y1 in zip(cols[keep], starts[keep], ends[keep], strict=True):
        if int(clear[y0:y1, col].sum()) < BAR_CLEAR_ROWS:
            continue
        x = int(col) + d
        # Each row painted with the side farther from the ink: the background there.
        far_left = np.abs(to_left[y0:y1, col]) >= np.abs(to_right[y0:y1, col])
        side = np.where(far_left[:, None], rgb[y0:y1, x - d, :3], rgb[y0:y1, x + d, :3])
        out[y0:y1, x, :3] = side
    return out
