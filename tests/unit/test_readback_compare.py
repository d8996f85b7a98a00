"""`readback.field.compare_typed`: a field's read judged against the text typed into it.

Only the exact text (whitespace runs and Unicode forms aside) is VERIFIED; the value
doubled, a prefix left from before, a cut value, a dropped character or another value
DIFFERS; a read that cannot tell (OCR's noise, part of the field showing, nothing read)
is UNREADABLE: "not verified", never a pass."""

from __future__ import annotations

import time

import pytest

from mmcli.readback.field import (
    FieldText,
    NotRead,
    ReadOutcome,
    compare_typed,
    normalise,
    ocr_distance,
    ocr_noise,
    substring_distance,
)

VERIFIED, DIFFERS, UNREADABLE = ReadOutcome.VERIFIED, ReadOutcome.DIFFERS, ReadOutcome.UNREADABLE


def tree(text: str, **kw: object) -> FieldText:
    """A read through the accessibility tree."""
    return FieldText(text, "accessibility", role=str(kw.pop("role", "text")), **kw)  # type: ignore[arg-type]


def ocr(text: str, confidence: float | None = 95.0, partial: bool = False) -> FieldText:
    return FieldText(text, "ocr", confidence=confidence, partial=partial)


def outcome(expected: str, read: FieldText | NotRead) -> ReadOutcome:
    return compare_typed(expected, read).outcome


# ----- the exact text --------------------------------------------------------------------


@pytest.mark.parametrize("read", [tree, ocr])
def test_the_exact_text_is_verified(read: type[FieldText]) -> None:
    check = compare_typed("José Núñez", read("José Núñez"))
    assert check.outcome is VERIFIED and check.verified
    assert check.read == "José Núñez" and check.expected == "José Núñez"


@pytest.mark.parametrize(
    "shown",
    [
        "  José   Núñez ",  # whitespace runs and ends
        "José\u00a0Núñez",  # a non-breaking space
        "Jose\u0301 Nu\u0301n\u0303ez",  # decomposed accents (NFD)
    ],
)
def test_whitespace_and_unicode_forms_do_not_count(shown: str) -> None:
    assert outcome("José Núñez", tree(shown)) is VERIFIED
    assert outcome("José Núñez", ocr(shown)) is VERIFIED
    assert normalise(shown) == "José Núñez"


def test_an_empty_field_is_verified_when_it_should_be_empty() -> None:
    assert outcome("", tree("")) is VERIFIED
    assert outcome("", ocr("", confidence=100.0)) is VERIFIED  # no ink at all


# ----- other text: DIFFERS ---------------------------------------------------------------


@pytest.mark.parametrize("read", [tree, ocr])
def test_a_doubled_value_differs(read: type[FieldText]) -> None:
    check = compare_typed("John Smith", read("John SmithJohn Smith"))
    assert check.outcome is DIFFERS
    assert "2 times" in check.reason


def test_a_doubled_value_misread_in_case_by_ocr_still_differs() -> None:
    check = compare_typed("John Smith", ocr("John Smithjohn Smith"))  # as measured on Tk
    assert check.outcome is DIFFERS and "2 times" in check.reason


@pytest.mark.parametrize("read", [tree, ocr])
def test_a_prefix_left_from_before_differs(read: type[FieldText]) -> None:
    check = compare_typed("John Smith", read("Mrs John Smith"))
    assert check.outcome is DIFFERS
    assert "before" in check.reason and "'Mrs '" in check.reason


@pytest.mark.parametrize("read", [tree, ocr])
def test_text_after_the_value_differs(read: type[FieldText]) -> None:
    check = compare_typed("1200", read("120000"))
    assert check.outcome is DIFFERS and "after" in check.reason


@pytest.mark.parametrize("read", [tree, ocr])
def test_a_cut_value_differs(read: type[FieldText]) -> None:
    check = compare_typed("Maximilian Richardson", read("Maximilian Rich"))
    assert check.outcome is DIFFERS
    assert "cut" in check.reason and "'ardson'" in check.reason


def test_one_dropped_character_differs_in_the_tree() -> None:
    check = compare_typed("John Smith", tree("Jon Smith"))
    assert check.outcome is DIFFERS
    assert "'Jon Smith'" in check.reason


