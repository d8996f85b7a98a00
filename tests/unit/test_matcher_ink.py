"""The caret rule's parts on plain screens, where each figure can be worked out by hand:
the luma it reads, the columns it finds ink in, and the bounds of a caret
(`caret_blink`: how thin, how tall, how faint a neighbour may be)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from mmcli.screen.analysis import PIXEL_THRESHOLD, changed_regions
from mmcli.screen.carets import _luma_around, caret_blink, ink_columns
from mmcli.screen.fingerprint import Frame, Rect

SIZE = (400, 300)


def screen(*bars: tuple[int, int, int, int], gray: tuple[int, int, int] | None = None) -> Frame:
    """A white screen with black bars (x, y, w, h) and one gray pixel (x, y, level)."""
    image = Image.new("RGB", SIZE, "white")
    d = ImageDraw.Draw(image)
    for x, y, w, h in bars:
        d.rectangle([x, y, x + w - 1, y + h - 1], fill="black")
    if gray is not None:
        image.putpixel(gray[:2], (gray[2],) * 3)
    return Frame.from_image(image)


def blink(recorded: Frame, live: Frame) -> bool:
    """`caret_blink` on the one region that changed, as the `regions` matcher calls it."""
    regions = changed_regions(recorded.small, live.small, PIXEL_THRESHOLD)
    assert len(regions) == 1, regions
    return caret_blink(live, live.small, regions[0], recorded.small)


# ---- luma and ink ------------------------------------------------------------------------


def test_luma_weighs_green_twice() -> None:
    image = Image.new("RGB", SIZE, "white")
    image.putpixel((10, 10), (200, 100, 40))
    luma, x0, y0 = _luma_around(Frame.from_image(image), Rect(10, 10, 1, 1), 0) or (None, 0, 0)
    assert luma is not None and (x0, y0) == (10, 10)
    assert luma.tolist() == [[(40 + 2 * 100 + 200) // 4]]


def test_the_luma_around_a_region_is_clipped_to_the_screen() -> None:
    frame = screen()
    luma, x0, y0 = _luma_around(frame, Rect(2, 3, 4, 4), 6) or (np.empty(0), -1, -1)
    assert (x0, y0, luma.shape) == (0, 0, (13, 12))
    luma, x0, y0 = _luma_around(frame, Rect(392, 292, 4, 4), 6) or (np.empty(0), -1, -1)
    assert (x0, y0, luma.shape) == (386, 286, (14, 14))


@pytest.mark.parametrize("region", [Rect(406, 10, 4, 4), Rect(10, 306, 4, 4)])
def test_a_region_wholly_off_the_screen_has_no_luma(region: Rect) -> None:
    assert _luma_around(screen(), region, 6) is None
    assert ink_columns(screen(), region) is None
    assert _luma_around(screen(), Rect(region.x - 7, region.y - 7, 4, 4), 6) is not None


def test_ink_is_found_in_the_screens_first_column_and_row() -> None:
    bar = screen((0, 10, 1, 20))
    assert ink_columns(bar, Rect(0, 10, 4, 20)).tolist() == [True, False, False, False]
    dot = screen((11, 0, 1, 1))
    assert ink_columns(dot, Rect(10, 0, 4, 12)).tolist() == [False, True, False, False]


def test_ink_is_told_from_each_rows_background_not_each_columns() -> None:
    """A bar as tall as the region is most of its column: still ink against its rows."""
    bar = screen((20, 0, 1, 300))
    assert ink_columns(bar, Rect(18, 100, 4, 30)).tolist() == [False, False, True, False]


# ---- caret_blink -------------------------------------------------------------------------


@pytest.mark.parametrize(("width", "caret"), [(1, True), (3, True), (4, False), (6, False)])
def test_a_caret_is_at_most_three_pixels_wide(width: int, caret: bool) -> None:
    assert blink(screen(), screen((244, 180, width, 12))) is caret


@pytest.mark.parametrize(("height", "caret"), [(7, False), (8, True), (16, True)])
def test_a_caret_is_at_least_eight_pixels_tall(height: int, caret: bool) -> None:
    assert blink(screen(), screen((244, 180, 2, height))) is caret


def test_a_thin_caret_in_its_off_phase_on_an_empty_screen_is_a_caret() -> None:
    """Nothing on the live screen to measure ink against: the contrast is taken as at
    least twice `CARET_INK`, so a 1 px caret still reads as caret-thin."""
    assert blink(screen((244, 180, 1, 12)), screen())


@pytest.mark.parametrize(("level", "caret"), [(158, True), (140, False)])
def test_a_faint_pixel_beside_the_bar_counts_once_it_moves_half_the_threshold(
    level: int, caret: bool
) -> None:
    """Gray 158 moves its downscaled pixel by 6 levels (half `PIXEL_THRESHOLD`, not more):
    not part of the change. Gray 140 moves it by 7: the change then spans three downscaled
    columns with the bar (which straddles two), wider than a caret."""
    bar = (247, 180, 2, 12)
    assert blink(screen(), screen(bar, gray=(241, 185, level))) is caret


def test_no_change_or_a_region_off_the_screen_is_not_a_caret() -> None:
    live = screen((244, 180, 1, 12))
    assert not caret_blink(live, live.small, Rect(244, 180, 4, 12), live.small)
    assert not caret_blink(live, live.small, Rect(500, 180, 4, 12), screen().small)
