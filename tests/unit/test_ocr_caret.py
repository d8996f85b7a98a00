"""The text caret told from the text OCR reads: after it, or inside it where the field
kept text after the typed part."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from mmcli.readback.field import NotRead, ReadOutcome, compare_typed
from mmcli.readback.ocr import _caret_columns, _middle_band, read_region
from mmcli.screen.fingerprint import Rect
from tests.desktop import need

FIXTURES = Path(__file__).parent.parent / "fixtures"


def strokes(height: int, *columns: tuple[int, int, int]) -> np.ndarray:
    """An ink mask `height` rows tall with a vertical stroke (x, top, bottom) per column."""
    ink = np.zeros((height, 60), dtype=bool)
    for x, top, bottom in columns:
        ink[top:bottom, x] = True
    return ink


# Letters' stems: an "l" (ascender to the baseline at row 16), an "o" (x-height), a "p"
# (x-height below the baseline); a caret runs from above the ascenders to below.
ELL, OH, PEE = (4, 3, 16), (10, 8, 16), (30, 8, 19)


def test_a_caret_inside_the_text_is_found() -> None:
    assert _caret_columns(strokes(22, ELL, OH, (20, 1, 21), PEE)) == [20]


def test_a_caret_after_the_text_is_found() -> None:
    assert _caret_columns(strokes(22, ELL, OH, PEE, (40, 1, 21))) == [40]


def test_letters_alone_hold_no_caret() -> None:
    assert _caret_columns(strokes(22, ELL, OH, PEE)) == []
    # An "l" at the end stops at the baseline: no caret, even as the tallest stroke.
    assert _caret_columns(strokes(22, OH, (30, 1, 16))) == []


def test_a_j_among_lower_case_letters_is_no_caret() -> None:
    """A "J" (cap height, below the baseline) beside letters of x-height alone is the
    tallest stroke, beyond every other at both ends: it is a letter, not a caret."""
    assert _caret_columns(strokes(22, (4, 3, 19), OH, (14, 8, 16), (24, 8, 16))) == []


def test_two_bars_are_no_caret() -> None:
    assert _caret_columns(strokes(22, ELL, (20, 1, 21), OH, (40, 1, 21))) == []


def test_gimps_export_name_is_read_with_its_caret_before_the_extension() -> None:
    """A real screen: GIMP 2.10's export dialog at Xfce's dark theme after "Ada" was
    typed over the selected "photo" (the caret stands before ".png"); read "Adalpng"
    when only a caret after the text was painted out."""
    need("tesseract")
    crop = np.asarray(Image.open(FIXTURES / "gimp-export-name.png").convert("RGB"))
    field = crop[7:30, 13:824]  # the field's box inside its border
    read = read_region(field, Rect(453, 67, field.shape[1], field.shape[0]))
    assert compare_typed("Ada.png", read).outcome is ReadOutcome.VERIFIED, read


def test_a_phrase_is_found_word_by_word_or_glued_to_the_words_around_it() -> None:
    """Typed twice, "Jo Ab" reads "Jo AbJo Ab": word by word it is found once; glued, at
    both places, each run of words it spans (the caller reads each place again)."""
    from mmcli.readback.ocr import _glued_runs, _loose_words, _word_runs
    from mmcli.screen.fingerprint import Rect

    def read(*words: str) -> list[tuple[list[str], Rect]]:
        return [(_loose_words(w), Rect(10 * i, 0, 8, 8)) for i, w in enumerate(words)]

    target = _loose_words("Jo Ab")
    twice = read("Jo", "AbJo", "Ab")
    assert _word_runs(twice, target) == []
    assert _glued_runs(twice, target) == [(0, 1), (1, 2)]
    once = read("Name:", "Jo", "Ab", "Canada")
    assert _word_runs(once, target) == [(1, 2)]
    assert _glued_runs(once, target) == [(1, 2)]
    assert _word_runs(read("Canada"), ["ada"]) == []
    assert _glued_runs(read("Canada"), ["ada"]) == [(0, 0)]  # inside a word, only glued


def test_a_phrase_is_taken_for_a_field_only_where_it_is_alone_on_its_line() -> None:
    """Typed twice ("Ada Ada", or glued "AdaAda" next to a clean "Ada" on the same line),
    which place is the field's cannot be told: none is taken. On two lines (a cell and
    its input line), each is alone on its own."""
    from mmcli.readback.ocr import _alone
    from mmcli.screen.fingerprint import Rect

    cell, input_line = Rect(60, 260, 40, 12), Rect(372, 215, 40, 12)
    assert _alone([cell, input_line], [cell, input_line]) == [cell, input_line]
    beside = Rect(110, 260, 40, 12)
    assert _alone([cell, beside], [cell, beside]) == []
    glued = Rect(200, 262, 80, 12)
    assert _alone([cell, input_line], [cell, input_line, glued]) == [input_line]


def test_a_line_where_a_phrase_shows_twice_is_the_field_that_holds_it_twice() -> None:
    """Gnumeric's input line holding a long name typed twice ("...JuniorJosephine..."):
    its two places on one line make one box; a place alone on its line (the cell, cut by
    its border) makes none."""
    from mmcli.readback.ocr import _twice
    from mmcli.screen.fingerprint import Rect

    first, second = Rect(329, 3, 316, 14), Rect(544, 3, 292, 14)
    cell = Rect(271, 49, 292, 17)
    assert _twice([first, second, cell]) == [Rect(329, 3, 507, 14)]
    assert _twice([first, cell]) == []


def _ruled(height: int, rules: tuple[int, ...], remnant: bool = True) -> np.ndarray:
    """A white crop with a grey gridline (Calc's 192) across it at each of `rules`, and
    (`remnant`) the last rows of another cell's glyphs at its top."""
    gray = np.full((height, 90), 255, dtype=np.uint8)
    if remnant:
        gray[0:2, 10:30:3] = 0
    for row in rules:
        gray[row, 2:] = 192  # a dark bar (the selected row's header) at its left end
        gray[row, :2] = 13
    return gray


def _band(gray: np.ndarray) -> tuple[int, int]:
    return _middle_band(gray, np.abs(gray.astype(np.int16) - 255) > 64, 255)


def test_the_band_between_the_gridlines_round_the_middle_is_read() -> None:
    assert _band(_ruled(28, (4, 21))) == (5, 21)
    assert _band(_ruled(28, ())) == (0, 28)  # no rule: the whole crop
    assert _band(_ruled(28, (14,))) == (0, 28)  # the middle on a rule
    assert _band(_ruled(28, (4,))) == (5, 28)
    # Nothing past the rules but themselves: an entry's own frame, kept for the read.
    assert _band(_ruled(28, (0, 1, 26, 27), remnant=False)) == (0, 28)


def test_a_cells_box_past_its_gridlines_reads_the_cell_alone() -> None:
    """A real screen: LibreOffice Calc on Xfce, "Anna" typed into A2 under the bold
    header "Name"; the box grown around the text reaches past the cell's gridlines, and
    the header's last rows of pixels were read as a "." after the value."""
    need("tesseract")
    crop = np.asarray(Image.open(FIXTURES / "calc-cell-typed.png").convert("RGB"))
    read = read_region(crop)
    assert not isinstance(read, NotRead) and read.text == "Anna"


def test_a_cell_caught_before_its_text_is_drawn_reads_empty() -> None:
    """The same cell on the screen replay found still 30 ms after the keys: Calc had
    cleared the cell and drawn its caret, the text not yet (drawn some 80 ms later). Read
    empty, it differs from what was typed, and the read is made again until the text
    shows (`replay.landed`); read as OCR's guess at the header's remnants, it was "not
    verified" and never read again."""
    need("tesseract")
    crop = np.asarray(Image.open(FIXTURES / "calc-cell-drawing.png").convert("RGB"))
    read = read_region(crop)
    assert not isinstance(read, NotRead) and read.text == ""
    assert compare_typed("Anna", read).outcome is ReadOutcome.DIFFERS


def test_a_caret_before_a_scrollbar_s_edge_under_a_rule_is_found() -> None:
    """Wine's notepad: the line typed on, widened to its field, runs from a rule above
    it (the edit area's top edge, across the whole box) to the scrollbar's edge, with a
    margin of ground beyond that. The margin is blank but where the rule crosses it: it
    is stripped, the scrollbar's edge with it as the frame, and the caret is the last
    ink ("Adal" read before, to the field's edge: not verified in every Wine replay)."""
    need("tesseract")
    from mmcli.readback.reader import read_pixels
    from mmcli.screen.fingerprint import Frame

    crop = np.asarray(Image.open(FIXTURES / "wine-notepad-typed.png").convert("L"))
    screen = np.full((300, 900), 255, np.uint8)
    screen[110:150, 95:845] = crop
    frame = Frame.from_image(Image.fromarray(screen).convert("RGB"))
    read = read_pixels(frame, Rect(103, 123, 729, 14))
    check = compare_typed("Ada", read)
    assert check.outcome is ReadOutcome.VERIFIED, read


def test_a_caret_nearly_as_tall_as_the_crop_keeps_the_rows_below_the_baseline() -> None:
    """The margin rows the caret alone reaches are no margin: stripped as blank, the
    caret ended at the baseline and was read as an "l" (Qt's entry on Xfce: "Adal")."""
    from mmcli.readback.ocr import _inside_border

    ink = strokes(22, ELL, OH, (40, 1, 21))
    top, bottom, _, _ = _inside_border(ink)
    assert (top, bottom) == (1, 21)  # only the blank rows outside the caret's run
    assert _caret_columns(ink[top:bottom]) == [40]
