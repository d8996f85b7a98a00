"""Where a typed value shows on the screen besides its field, and the lines of text an
action changed: what step building masks for a param (`capture.steps`).

Two ways to find the value again on a later screen: `find_echoes` correlates the typed
text's picture with the later screens (a status line "Saved application for John Smith",
in the field's font), downscaled and, where a later screen changed, at full resolution
(`Detail`: the same text off the field's offset of the downscale grid is another
picture downscaled, the same pixels at full size); `text_shown_elsewhere` takes what the
typing made appear on blank ground in the window typed into, one line about the text's
size (Calc's input line, in another font). `text_lines` cuts a changed region into its
lines, so that what a typing changed on the focused line is kept apart from another line
a few pixels above it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from mmcli.screen.analysis import (
    box_of,
    changed_regions,
    find_template,
    moved_pixels,
    scored_matches,
    small_slice,
)
from mmcli.screen.carets import on_focus_line
from mmcli.screen.fingerprint import SCALE, Frame, Rect
from mmcli.screen.runs import joined

ECHO_MATCH = 0.85
"""Normalized correlation above which typed text is taken to be shown again elsewhere."""
ECHO_MIN_WIDTH = 6
"""Typed text narrower than this (downscaled px) is too short to look for reliably."""
ECHO_MAX = 4
"""A match in more places than this is a pattern the typed text's picture holds (a
spreadsheet's grid lines), not the text shown again: no echo is taken from it."""
FULL_MATCH = 0.95
"""Normalized correlation at full resolution at which typed text is taken to be shown
again (`Detail.find`). Measured on the example form under openbox: "Ada Lovelace" in the
status line 1.0, the same text's field 1.0, anything else on the screen below 0.6."""
INK_LEVEL = 40
"""Luma levels off its ground at which a pixel of typed text is ink."""
LINE_SHARE = 0.9
"""An edge row or column of typed text this inked is a line along it (a field's border
inside the box of what the typing changed), not text."""
LINE_SLACK = 8
"""Rows a line of text may have beyond the typed text's own ink (the descenders and
capitals of the words around an echo) and still be searched for it (`Detail.find`)."""
FINE_PIXELS = 2_000_000
"""Pixels of lines one typed value is looked for in at full resolution, over all the
later screens (~0.4 s at most; a line of 960 x 14 px takes ~2.5 ms): past them, a
long task's later screens are searched downscaled alone."""
FRAME_EDGES = 8
"""Edges a row may cross and still hold no text (a frame's two sides, each drawn with up
to two lines: four edges a side)."""
LINE_PAD = 2
"""Rows searched above and below a line (`Detail.find`): its first or last row of glyph
tips may cross too few edges to count."""
DETAIL_MAX = 1 / 4
"""The largest share of the screen the pieces of one `Detail` may cover together."""


