"""The lines a recording keeps as counting what was typed (`screen.counts`): where
typing changed a line of text off its field, inside the window typed into (an editor's
status bar), that line's cell is cropped on every later screen (`CountBands`, at capture
time, from the full-resolution frame), and read by OCR when the steps are built
(`count_lines`): a line that shows a number, none of the values and nothing of a
secret is kept with the step (`Step.counts`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mmcli.model import Action, ActionKind
from mmcli.params import leaked_in, parametrize
from mmcli.readback.reader import (
    Cell,
    band_pixels,
    cell_band,
    count_row,
    digests,
    read_count,
    row_cells,
)
from mmcli.screen.analysis import changed_regions, moved_pixels
from mmcli.screen.carets import typed_lines
from mmcli.screen.counts import (
    MAX_COUNT_TEXT,
    CountLine,
    typed_length,
)
from mmcli.screen.echoes import text_lines
from mmcli.screen.fingerprint import Frame, Rect

if TYPE_CHECKING:
    from mmcli.capture.steps import Capture

MAX_TRACKED_LINES = 8
"""Lines typing changed off its field a recording follows at most (a toolbar's buttons
change with the typing too; which line counts is known only once read)."""
LEAVING_KEYS = frozenset({"enter", "return", "tab", "esc", "escape", "kp_enter"})
"""Keys that leave a field or close what it is in (what they change is not a count)."""
NO_WINDOW_REACH = 240
"""Px either side of a changed line its cell may run when the window typed into is not
known."""


@dataclass(frozen=True)
class CountCrop:
    """A count band on one screen: where, its pixels (RGB), and its row's cells."""

    band: Rect
    pixels: np.ndarray
    row: Rect
    """The band's row across the bounds it keeps within (the window typed into),
    `readback.reader.count_row`."""
    cells: tuple[Cell, ...] | None
    """The row's cells (`readback.reader.row_cells`), None where the band's is not found."""


Crops = tuple[CountCrop, ...]
"""The count bands on one screen."""


class CountBands:
    """The lines typing changed off its field so far in a recording, and their bands'
    pixels on each screen the recorder keeps (each band widened to its cell there)."""

    def __init__(self) -> None:
        self.lines: list[tuple[Rect, Rect]] = []
        """Each line as the typing changed it, and the bounds its band keeps within."""
        self._typing: Capture | None = None
        """The last typing, while only keys have followed it."""

    def crops(self, captures: Sequence[Capture], frame: Frame) -> Crops:
        """The count bands' pixels on `frame` (the screen a capture keeps), the lines the
        last typing changed off its field added first: the typing just before, or one
        only keys have followed since (an app that draws its count late, Writer's status
        bar after the next key in some runs, shows it changed here first)."""
        last = captures[-1] if captures else None
        if last is not None and last.action.kind is ActionKind.TYPE:
            self._typing = last
        elif last is not None and not _stays_in_field(last.action):
            self._typing = None
        if self._typing is not None:
            for line, bounds in off_field_lines(self._typing, frame):
                if len(self.lines) < MAX_TRACKED_LINES and not any(
                    line.intersects(known) for known, _ in self.lines
                ):
                    self.lines.append((line, bounds))
        pixels = frame.pixels
        found: list[CountCrop] = []
        for line, bounds in self.lines:
            band = cell_band(pixels, line, bounds)
            if band is None or any(band.intersects(c.band) for c in found):
                continue  # one a cell
            row = count_row(band, bounds)
            cells = row_cells(pixels, row, band) if row is not None else None
            crop = band_pixels(pixels, band).copy()
            found.append(CountCrop(band, crop, row or band, cells))
        return tuple(found)


def _stays_in_field(action: Action) -> bool:
    """Whether `action` is a key that keeps to the field typed into (a selection, the
    caret moved), after which a count the typing changed is still looked for."""
    if action.kind not in (ActionKind.PRESS, ActionKind.HOTKEY):
        return False
    return not any(k.lower() in LEAVING_KEYS for k in action.keys)


def off_field_lines(cap: Capture, frame: Frame) -> list[tuple[Rect, Rect]]:
    """The lines of text `cap`'s typing changed (`frame`: the screen after it) other than
    its field's, inside the window that had the keyboard, each with the bounds its band
    keeps within (that window; `NO_WINDOW_REACH` either side where it is not known)."""
    changed = changed_regions(cap.small, frame.small)
    moved = moved_pixels(cap.small, frame.small)
    lines = [b for r in changed for b in text_lines(moved, r)]
    window = cap.window_rect
    field = typed_lines(lines, cap.focus, window)
    if not field:
        return []  # where the text went is not known: nothing is told apart from it
    found = []
    for line in lines:
        if any(line.intersects(f) for f in field):
            continue
        if window is not None and not line.inside(window):
            continue
        found.append((line, window or line.grow(NO_WINDOW_REACH)))
    return found


def count_lines(
    crops: Crops,
    typed: Sequence[str],
    values: Mapping[str, str],
    secrets: set[str],
    cache: dict[bytes, str | None],
) -> tuple[CountLine, ...]:
    """The count lines of one screen: each band's crop read by OCR (`cache`: reads made
    already, by the crop's bytes) and kept when it shows a number, none of the values and
    nothing of a secret; one that shows no count (another window over it: an open menu)
    is kept unread (text "") with its row's cells, where they were found. `typed`: the params typed
    before this screen, once per time typed; none (no param typed yet), or a secret
    among them: no count line."""
    if not typed or any(p in secrets for p in typed):
        return ()
    hidden = {k: v for k, v in values.items() if k in secrets}
    chars, words = typed_length(values.get(p, "") for p in typed)
    found = []
    for crop in crops:
        key = repr(crop.band.as_list()).encode() + crop.pixels.tobytes()
        if key not in cache:
            cache[key] = read_count(crop.pixels, crop.band, MAX_COUNT_TEXT)
        text = cache[key] or ""  # not read as a count: kept unread, with its row's cells
        if leaked_in(text, hidden) or parametrize(text, values) != text:
            continue
        if crop.cells is None:
            if text:
                found.append(CountLine(crop.band, text, chars, words))
            continue
        over = "" if text else next(c.digest for c in crop.cells if c.own)
        cells = digests(crop.cells)
        found.append(CountLine(crop.band, text, chars, words, crop.row, cells, over))
    return tuple(found)