def test_dropped_non_ascii_letters_differ_however_read() -> None:
    # pyautogui.write drops what it cannot type: "José Núñez" lands as "Jos Nez"; a Tk
    # entry given it through `xdotool type` showed "José Nez", which OCR read exactly.
    assert outcome("José Núñez", tree("Jos Nez")) is DIFFERS
    assert outcome("José Núñez", ocr("Jos Nez")) is DIFFERS  # 3 off: beyond OCR's noise
    assert outcome("José Núñez", ocr("José Nez")) is DIFFERS


def test_another_value_differs() -> None:
    assert outcome("John Smith", tree("Mary Watson")) is DIFFERS
    assert outcome("John Smith", ocr("Mary Watson")) is DIFFERS


def test_an_empty_field_differs_from_a_value() -> None:
    assert compare_typed("John Smith", tree("")).reason == "the field is empty"
    assert outcome("John Smith", tree("")) is DIFFERS
    assert outcome("John Smith", ocr("", confidence=100.0)) is DIFFERS  # no ink at all


def test_text_where_there_should_be_none_differs() -> None:
    check = compare_typed("", tree("stale"))
    assert check.outcome is DIFFERS and "should be empty" in check.reason
    assert outcome("", ocr("stale")) is DIFFERS


# ----- reads that cannot tell: UNREADABLE ------------------------------------------------


def test_nothing_read_is_unreadable_with_its_reason() -> None:
    check = compare_typed("John Smith", NotRead("accessibility", "no accessible app"))
    assert check.outcome is UNREADABLE and check.reason == "no accessible app"
    assert check.read == "" and not check.verified


def test_ocr_that_found_no_word_in_ink_is_unreadable() -> None:
    assert outcome("John Smith", ocr("", confidence=None)) is UNREADABLE


@pytest.mark.parametrize(
    "shown",
    [
        "Jose Nunez",  # accents lost (Qt, measured)
        "José Nufiez",  # ñ as "fi" (Chromium, measured)
        "José Nufhez",  # ñ as "fh" (GTK, measured)
        "JOSÉ NÚÑEZ",  # case
    ],
)
def test_ocr_that_cannot_tell_accents_or_case_is_unreadable(shown: str) -> None:
    check = compare_typed("José Núñez", ocr(shown))
    assert check.outcome is UNREADABLE, check.reason


@pytest.mark.parametrize("shown", ["Muller GmbH", "Miiller GmbH"])  # Tk and Qt, measured
def test_an_umlaut_misread_is_unreadable(shown: str) -> None:
    assert outcome("Müller GmbH", ocr(shown)) is UNREADABLE


def test_ocr_noise_is_unreadable_and_more_than_noise_differs() -> None:
    assert ocr_noise("John Smith") == 1
    assert outcome("John Smith", ocr("Jahn Smith")) is UNREADABLE  # one letter misread
    assert outcome("John Smith", ocr("Jon Smith")) is UNREADABLE  # one letter lost, or not
    assert outcome("John Smith", ocr("Jahn Smoth")) is DIFFERS  # two: beyond the noise
    assert ocr_noise("kevin.oconnor@example.org") == 3
    assert outcome("kevin.oconnor@example.org", ocr("kevin.oconnor@example.ord")) is UNREADABLE
    assert outcome("l1I0O", ocr("111|00")) is DIFFERS  # many confusions in five letters


def test_unsure_ocr_is_unreadable_unless_exact() -> None:
    assert outcome("2024-03-15", ocr("2024-03-15", confidence=15.0)) is VERIFIED
    check = compare_typed("2024-03-15", ocr("Paes", confidence=33.0))
    assert check.outcome is UNREADABLE and "unsure" in check.reason


def test_a_field_showing_only_part_of_a_long_value_is_unreadable() -> None:
    long = "Maximilian Richardson-Smythe 1200"
    assert outcome(long, ocr("chardson-Smythe 1200", partial=True)) is UNREADABLE
    # Exact, but a field that fills its width may hold more than it shows (a stale
    # prefix scrolled out of view).
    assert outcome("Richardson-Smythe", ocr("Richardson-Smythe", partial=True)) is UNREADABLE
    # What does show is not in the value at all.
    assert outcome(long, ocr("Wallaby Way, Sydney 2000", partial=True)) is DIFFERS


