"""A clock reading the time now is let differ (`replay/clocks.py`), over its own glyphs
only: not a gauge beside it, not a time that is not now, not a typed field."""

from __future__ import annotations

from datetime import datetime

from PIL import Image, ImageDraw, ImageFont

from mmcli.replay.clocks import Clocks, reads_as, times_now
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Difference
from tests.desktop import need

NOW = datetime(2026, 12, 1, 15, 31, 40)


def test_a_time_reads_as_now_on_either_kind_of_clock() -> None:
    assert reads_as(NOW, 3, 31, None, "P")
    assert reads_as(NOW, 15, 31, None, None)
    assert reads_as(NOW, 3, 31, None, None)  # a 12-hour clock without its half
    assert reads_as(NOW, 15, 30, None, None)  # drawn a moment before the minute turned
    assert reads_as(NOW, 15, 31, 39, None)
    assert not reads_as(NOW, 3, 31, None, "A")
    assert not reads_as(NOW, 15, 34, None, None)
    assert not reads_as(NOW, 15, 29, None, None)
    assert not reads_as(NOW, 15, 31, 5, None)  # its seconds are not now
    assert not reads_as(NOW, 25, 31, None, None)
    assert not reads_as(NOW, 15, 61, None, None)


def test_a_clock_is_read_across_midnight() -> None:
    late = datetime(2026, 12, 1, 0, 0, 20)
    assert reads_as(late, 23, 59, None, None)
    assert reads_as(late, 12, 0, None, "A")


def test_the_words_of_a_time_are_found_with_their_half() -> None:
    words = [
        ("197/388MB", Rect(0, 0, 60, 10)),
        ("3:31", Rect(70, 0, 25, 10)),
        ("PM)", Rect(100, 0, 20, 10)),
        ("10:15", Rect(140, 0, 30, 10)),
    ]
    assert times_now(words, NOW) == [Rect(70, 0, 50, 10)]
    assert times_now([("15:31:40", Rect(0, 0, 50, 10))], NOW) == [Rect(0, 0, 50, 10)]
    assert times_now([("3:31PM", Rect(0, 0, 50, 10))], NOW) == [Rect(0, 0, 50, 10)]
    assert times_now([("3:31AM", Rect(0, 0, 50, 10))], NOW) == []


def status_bar(gauge: str, clock: str) -> Frame:
    """A window's status bar with a gauge and a clock at its right end, as jEdit's."""
    image = Image.new("RGB", (800, 300), (238, 238, 238))
    draw = ImageDraw.Draw(image)
    font = _font(13)
    draw.text((20, 254), "(text,none,UTF-8)", fill="black", font=font)
    draw.text((560, 254), gauge, fill="black", font=font)
    draw.text((680, 254), clock, fill="black", font=font)
    return Frame.from_image(image)


def differences(*regions: Rect) -> list[Difference]:
    return [Difference("regions", r, "changed region (px)", r.w * r.h, 0) for r in regions]


CLOCK_DIGITS = Rect(700, 256, 12, 12)
GAUGE_DIGITS = Rect(572, 256, 12, 12)


def test_only_the_clock_reading_now_is_let_differ() -> None:
    need("tesseract")
    frame = status_bar("197/388MB", "3:31 PM")
    found = Clocks(now=lambda: NOW).at(frame, differences(CLOCK_DIGITS, GAUGE_DIGITS), [])
    assert len(found) == 1 and CLOCK_DIGITS.inside(found[0]), found
    assert not found[0].intersects(GAUGE_DIGITS)
    later = datetime(2026, 12, 1, 15, 34, 0)
    assert Clocks(now=lambda: later).at(frame, differences(CLOCK_DIGITS), []) == []


def test_no_clock_is_read_on_a_typed_field_or_the_target_or_beside_a_big_change() -> None:
    """Where anything but a few glyphs differs (a moved window, a dialog), the check
    fails whatever a clock reads: nothing is read (a replay's look stays cheap)."""
    need("tesseract")
    frame = status_bar("197/388MB", "3:31 PM")
    clocks = Clocks(now=lambda: NOW)
    assert clocks.at(frame, differences(CLOCK_DIGITS), [Rect(660, 250, 100, 20)]) == []
    assert clocks.at(frame, differences(Rect(560, 240, 200, 40)), []) == []
    assert clocks.at(frame, differences(CLOCK_DIGITS, Rect(100, 40, 300, 200)), []) == []


def test_a_clock_at_a_window_s_edge_is_read_within_the_window() -> None:
    """The desktop past the window's edge is not read with the line ("4:12 AM" beside a
    black desktop read "ai2am")."""
    need("tesseract")
    image = Image.new("RGB", (800, 300), (0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, 659, 299], fill=(217, 217, 217))
    draw.text((590, 254), "3:31 PM", fill="black", font=_font(13))
    window = Rect(0, 0, 660, 300)
    digits = Rect(612, 256, 12, 12)
    found = Clocks([window], now=lambda: NOW).at(Frame.from_image(image), differences(digits), [])
    assert len(found) == 1 and digits.inside(found[0]), found


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default()
