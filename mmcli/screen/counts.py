"""Lines of text that count what was typed: an editor's status bar ("5 words, 30
characters", "Ln 1, Col 12"), a field's "27 characters left". Typing another value moves
their numbers by the value's length, so their pixels differ from the recorded ones on a
screen that is the recorded screen for that value (Writer, 3 of 3 replays with a longer
name stopped at the step after the typing).

The recorder reads such a line by OCR wherever the typing changed a line off its field
that shows a number, and keeps it (`CountLine`) for each later step and the outcome, with
the total length of the values typed before it. Replay reads the line where it stands now
only where the pixels differ there, and lets it differ when it reads the same words with
each number the same or moved by exactly the change in the typed values' length, in
characters or in words (`agrees`). Any other text, another word, a number moved by
anything else, stays a difference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mmcli.model import PLACEHOLDER
from mmcli.screen.fingerprint import Rect

MAX_COUNT_TEXT = 200
"""The longest line a recording keeps as a count line."""
MAX_COUNT_LINES = 3
"""Count lines kept per screen at most."""
MAX_ROW_CELLS = 64
"""The most cells a count line's row keeps."""
NUMBER = re.compile(r"(\d+)")
CELL = re.compile(r"|[0-9a-f]{16}")
"""A row cell's digest as a recording keeps it: 16 hex digits, or "" for the line's own."""


@dataclass(frozen=True)
class CountLine:
    """A line of text on a step's screen, off the typed field, that showed a number when
    recorded: where it stood (the line across the window typed into), what OCR read
    there, and the length of the values typed before it, in characters and in words."""

    rect: Rect
    text: str
    """"" where it read as no count (another window over it): its row alone is kept."""
    chars: int
    words: int
    row: Rect | None = None
    """The line's rows across the window it was in, when its cells were kept."""
    cells: tuple[str, ...] = ()
    """The row's cells then, left to right, each a digest of its ink, this line's own
    cell as "" (`readback.reader.row_cells`): a cell the count's growth moved sideways
    is the same cell."""
    over: str = ""
    """For a line kept unread: the digest of what showed in its cell then (the window
    over it)."""


def same_row(a: Rect, b: Rect) -> bool:
    """Whether two count lines' bands are on one row (the same rows, overlapping)."""
    return a.y == b.y and a.h == b.h and a.intersects(b)


def on_count_rows(
    screens: Sequence[tuple[CountLine, ...]],
) -> list[tuple[CountLine, ...]]:
    """Each screen's count lines with those kept unread (text "") left only on a row where
    a line of some screen reads as a count, at most `MAX_COUNT_LINES` a screen, read
    ones first: a line that never reads as a count is nothing to read against."""
    read = [c.rect for lines in screens for c in lines if c.text]
    kept = []
    for lines in screens:
        known = [c for c in lines if c.text or any(same_row(c.rect, r) for r in read)]
        known.sort(key=lambda c: not c.text)
        kept.append(tuple(known[:MAX_COUNT_LINES]))
    return kept


def typed_length(values: Iterable[str]) -> tuple[int, int]:
    """The total length of `values`, in characters and in words."""
    texts = list(values)
    return sum(len(t) for t in texts), sum(len(t.split()) for t in texts)


def placeholders(texts: Iterable[str]) -> list[str]:
    """The params named in `texts` (typed text with its values as placeholders), once per
    time each was typed."""
    return [m.group(1) for text in texts for m in PLACEHOLDER.finditer(text)]


def shifts(line: CountLine, typed: Iterable[str], values: Mapping[str, str]) -> set[int]:
    """How far a number of `line` may move this run: not at all, or by the change in the
    length (characters, words) of the values typed before it (`typed`: their params, once
    per time typed), either way (a count of what is left moves against it)."""
    chars, words = typed_length(values.get(p, "") for p in typed)
    moved = {chars - line.chars, words - line.words}
    return {0} | moved | {-m for m in moved}


def agrees(recorded: str, live: str, allowed: set[int]) -> bool:
    """Whether `live` (OCR of the line now) reads `recorded` with each number moved by
    one of `allowed` (0 included): the same words and signs, in the same order."""
    a, b = NUMBER.split(_normal(recorded)), NUMBER.split(_normal(live))
    if len(a) != len(b) or len(a) < 2:  # no number at all: the pixels judge
        return False
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if i % 2 == 0:
            if x != y:
                return False
        elif int(y) - int(x) not in allowed:
            return False
    return True


def _normal(text: str) -> str:
    return " ".join(text.split())
