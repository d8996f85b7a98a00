"""Where a typed value shows on the screen besides its field, and the lines of text an
action changed: what step building masks for a param (`capture.steps`).

Two ways to find the value again on a later screen: `find_echoes` correlates the typed
text's picture with the later screens (a status line "Saved application for John Smith",
in the field's font), `text_shown_elsewhere` takes what the typing made appear on blank
ground in the window typed into, one line about the text's size (Calc's input line, in
another font). `text_lines` cuts a changed region into its lines, so that what a typing
changed on the focused line is kept apart from another line a few pixels above it.
"""

from __future__ import annotations

import numpy as np

from mmcli.screen.analysis import (
    box_of,
    changed_regions,
    find_template,
    moved_pixels,
    small_slice,
)
from mmcli.screen.carets import on_focus_line
from mmcli.screen.fingerprint import SCALE, Rect

ECHO_MATCH = 0.85
"""Normalized correlation above which typed text is taken to be shown again elsewhere."""
ECHO_MIN_WIDTH = 6
"""Typed text narrower than this (downscaled px) is too short to look for reliably."""
ECHO_MAX = 4
"""A match in more places than this is a pattern the typed text's picture holds (a
spreadsheet's grid lines), not the text shown again: no echo is taken from it."""


def find_echoes(shown: np.ndarray, typed: Rect, later: list[np.ndarray]) -> list[tuple[int, Rect]]:
    """Where the text typed into `typed` (as drawn in `shown`) appears elsewhere on the
    later screens: (index into `later`, region), the first screen each region shows on;
    none when the picture matches in more than `ECHO_MAX` places."""
    ys, xs = small_slice(typed, shown.shape)
    # Leave out the edge columns, where the caret stands before and after typing.
    template = shown[ys, xs.start + 1 : xs.stop - 2]
    if template.shape[1] < ECHO_MIN_WIDTH or template.shape[0] < 2:
        return []
    found: list[tuple[int, Rect]] = []
    for j, screen in enumerate(later):
        for rect in find_template(screen, template, ECHO_MATCH):
            if rect.intersects(typed.grow(8)) or any(rect.intersects(r) for _, r in found):
                continue
            found.append((j, rect))
            if len(found) > ECHO_MAX:
                return []
    return found


ECHO_GAP = 2
"""Unchanged columns (downscaled px) that part two pieces of what one typing changed."""
LINE_GAP = 2
"""Unchanged rows (downscaled px) that part two lines of what one action changed."""
BLANK_SPREAD = 24
"""Luma levels within which a stretch of screen holds nothing (one background)."""
ECHO_HEIGHT = 32
"""Text taller than this (px) is not one line echoing a field's value."""


def text_shown_elsewhere(
    before: np.ndarray, after: np.ndarray, typed: Rect, within: Rect | None
) -> list[Rect]:
    """Where typing into `typed` made text appear on blank ground elsewhere on the screen
    (`within` the window typed into, when the window system tells it): the app showing
    the value again in another font (a spreadsheet's input line), which `find_echoes`
    cannot match. Each piece of what changed (`_pieces`: lines, and on a line what lies
    `ECHO_GAP` unchanged columns apart) counts when it was blank before, is one line no
    taller than the field's own change, no wider than twice the typed text (plus a glyph)
    and at least two downscaled pixels each way: an icon that changed beside it had
    something drawn before, a dialog or a list is taller, a clock's changing stroke
    smaller."""
    found: list[Rect] = []
    moved = moved_pixels(before, after)
    line = (typed.x + typed.w // 2, typed.y + typed.h // 2)
    for region in changed_regions(before, after):
        for piece in _pieces(moved, region, ECHO_GAP):
            if piece.intersects(typed.grow(8)) or on_focus_line(piece, line):
                continue
            if within is not None and not piece.inside(within.grow(SCALE)):
                continue
            if not _blank_before(before, after, moved, piece):
                continue  # something was drawn there: not new text on blank ground
            if piece.h > min(typed.h + 2 * SCALE, ECHO_HEIGHT) or piece.w > 2 * typed.w + 16:
                continue
            if min(piece.w, piece.h) < 2 * SCALE:
                continue  # a stroke, a dot: a clock's digit changing, not a word
            found.append(piece)
    return found


def _blank_before(before: np.ndarray, after: np.ndarray, moved: np.ndarray, piece: Rect) -> bool:
    """Whether `piece` held nothing before: all of it within `BLANK_SPREAD` of the ground
    the new content stands on, the line's own background just left and right of it where
    that did not change (above and below may be the line's border)."""
    ys, xs = small_slice(piece, after.shape)
    sides = [c for c in (xs.start - 1, xs.stop) if 0 <= c < after.shape[1]]
    ground = [after[ys, c][~moved[ys, c]] for c in sides]
    still = np.concatenate(ground) if ground else np.zeros(0, after.dtype)
    if not still.size:
        return False
    was = before[ys, xs].astype(np.int16)
    return bool(np.abs(was - int(np.median(still))).max() <= BLANK_SPREAD)


def text_lines(moved: np.ndarray, region: Rect) -> list[Rect]:
    """`region` cut into the bands of rows that changed in it, apart where `LINE_GAP` rows
    in a row did not: its lines of text. Each band spans the columns that changed in it."""
    ys, xs = small_slice(region, moved.shape)
    inside = moved[ys, xs]
    bands = _runs(np.asarray(inside.any(axis=1)), LINE_GAP)
    boxes = (box_of(inside[top:bottom], ys.start + top, xs.start) for top, bottom in bands)
    return [b for b in boxes if b is not None]  # (a run holds a changed pixel: never None)


def _pieces(moved: np.ndarray, region: Rect, gap: int) -> list[Rect]:
    """`region`'s bands (`text_lines`) cut further where `gap` columns in a row did not
    change: the separate things one action changed on a line (an icon, a word)."""
    out: list[Rect] = []
    for band in text_lines(moved, region):
        ys, xs = small_slice(band, moved.shape)
        inside = moved[ys, xs]
        for left, right in _runs(np.asarray(inside.any(axis=0)), gap):
            box = box_of(inside[:, left:right], ys.start, xs.start + left)
            if box is not None:  # (a run holds a changed pixel: never None)
                out.append(box)
    return out


def _runs(flags: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """The [start, stop) runs of True in `flags`, joined across fewer than `gap` Falses."""
    runs: list[tuple[int, int]] = []
    for i in np.nonzero(flags)[0].tolist():
        if runs and i - runs[-1][1] < gap:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs
