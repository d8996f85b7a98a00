"""A field typed into whose end another window covers (a notification's corner over a
wide field): the read is cut where the window begins, so what covers it reads neither as
text running to the field's edge nor as ink a caret is measured against."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from mmcli.readback.field import FieldText, ReadOutcome, compare_typed
from mmcli.readback.reader import read_pixels, uncovered
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.under import SeenUnder
from mmcli.screen.windows import StackedWindow, WindowRef, over_the_keyboard
from tests.desktop import need

FIXTURES = Path(__file__).parent.parent / "fixtures"
CROP_AT = (451, 66)
"""Where the fixture's crop stood: GIMP's export name field (dark theme, Xfce), grown
by the reader's margin, with a notification's bottom-left corner over its right end."""
FIELD = Rect(453, 68, 811, 20)
NOTIFICATION = Rect(948, 13, 319, 55)


def screen_with_the_field() -> Frame:
    crop = np.asarray(Image.open(FIXTURES / "gimp-export-name-notified.png").convert("L"))
    screen = np.full((800, 1280, 3), 60, np.uint8)
    x, y = CROP_AT
    screen[y : y + crop.shape[0], x : x + crop.shape[1]] = crop[..., None]
    return Frame.from_image(Image.fromarray(screen))


def test_a_field_whose_end_a_notification_covers_is_read_up_to_it() -> None:
    need("tesseract")
    frame = screen_with_the_field()
    whole = compare_typed("Ada.png", read_pixels(frame, FIELD))
    assert whole.outcome is ReadOutcome.UNREADABLE  # read "Adalpng", to the field's edge
    cut = read_pixels(frame, FIELD, [NOTIFICATION])
    assert compare_typed("Ada.png", cut).outcome is ReadOutcome.VERIFIED, cut
    assert cut.rect is not None and cut.rect.right == NOTIFICATION.x


def test_a_window_is_cut_off_at_the_end_it_covers_and_nowhere_else() -> None:
    box = Rect(100, 50, 400, 20)
    assert uncovered(box, [Rect(420, 0, 200, 60)]) == Rect(100, 50, 320, 20)
    assert uncovered(box, [Rect(0, 40, 130, 20)]) == Rect(130, 50, 370, 20)
    assert uncovered(box, [Rect(200, 40, 50, 40)]) == box  # the middle
    assert uncovered(box, [Rect(420, 200, 200, 60)]) == box  # not over it
    assert uncovered(box, [Rect(0, 0, 900, 900)]) == box  # all of it


def test_text_that_runs_under_the_window_still_reads_as_cut_short() -> None:
    need("tesseract")
    frame = screen_with_the_field()
    under = Rect(475, 0, 900, 80)  # from "Ada.png"'s second letter on, to past the end
    read = read_pixels(frame, FIELD, [under])
    assert compare_typed("Ada.png", read).outcome is not ReadOutcome.VERIFIED, read


def window(x: int, focused: bool = False) -> StackedWindow:
    frame = Rect(x, 0, 100, 100)
    return StackedWindow(WindowRef("app", frame), frame, focused=focused)


def test_only_windows_above_the_one_with_the_keyboard_cover_its_field() -> None:
    below, keyboard, above = window(0), window(10, True), window(200)
    assert over_the_keyboard([below, keyboard, above]) == [above.frame]
    assert over_the_keyboard([below, above]) == []  # nobody has the keyboard


def test_a_window_over_the_margin_around_the_field_cuts_it_too() -> None:
    """The field is read with a margin of its ground around it: a window whose edge
    stands in that margin (a notification's bottom 2 px over GIMP's field, its box
    recorded inside its border) is cut off as well."""
    need("tesseract")
    frame = screen_with_the_field()
    touching = Rect(NOTIFICATION.x, NOTIFICATION.y, NOTIFICATION.w, FIELD.y - NOTIFICATION.y)
    assert not touching.intersects(FIELD)
    read = read_pixels(frame, FIELD, [touching])
    assert compare_typed("Ada.png", read).outcome is ReadOutcome.VERIFIED, read


def test_a_window_over_the_middle_of_a_field_makes_other_text_not_the_field_s() -> None:
    """Another app's window over the middle of the field, its own words drawn there (a
    tooltip over Wine's notepad): OCR reads them with the field's text. They are that
    window's, not the field's: the read is marked `hidden`, and text that differs is not
    verified, never a divergence (replay refused a right run on "| hostile tooltip |")."""
    need("tesseract")
    frame = screen_with_the_field()
    tip = Rect(640, 64, 260, 28)
    image = Image.frombuffer("RGB", (frame.width, frame.height), frame.raw, "raw", "BGRX", 0, 1)
    image = image.copy()
    draw = ImageDraw.Draw(image)
    draw.rectangle([tip.x, tip.y, tip.right - 1, tip.bottom - 1], fill="white")
    draw.text((tip.x + 8, tip.y + 4), "hostile tooltip", fill="black", font=_font(18))
    frame = Frame.from_image(image)
    plain = compare_typed("Ada.png", read_pixels(frame, FIELD))
    assert plain.outcome is ReadOutcome.DIFFERS, plain  # the tooltip's words read as the field's
    read = read_pixels(frame, FIELD, [tip])
    assert isinstance(read, FieldText) and read.hidden
    check = compare_typed("Ada.png", read)
    assert check.outcome is ReadOutcome.UNREADABLE, check
    assert check.reason.startswith("another window covers part of the field")


def _tooltip_over(frame: Frame, tip: Rect) -> Frame:
    image = Image.frombuffer("RGB", (frame.width, frame.height), frame.raw, "raw", "BGRX", 0, 1)
    image = image.copy()
    draw = ImageDraw.Draw(image)
    draw.rectangle([tip.x, tip.y, tip.right - 1, tip.bottom - 1], fill="white")
    draw.text((tip.x + 8, tip.y + 4), "hostile tooltip", fill="black", font=_font(18))
    return Frame.from_image(image)


PLAIN_FIELD = Rect(100, 100, 420, 26)


def plain_field(text: str) -> Frame:
    """A white field on a grey window with `text` at its left."""
    image = Image.new("RGB", (800, 400), (214, 214, 214))
    draw = ImageDraw.Draw(image)
    f = PLAIN_FIELD
    draw.rectangle([f.x, f.y, f.right - 1, f.bottom - 1], fill="white", outline=(120, 120, 120))
    draw.text((f.x + 6, f.y + 4), text, fill="black", font=_font(15))
    return Frame.from_image(image)


def test_a_field_under_a_window_is_read_whole_from_the_app_s_own_pixels() -> None:
    """Where a compositing manager keeps each window's pixels whole, the field under a
    tooltip is read from the app's own (`under`): all of it, verified (it was "not
    verified": another window covers part of the field)."""
    need("tesseract")
    field = plain_field("Ada Lovelace")
    tip = Rect(300, 96, 200, 30)
    asked: list[list[Rect]] = []

    def kept(frame: Frame, places: Sequence[Rect]) -> SeenUnder:
        asked.append(list(places))
        return SeenUnder(field, ())

    covered = _tooltip_over(field, tip)
    assert compare_typed("Ada Lovelace", read_pixels(covered, PLAIN_FIELD, [tip])).outcome is (
        ReadOutcome.UNREADABLE
    )
    elsewhere = Rect(0, 300, 200, 60)
    read = read_pixels(covered, PLAIN_FIELD, [tip, elsewhere], kept)
    assert asked == [[tip]]  # only the window over the field
    assert isinstance(read, FieldText) and read.under and not read.hidden
    check = compare_typed("Ada Lovelace", read)
    assert check.outcome is ReadOutcome.VERIFIED, read
    assert check.reason.endswith("(under another window, in the app's own pixels)")
    # Under it, a value typed twice is the field's own text: a divergence.
    twice = plain_field("Ada LovelaceAda Lovelace")
    read = read_pixels(
        _tooltip_over(twice, tip), PLAIN_FIELD, [tip], lambda f, p: SeenUnder(twice, ())
    )
    assert compare_typed("Ada Lovelace", read).outcome is ReadOutcome.DIFFERS, read


def test_a_field_under_a_window_is_not_read_there_where_pixels_are_not_kept() -> None:
    """Nothing kept (no compositing manager), or a place under the window no window's
    pixels reach: the read is marked `hidden` as before, never the cover's text taken
    for the field's."""
    need("tesseract")
    tip = Rect(300, 96, 200, 30)
    frame = _tooltip_over(plain_field("Ada Lovelace"), tip)
    for kept in (lambda f, p: None, lambda f, p: SeenUnder(f, (Rect(350, 100, 10, 10),))):
        read = read_pixels(frame, PLAIN_FIELD, [tip], kept)
        assert isinstance(read, FieldText) and read.hidden and not read.under
        assert compare_typed("Ada Lovelace", read).outcome is ReadOutcome.UNREADABLE


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default()
