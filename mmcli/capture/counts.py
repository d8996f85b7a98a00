"""The lines a recording keeps as counting what was typed (`screen.counts`): where
typing changed a line of text off its field, inside the window typed into (an editor's
status bar), that line's cell is cropped on every later screen (`CountBands`, at capture
time, from the full-resolution frame), and read by OCR when the steps are built
(`count_lines`): a line that shows a number, none of the values and nothing of a
secret is kept with the step (`Step.counts`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mmcli.model import ActionKind
from mmcli.params import leaked_in, parametrize
from mmcli.readback.reader import band_pixels, cell_band, read_count
from mmcli.screen.analysis import changed_regions, moved_pixels
from mmcli.screen.carets import typed_lines
from mmcli.screen.counts import (
    MAX_COUNT_LINES,
    MAX_COUNT_TEXT,
    CountLine,
    typed_length,
)
from mmcli.screen.echoes import text_lines
from mmcli.screen.fingerprint import Frame, Rect

if TYPE_CHECKING:
    from mmcli.capture.steps import Capture

NO_WINDOW_REACH = 240
"""Px either side of a changed line its cell may run when the window typed into is not
known."""

Crops = tuple[tuple[Rect, np.ndarray], ...]
"""Count bands and their pixels (RGB) on one screen."""


class CountBands:
    """The lines typing changed off its field so far in a recording, and their bands'
    pixels on each screen the recorder keeps (each band widened to its cell there)."""

    def __init__(self) -> None:
        self.lines: list[tuple[Rect, Rect]] = []
        """Each line as the typing changed it, and the bounds its band keeps within."""

    def crops(self, captures: Sequence[Capture], frame: Frame) -> Crops:
        """The count bands' pixels on `frame` (the screen a capture keeps), the lines the
        last capture's typing changed off its field added first."""
        last = captures[-1] if captures else None
        if last is not None and last.action.kind is ActionKind.TYPE:
            for line, bounds in off_field_lines(last, frame):
                if len(self.lines) < MAX_COUNT_LINES and not any(
                    line.intersects(known) for known, _ in self.lines
                ):
                    self.lines.append((line, bounds))
        pixels = frame.pixels
        found: list[tuple[Rect, np.ndarray]] = []
        for line, bounds in self.lines:
            band = cell_band(pixels, line, bounds)
            if band is not None and not any(band.intersects(b) for b, _ in found):
                found.append((band, band_pixels(pixels, band).copy()))  # one a cell
        return tuple(found)


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
    nothing of a secret. `typed`: the params typed before this screen, once per time
    typed; none (no param typed yet), or a secret among them: no count line."""
    if not typed or any(p in secrets for p in typed):
        return ()
    hidden = {k: v for k, v in values.items() if k in secrets}
    chars, words = typed_length(values.get(p, "") for p in typed)
    found = []
    for rect, pixels in crops:
        key = repr(rect.as_list()).encode() + pixels.tobytes()
        if key not in cache:
            cache[key] = read_count(pixels, rect, MAX_COUNT_TEXT)
        text = cache[key]
        if text is None or leaked_in(text, hidden) or parametrize(text, values) != text:
            continue
        found.append(CountLine(rect, text, chars, words))
    return tuple(found)
