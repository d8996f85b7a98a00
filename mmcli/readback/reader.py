"""Reading the field typed text went to: the accessibility tree first (the app's own
account of its text), OCR of the field's box on a grabbed screen where the app exposes
none (Tk, Motif, Wine, a canvas, a VNC desktop).

`read(pid, box, frame, prefer)` is what a backend's `read_field` does on a local X
display: `pid` is the process of the window that has the keyboard (its `_NET_WM_PID`),
`box` where the field stands on `frame`. `prefer` "ocr" skips the accessibility tree (a
field recorded through OCR: its app exposed none).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from mmcli.readback import atspi, ocr
from mmcli.readback.field import MIN_CONFIDENCE, FieldText, NotRead
from mmcli.screen.carets import CARET_WIDTH
from mmcli.screen.counts import MAX_ROW_CELLS, NUMBER
from mmcli.screen.fingerprint import SCALE, Frame, Rect
from mmcli.screen.runs import runs

if TYPE_CHECKING:
    from mmcli.screen.under import SeenUnder

BOX_MARGIN = 2
"""Pixels of the field's ground kept around its box for OCR (its border is painted out)."""


def read(
    pid: int | None,
    box: Rect | None,
    frame: Frame | None,
    prefer: str = "accessibility",
    covered: Callable[[], Sequence[Rect]] | None = None,
    display: str | None = None,
    window: Rect | None = None,
    under: Under | None = None,
) -> FieldText | NotRead:
    """The text of the focused field of process `pid` through the accessibility tree
    (the bus of X display `display`; `window`: the client area of the window with the
    keyboard, `on_screen`), else by OCR of `box` on `frame` less what the windows
    `covered()` gives cover at its ends (asked only then), or under them where `under`
    gives the windows' own pixels there; the last reason nothing could be read
    otherwise."""
    failed: NotRead | None = None
    if prefer != "ocr":
        got = atspi.read_field(None, pid, display=display)
        if isinstance(got, FieldText):
            return replace(got, rect=on_screen(got.rect, window))
        failed = got
    if box is not None and frame is not None:
        return read_pixels(frame, box, covered() if covered is not None else (), under)
    return failed or NotRead("ocr", "the field's place on the screen is not known")


def on_screen(rect: Rect | None, window: Rect | None) -> Rect | None:
    """Where a field the tree placed at `rect` stands on the screen. GTK 4 (4.8) on X11
    gives extents from its window's corner whatever coordinates are asked (a Name entry
    read at 99,51 in a window at 761,452): a rect outside the window with the keyboard
    (`window`) that lies inside it once moved by the window's corner is taken so; any
    other is as the tree gave it."""
    if rect is None or window is None or rect.inside(window):
        return rect
    moved = rect.moved(window.x, window.y)
    return moved if moved.inside(window) else rect


Under = Callable[[Frame, Sequence[Rect]], "SeenUnder | None"]
"""The screen seen under the windows at those places, from each window's own pixels
(`Backend.seen_under`); None where they are not kept whole."""


def read_pixels(
    frame: Frame, box: Rect, covered: Sequence[Rect] = (), under: Under | None = None
) -> FieldText | NotRead:
    """OCR of the field at `box` on `frame` (clipped to the screen). Where a window is
    over it (`covered`: their frames), the field is read whole under it where `under`
    gives the windows' own pixels there (the read marked `under`); else it is cut short
    where the window reaches past one of its ends (`uncovered`), and a window still over
    part of what is read marks the read `hidden`."""
    grown = box.grow(BOX_MARGIN)
    x0, y0 = max(grown.x, 0), max(grown.y, 0)
    x1, y1 = min(grown.right, frame.width), min(grown.bottom, frame.height)
    whole = Rect(x0, y0, x1 - x0, y1 - y0)
    over = [r for r in covered if r.intersects(whole)]
    seen = under(frame, over) if over and under is not None else None
    if seen is not None and not any(h.intersects(whole) for h in seen.hidden):
        crop = seen.frame.pixels[y0:y1, x0:x1, 2::-1]  # BGRX to RGB
        read = ocr.read_region(crop, whole)
        return replace(read, under=True) if isinstance(read, FieldText) else read
    shown = uncovered(whole, covered)
    if shown.w < 4 or shown.h < 4:
        return NotRead("ocr", f"the field's box {box} is off the screen or covered")
    crop = frame.pixels[shown.y : shown.bottom, shown.x : shown.right, 2::-1]  # BGRX to RGB
    read = ocr.read_region(crop, shown)
    if isinstance(read, FieldText) and any(r.intersects(shown) for r in covered):
        return replace(read, hidden=True)
    return read