@dataclass(frozen=True)
class Detail:
    """Pieces of a screen at full resolution, in the luma `Frame.small` is downscaled
    from: what changed since an earlier screen. Kept so that typed text shown again
    elsewhere is found to the pixel: at a quarter of the size, the same text at another
    offset of the 4 px grid is another picture (measured on the example form under
    openbox: "Ada Lovelace" in the status line one row off the field's offset correlates
    at 0.86 with the field's downscaled picture, 1.0 at full resolution)."""

    pieces: tuple[tuple[Rect, np.ndarray], ...]

    @property
    def nbytes(self) -> int:
        return sum(luma.nbytes for _, luma in self.pieces)

    @classmethod
    def of(cls, before: np.ndarray, frame: Frame) -> Detail | None:
        """Each region that changed between the downscaled screen `before` and `frame`
        (`changed_regions`), at full resolution, as long as they cover together at most
        `DETAIL_MAX` of the screen (the smallest first: a line of text, not a new page).
        None when none is kept."""
        if before.shape != frame.small.shape:
            return None
        screen = Rect(0, 0, frame.width, frame.height)
        budget = DETAIL_MAX * frame.width * frame.height
        image: Image.Image | None = None
        pieces = []
        for region in sorted(changed_regions(before, frame.small), key=lambda r: r.w * r.h):
            rect = region.intersection(screen)
            if rect is None or rect.w * rect.h > budget:
                continue
            budget -= rect.w * rect.h
            if image is None:
                size = (frame.width, frame.height)
                image = Image.frombuffer("RGBX", size, frame.raw, "raw", "RGBX", 0, 1)
            crop = image.crop((rect.x, rect.y, rect.right, rect.bottom)).convert("L")
            pieces.append((rect, np.asarray(crop)))
        return cls(tuple(pieces)) if pieces else None

    def text(self, region: Rect) -> tuple[np.ndarray, int, int] | None:
        """The typed text inside `region` (screen pixels, inside one piece), cut to its
        ink (lines along its edges, a field's border, left out), and where the cut stands
        in `region` (dx, dy). None when no piece holds `region` or no text is in it."""
        for rect, luma in self.pieces:
            if region.inside(rect):
                x, y = region.x - rect.x, region.y - rect.y
                return _ink(luma[y : y + region.h, x : x + region.w])
        return None

    def find(self, text: np.ndarray, limit: int) -> tuple[list[Rect], int]:
        """Where `text` (`Detail.text`) shows inside the pieces at `FULL_MATCH`, the best
        match first (screen pixels), and how many pixels were searched: no more lines
        once `limit` is reached. Only a line of a piece about the text's height is
        searched (`_lines`): the same text in the same font stands on such a line, and a
        search of every piece whole would cost ~120 ms for a quarter of a 1920x1080
        screen, for each typed value and each later screen."""
        found: list[tuple[float, Rect]] = []
        height = text.shape[0]
        searched = 0
        for rect, luma in self.pieces:
            for top, bottom in _lines(luma, height - 2 * LINE_PAD, height + LINE_SLACK):
                if searched >= limit:
                    break
                top, bottom = max(top - LINE_PAD, 0), bottom + LINE_PAD
                searched += (min(bottom, luma.shape[0]) - top) * luma.shape[1]
                for score, hit in scored_matches(luma[top:bottom], text, FULL_MATCH, scale=1):
                    found.append((score, hit.moved(rect.x, rect.y + top)))
        return [hit for _, hit in sorted(found, key=lambda m: -m[0])], searched


def _lines(luma: np.ndarray, low: int, high: int) -> list[tuple[int, int]]:
    """The runs of rows of `luma` that hold something, `low` to `high` rows tall, as
    (top, bottom). A row holds nothing when it crosses no more than `FRAME_EDGES` edges
    (steps of more than `INK_LEVEL`): a dialog's frame left and right of its text."""
    steps = np.abs(np.diff(luma.astype(np.int16), axis=1)) > INK_LEVEL
    rows = steps.sum(axis=1) > FRAME_EDGES
    edges = np.flatnonzero(np.diff(np.concatenate(([0], rows.view(np.int8), [0]))))
    runs = zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True)
    return [(top, bottom) for top, bottom in runs if low <= bottom - top <= high]