def test_a_read_cut_at_the_length_bound_is_unreadable() -> None:
    assert outcome("a" * 100_000, tree("a" * 65536, partial=True)) is UNREADABLE
    assert outcome("b" * 100_000, tree("a" * 65536, partial=True)) is DIFFERS


def test_a_password_field_is_unreadable() -> None:
    assert outcome("s3cret", tree("●●●●●●", role="password text")) is UNREADABLE


def test_long_reads_are_judged_in_bounded_time() -> None:
    start = time.monotonic()
    assert outcome("x" * 5000, ocr("x" * 4999 + "y")) is DIFFERS
    assert outcome("x" * 5000, ocr("y" * 3000, partial=True)) is UNREADABLE
    assert time.monotonic() - start < 0.5


# ----- the distances ---------------------------------------------------------------------


def test_ocr_and_substring_distances() -> None:
    assert ocr_distance("kitten", "sitting") == 3
    assert ocr_distance("", "abc") == 3
    assert ocr_distance("Müller", "MULLER") == 0  # accents and case are free
    assert ocr_distance("Müller", "Miiller") == 1  # an accented letter read as two
    assert ocr_distance("Muller", "Miiller") == 2  # a plain one read as two: two edits
    assert ocr_distance("José Núñez", "Jos Nez") == 3  # dropped letters are never free
    assert substring_distance("hardson", "Richardson-Smythe") == 0
    assert substring_distance("hardsan", "Richardson-Smythe") == 1
    assert substring_distance("xyz", "Richardson") == 3


def test_a_border_read_as_a_glyph_is_no_text() -> None:
    """A Swing field's box reached its label and left border: recorded "City \\Paris",
    read at replay "City |Paris|" (4 of 24 replays diverged on it). Border glyphs at a
    word's edge are free, read as each other or not read at all; inside a word, or
    letters, they count."""
    assert ocr_distance("City \\Paris", "City |Paris|") == 0
    assert outcome("City \\Paris", ocr("City |Paris|")) is UNREADABLE  # not verified either
    assert ocr_distance("Paris", "[Paris]") == 0
    assert ocr_distance("Ab|c", "Abc") == 1  # inside a word: a character
    assert ocr_distance("Bill", "Bil") == 1  # a letter is never a border
    assert outcome("Ada", ocr("|Ada Ada|")) is DIFFERS  # a doubled value still differs


def test_a_spreadsheet_cell_s_gridlines_are_no_text() -> None:
    """Calc's cell, read by OCR: "Anna. __" when recorded (the gridlines after the
    value), "Hannah]" at replay with another value, a false divergence before. Not
    verified, never a pass; the value doubled, cut or another still differs."""
    assert outcome("Hannah. __", ocr("Hannah]")) is UNREADABLE
    assert outcome("Hannah. __", ocr("Hannah. __")) is VERIFIED
    assert outcome("Hannah. __", ocr("HannahHannah]")) is DIFFERS
    assert outcome("Hannah. __", ocr("Hann]")) is DIFFERS
    assert outcome("Hannah. __", ocr("Anna]")) is DIFFERS
    assert ocr_distance("5.00", "500") == 1  # a point inside a word is a character


def test_a_field_placed_from_its_window_s_corner_is_put_where_it_stands() -> None:
    """GTK 4 on X11 gives extents from its window's corner (`reader.on_screen`)."""
    from mmcli.readback.reader import on_screen
    from mmcli.screen.fingerprint import Rect

    window = Rect(761, 452, 400, 230)
    assert on_screen(Rect(99, 51, 262, 32), window) == Rect(860, 503, 262, 32)
    assert on_screen(Rect(860, 503, 262, 32), window) == Rect(860, 503, 262, 32)  # on screen
    assert on_screen(Rect(5, 5, 900, 30), window) == Rect(5, 5, 900, 30)  # fits no way
    assert on_screen(Rect(99, 51, 262, 32), None) == Rect(99, 51, 262, 32)
    assert on_screen(None, window) is None