def uncovered(box: Rect, covered: Sequence[Rect]) -> Rect:
    """`box` less the columns a window over it covers from one end on (a notification's
    corner over the end of a wide field): what is cut is neither the field's ground nor
    its text, and read as either it made the text run to the field's edge (read as cut
    short: not verified) or hid a caret among ink as tall. A text that runs under the
    window still reaches the new end and reads as cut short. A window over the middle
    cuts nothing (what it covers stays in the read)."""
    x0, x1 = box.x, box.right
    for rect in covered:
        if not rect.intersects(box):
            continue
        if rect.right >= x1 > rect.x > x0:
            x1 = rect.x
        elif rect.x <= x0 < rect.right < x1:
            x0 = rect.right
    return Rect(x0, box.y, x1 - x0, box.h)


GROUND_TOLERANCE = 24
"""Colour levels within which a pixel is the field's ground."""
NEAR = 8
"""Pixels either side of typed text its field's ground is taken from."""
FIELD_REACH = 1200
"""How far (px) either side of typed text its field is looked for."""


def widen_to_field(pixels: np.ndarray, text: Rect) -> Rect:
    """The field typed `text` (screen pixels) is in, as wide as it runs on its line: from
    the text out to the first column either side that is not the field's ground anywhere
    from the band's top to its bottom (the field's border, a vertical line, or what lies
    past the field: no glyph fills its line's height), or as far as `FIELD_REACH`; or
    to a border inside the text's box at its edge (the box is in whole blocks). The
    ground is the commonest colour around the text; the band is the box's rows that are
    mostly ground (a highlighted line's), and a caret as tall as them is no border
    (`_carets`). A field's earlier text (a value typed
    twice) is inside it, and so inside what OCR reads. `pixels`: the screen, BGRX."""
    height, width = pixels.shape[:2]
    y0, y1 = max(text.y, 0), min(text.bottom, height)
    x0, x1 = max(text.x, 0), min(text.right, width)
    if y1 - y0 < 2 or x1 <= x0:
        return text
    near = pixels[y0:y1, max(x0 - NEAR, 0) : min(x1 + NEAR, width), :3]
    ground = _commonest(near)  # the text's ink is the lesser part
    offset = max(x0 - FIELD_REACH, 0)
    end = min(x1 + FIELD_REACH, width)
    # The rows that are the field's around the text: a line's highlight may end above
    # the box's last rows (the box is in whole blocks), and rows of another colour all
    # along are no column's ink.
    ya, yb = _ground_rows(near, ground)
    band = pixels[y0 + ya : y0 + yb, offset:end, :3]
    ink = _ink(band, ground)
    carets = _carets(pixels[:, offset:end, :3], y0 + ya, y0 + yb, ground)
    border = np.asarray(ink.all(axis=0)) & ~carets
    left, right = x0 - offset, x1 - offset
    # The text's box is in whole blocks of the downscaled screen: its first or last
    # columns may be the field's border itself (GIMP's export name field: its border at
    # the box's first column, the dialog's ground just outside within tolerance). A
    # border there runs on above and below the text's rows, a caret beside the text
    # does not (it changed with the text: its rows are the text's).
    edge = min(SCALE, (right - left) // 2)
    tall = pixels[max(y0 + ya - 1, 0) : min(y0 + yb + 1, height), offset:end, :3]
    outside = np.abs(tall.astype(np.int16) - ground) > GROUND_TOLERANCE
    border_tall = outside.any(axis=2).all(axis=0) & ~carets
    inner = np.flatnonzero(border_tall[left : left + edge])
    if inner.size:
        left += int(inner[-1]) + 1
    else:
        while left > 0 and not border[left - 1]:
            left -= 1
    inner = np.flatnonzero(border_tall[right - edge : right])
    if inner.size:
        right += int(inner[0]) - edge
    else:
        while right < border.size and not border[right]:
            right += 1
    return Rect(left + offset, y0, right - left, y1 - y0)


COUNT_PAD = 4
"""Rows kept above and below a counting line's changed rows (the digits changed: the
letters around them reach higher and lower)."""


def cell_band(pixels: np.ndarray, line: Rect, bounds: Rect) -> Rect | None:
    """The band of a line of text that counts what was typed (`screen.counts`), on one
    screen: its cell, widened from the line's middle to the separators either side (a
    status bar's cell grows with its text: "Selected: 1 word, 11 characters" is wider
    than "5 words, 22 characters"), `COUNT_PAD` rows above and below, within `bounds`
    (and the screen); None when too little is left. A separator is a column of ink over
    the padded band less `COUNT_PAD` rows (`separators`); over the changed rows alone (a
    digit's height) a letter's stem filling them ended the cell inside its text ("5,221"
    read of "5 words, 22 characters")."""
    height, width = pixels.shape[:2]
    band = Rect(bounds.x, line.y - COUNT_PAD, bounds.w, line.h + 2 * COUNT_PAD)
    inside = band.intersection(Rect(0, 0, width, height))
    middle = line.x + line.w // 2 - (inside.x if inside is not None else 0)
    if inside is None or not 0 <= middle < inside.w or inside.h < 6:
        return None
    strip = pixels[inside.y : inside.bottom, inside.x : inside.right, :3]
    near = strip[:, max(line.x - inside.x - NEAR, 0) : max(line.right - inside.x + NEAR, 0)]
    wall = separators(_ink(strip, _commonest(near if near.size else strip)))
    if wall[middle]:
        return None
    left, right = middle, middle + 1
    while left > 0 and not wall[left - 1]:
        left -= 1
    while right < wall.size and not wall[right]:
        right += 1
    cell = Rect(inside.x + left, inside.y, right - left, inside.h)
    return cell if cell.w >= 8 else None


def _ground_rows(band: np.ndarray, ground: np.ndarray) -> tuple[int, int]:
    """The first and past-the-last rows of `band` that are mostly `ground`; all of its
    rows when none is."""
    mostly = np.flatnonzero((~_ink(band, ground)).mean(axis=1) >= 0.5)
    if mostly.size == 0:
        return 0, band.shape[0]
    return int(mostly[0]), int(mostly[-1]) + 1


def _carets(pixels: np.ndarray, y0: int, y1: int, ground: np.ndarray) -> np.ndarray:
    """The columns of `pixels` (a strip of the screen, all its rows) that are a caret over
    rows `y0` to `y1`, not a border: runs at most `CARET_WIDTH` columns wide of one colour
    off the field's `ground` over those rows that stops at both the row above and the row
    below, where a border or a rule runs on past the line (jEdit's red caret spans
    exactly its highlighted line, the text area's border above it and the page below are
    other colours; its wrap margin runs on down the page)."""
    if y1 - y0 < 2 or y0 < 1 or y1 >= pixels.shape[0]:
        return np.zeros(pixels.shape[1], bool)
    line = pixels[y0:y1].astype(np.int16)
    colour = np.median(line, axis=0)
    steady = (np.abs(line - colour) <= GROUND_TOLERANCE).all(axis=2).all(axis=0)
    above = (np.abs(pixels[y0 - 1].astype(np.int16) - colour) > GROUND_TOLERANCE).any(axis=1)
    below = (np.abs(pixels[y1].astype(np.int16) - colour) > GROUND_TOLERANCE).any(axis=1)
    inked = (np.abs(colour - ground) > GROUND_TOLERANCE).any(axis=1)
    bar = steady & inked & above & below
    out = np.zeros_like(bar)
    for start, stop in runs(bar):
        if stop - start <= CARET_WIDTH:  # a wider block of one colour is no caret
            out[start:stop] = True
    return out


def _commonest(pixels: np.ndarray) -> np.ndarray:
    """The commonest colour of `pixels` (BGR): the ground text is drawn on."""
    colours, counts = np.unique(pixels.reshape(-1, 3), axis=0, return_counts=True)
    return colours[counts.argmax()].astype(np.int16)


def _ink(pixels: np.ndarray, ground: np.ndarray) -> np.ndarray:
    """Where `pixels` (BGR) are off `ground` by more than `GROUND_TOLERANCE`."""
    return np.asarray((np.abs(pixels.astype(np.int16) - ground) > GROUND_TOLERANCE).any(axis=2))


def separators(ink: np.ndarray) -> np.ndarray:
    """The columns of a count line's band (`ink`: `_ink` of its pixels) that separate its
    cells: ink over all its rows but `COUNT_PAD` (a status bar's separator is 16 to 17
    rows tall in a band of 16 to 20, Writer's glyphs at most 11)."""
    return np.asarray(ink.sum(axis=0) >= ink.shape[0] - COUNT_PAD)


ROW_MARGIN = SCALE
"""Rows above and below a count line's band its row takes in (one block of the
downscaled screen: where a difference beside the band is found)."""
RULE_SHARE = 0.9
"""A row of a cell of a count line's row with ink over more than this share of it is a
rule (an edge drawn across), not the cell's content."""


@dataclass(frozen=True)
class Cell:
    """A cell of a count line's row: its columns on the screen and a digest of its ink."""

    x: int
    right: int
    digest: str
    own: bool = False
    """The count line's own cell (read by OCR; kept as "" in `CountLine.cells`)."""


def count_row(band: Rect, bounds: Rect) -> Rect | None:
    """The row of a count line's band: its rows and `ROW_MARGIN` more above and below
    (a status bar's separators and edges run past the band) across `bounds` (the
    window)."""
    return Rect(bounds.x, band.y - ROW_MARGIN, bounds.w, band.h + 2 * ROW_MARGIN).intersection(
        bounds
    )


def row_cells(pixels: np.ndarray, row: Rect, band: Rect) -> tuple[Cell, ...] | None:
    """The cells of a count line's row (`row`: `count_row`), left to right, each with a
    digest of its ink (its pixels off the row's ground, cut to their box: a cell its
    neighbour's growth moved sideways digests the same), the count line's own cell (the
    one under `band`'s middle, read by OCR instead) marked. A cell ends at a separator
    (`separators`, over the band's rows). None when `band`'s middle is on a separator or
    off the row, or the row has more than `MAX_ROW_CELLS`."""
    height, width = pixels.shape[:2]
    inside = row.intersection(Rect(0, 0, width, height))
    if inside is None:
        return None
    strip = pixels[inside.y : inside.bottom, inside.x : inside.right, :3]
    ink = _ink(strip, _commonest(strip))
    top, bottom = max(band.y - inside.y, 0), max(band.bottom - inside.y, 0)
    if bottom - top < 6:
        return None
    separator = separators(ink[top:bottom])
    middle = band.x + band.w // 2 - inside.x
    cells: list[Cell] = []
    x = 0
    while x < separator.size:
        if separator[x]:
            x += 1
            continue
        start = x
        while x < separator.size and not separator[x]:
            x += 1
        here = start <= middle < x
        # A rule across the cell (the status bar's top edge in the padded rows) is left
        # out of its box: with it the box would be the cell's width, which moves.
        mark = ink[:, start:x].copy()
        mark[mark.mean(axis=1) > RULE_SHARE] = False
        rows, cols = np.nonzero(mark)
        if rows.size == 0:
            if here:
                cells.append(Cell(inside.x + start, inside.x + x, "0" * 16, own=True))
            continue  # ground between two separators
        top, left = int(rows.min()), start + int(cols.min())
        crop = strip[top : int(rows.max()) + 1, left : start + int(cols.max()) + 1]
        shape = f"{top},{crop.shape[0]},{crop.shape[1]}".encode()
        digest = hashlib.blake2b(shape + crop.tobytes(), digest_size=8).hexdigest()
        cells.append(Cell(inside.x + start, inside.x + x, digest, own=here))
    own = any(c.own for c in cells)
    return tuple(cells) if own and len(cells) <= MAX_ROW_CELLS else None


def digests(cells: Sequence[Cell]) -> tuple[str, ...]:
    """A row's cells as a recording keeps them (`CountLine.cells`): the own cell as ""."""
    return tuple("" if c.own else c.digest for c in cells)


def band_pixels(pixels: np.ndarray, band: Rect) -> np.ndarray:
    """A band of a screen (`pixels`, BGRX), as RGB."""
    return pixels[band.y : band.bottom, band.x : band.right, 2::-1]


def read_count(crop: np.ndarray, band: Rect, longest: int) -> str | None:
    """What OCR reads in a band (`crop`: its pixels, RGB), its whitespace runs as one
    space; None when it is unsure, reads no digit, or more than `longest` characters."""
    read = ocr.read_region(crop, band)
    if not isinstance(read, FieldText) or read.confidence is None:
        return None
    text = " ".join(read.text.split())
    if read.confidence < MIN_CONFIDENCE or not NUMBER.search(text):
        return None
    return text if len(text) <= longest else None