def _ink(luma: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """`luma` cut to the box of its ink (what stands off its commonest level), lines
    along its edges left out, with the box's offset (dx, dy); None when it holds no ink."""
    ground = int(np.bincount(luma.ravel(), minlength=256).argmax())
    ink = np.abs(luma.astype(np.int16) - ground) > INK_LEVEL
    top, bottom, left, right = 0, ink.shape[0], 0, ink.shape[1]
    while top < bottom and ink[top, left:right].mean() > LINE_SHARE:
        top += 1
    while bottom > top and ink[bottom - 1, left:right].mean() > LINE_SHARE:
        bottom -= 1
    while left < right and ink[top:bottom, left].mean() > LINE_SHARE:
        left += 1
    while right > left and ink[top:bottom, right - 1].mean() > LINE_SHARE:
        right -= 1
    rows = np.nonzero(ink[top:bottom, left:right].any(axis=1))[0]
    cols = np.nonzero(ink[top:bottom, left:right].any(axis=0))[0]
    if not rows.size:
        return None
    y0, x0 = top + rows[0], left + cols[0]
    return luma[y0 : top + rows[-1] + 1, x0 : left + cols[-1] + 1], int(x0), int(y0)


def find_echoes(
    shown: np.ndarray,
    typed: Rect,
    later: list[np.ndarray],
    detail: Detail | None = None,
    changes: list[Detail | None] | None = None,
) -> list[tuple[int, Rect]]:
    """Where the text typed into `typed` (as drawn in `shown`) appears elsewhere on the
    later screens: (index into `later`, region), the first screen each region shows on;
    none when the picture matches in more than `ECHO_MAX` places. With the typing's
    `detail` (what it changed, at full resolution) and the later screens' `changes` (what
    each changed since the one before, the same), the text is also looked for to the
    pixel where it newly appears."""
    ys, xs = small_slice(typed, shown.shape)
    # Leave out the edge columns, where the caret stands before and after typing.
    template = shown[ys, xs.start + 1 : xs.stop - 2]
    if template.shape[1] < ECHO_MIN_WIDTH or template.shape[0] < 2:
        return []
    text = None
    if detail is not None:
        h, w = template.shape
        region = Rect((xs.start + 1) * SCALE, ys.start * SCALE, w * SCALE, h * SCALE)
        text = detail.text(region)
        if text is not None and text[0].shape[1] < ECHO_MIN_WIDTH * SCALE:
            text = None
    found: list[tuple[int, Rect]] = []
    left = FINE_PIXELS
    # Each echo's box as the typing's own (its first column and the caret's last two
    # taken in again): every letter, for the mask to grow from as the field's does.
    # (Measured: the last column of an echo's picture less those was the stroke of an
    # 'e', one level over the text's three rows, taken for an edge: no growth.)
    box = Rect(
        xs.start * SCALE, ys.start * SCALE, (xs.stop - xs.start) * SCALE, template.shape[0] * SCALE
    )
    for j, screen in enumerate(later):
        hits = [
            (r, Rect(r.x - SCALE, r.y, box.w, box.h))
            for r in find_template(screen, template, ECHO_MATCH)
        ]
        change = changes[j] if changes is not None and j < len(changes) else None
        if text is not None and change is not None and left > 0:
            picture, dx, dy = text
            fine, searched = change.find(picture, left)
            left -= searched
            dx += region.x - box.x
            dy += region.y - box.y
            hits += [(h, Rect(h.x - dx, h.y - dy, box.w, box.h).around_grid(SCALE)) for h in fine]
        for match, echo in hits:
            if match.intersects(typed.grow(8)) or any(echo.intersects(r) for _, r in found):
                continue
            found.append((j, echo))
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
    cannot match. Each piece of what changed (`pieces`: lines, and on a line what lies
    `ECHO_GAP` unchanged columns apart) counts when it was blank before, is one line no
    taller than the field's own change, no wider than twice the typed text (plus a glyph)
    and at least two downscaled pixels each way: an icon that changed beside it had
    something drawn before, a dialog or a list is taller, a clock's changing stroke
    smaller."""
    found: list[Rect] = []
    moved = moved_pixels(before, after)
    line = (typed.x + typed.w // 2, typed.y + typed.h // 2)
    for region in changed_regions(before, after):
        for piece in pieces(moved, region, ECHO_GAP):
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
    bands = joined(np.asarray(inside.any(axis=1)), LINE_GAP)
    boxes = (box_of(inside[top:bottom], ys.start + top, xs.start) for top, bottom in bands)
    return [b for b in boxes if b is not None]  # (a run holds a changed pixel: never None)


def pieces(moved: np.ndarray, region: Rect, gap: int) -> list[Rect]:
    """`region`'s bands (`text_lines`) cut further where `gap` columns in a row did not
    change: the separate things one action changed on a line (an icon, a word)."""
    out: list[Rect] = []
    for band in text_lines(moved, region):
        ys, xs = small_slice(band, moved.shape)
        inside = moved[ys, xs]
        for left, right in joined(np.asarray(inside.any(axis=0)), gap):
            box = box_of(inside[:, left:right], ys.start, xs.start + left)
            if box is not None:  # (a run holds a changed pixel: never None)
                out.append(box)
    return out
