"""The text caret told from the text OCR reads: after it, or inside it where the field
kept text after the typed part."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from mmcli.readback.field import ReadOutcome, compare_typed
from mmcli.readback.ocr import _caret_columns, read_region
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
