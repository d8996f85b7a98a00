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
from mmcli.readback.field import MIN_CONFIDENCE, FieldText
from mmcli.readback.ocr import read_region
from mmcli.readback.reader import widen_to_field
from mmcli.screen.analysis import changed_regions, moved_pixels
from mmcli.screen.carets import typed_lines
from mmcli.screen.counts import (
    MAX_COUNT_LINES,
    MAX_COUNT_TEXT,
    NUMBER,
    CountLine,
    typed_length,
)
from mmcli.screen.echoes import text_lines
from mmcli.screen.fingerprint import Frame, Rect

if TYPE_CHECKING:
    from mmcli.capture.steps import Capture

BAND_PAD = 4
"""Rows kept above and below a count line's changed rows (the digits changed: the
letters around them reach higher and lower)."""
NO_WINDOW_REACH = 240
"""Px either side of a changed line its cell may run when the window typed into is not
known."""

Crops = tuple[tuple[Rect, np.ndarray], ...]
"""Count bands and their pixels (RGB) on one screen."""


class CountBands:
    """The bands of the lines typing changed off its field so far in a recording, and
    their crops on each screen the recorder keeps."""

    def __init__(self) -> None:
        self.bands: list[Rect] = []

    def crops(self, captures: Sequence[Capture], frame: Frame) -> Crops:
        """The count bands' pixels on `frame` (the screen a capture keeps), the lines the
        last capture's typing changed off its field added first."""
        last = captures[-1] if captures else None
        if last is not None and last.action.kind is ActionKind.TYPE:
            for band in off_field_bands(last, frame):
                if len(self.bands) < MAX_COUNT_LINES and not any(
                    band.intersects(b) for b in self.bands
                ):
                    self.bands.append(band)
        return tuple(
            (b, frame.pixels[b.y : b.bottom, b.x : b.right, 2::-1].copy()) for b in self.bands
        )


def off_field_bands(cap: Capture, frame: Frame) -> list[Rect]:
    """The lines of text `cap`'s typing changed (`frame`: the screen after it) other than
    its field's, inside the window that had the keyboard, each widened to its cell (as a
    field is: to the separators either side) and by `BAND_PAD` rows."""
    changed = changed_regions(cap.small, frame.small)
    moved = moved_pixels(cap.small, frame.small)
    lines = [b for r in changed for b in text_lines(moved, r)]
    window = cap.window_rect
    field = typed_lines(lines, cap.focus, window)
    if not field:
        return []  # where the text went is not known: nothing is told apart from it
    screen = Rect(0, 0, frame.width, frame.height)
    bands = []
    for line in lines:
        if line in field or any(line.intersects(f) for f in field):
            continue
        if window is not None and not line.inside(window):
            continue
        cell = widen_to_field(frame.pixels, line)
        bounds = window or line.grow(NO_WINDOW_REACH)
        band = Rect(cell.x, cell.y - BAND_PAD, cell.w, cell.h + 2 * BAND_PAD)
        clipped = band.intersection(bounds)
        clipped = clipped.intersection(screen) if clipped is not None else None
        if clipped is not None and clipped.w >= 8 and clipped.h >= 6:
            bands.append(clipped)
    return bands


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
        key = rect.as_list().__repr__().encode() + pixels.tobytes()
        if key not in cache:
            cache[key] = _read(pixels, rect)
        text = cache[key]
        if text is None or leaked_in(text, hidden) or parametrize(text, values) != text:
            continue
        found.append(CountLine(rect, text, chars, words))
    return tuple(found)


def _read(pixels: np.ndarray, rect: Rect) -> str | None:
    """The text OCR reads in a band, when sure and holding a number."""
    read = read_region(pixels, rect)
    if not isinstance(read, FieldText) or read.confidence is None:
        return None
    text = " ".join(read.text.split())
    if read.confidence < MIN_CONFIDENCE or not NUMBER.search(text) or len(text) > MAX_COUNT_TEXT:
        return None
    return text
