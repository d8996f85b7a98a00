"""Fingerprint helpers on synthetic downscaled screens."""

from __future__ import annotations

import numpy as np

from mmcli.fingerprint import SCALE, Rect, changed_regions, grow_to_text_run


def _screen() -> np.ndarray:
    small = np.full((60, 100), 200, np.uint8)
    small[20:26, 30:50] = 0  # a line of text: rows 20-25, columns 30-49
    small[40:46, 30:50] = 0  # another line well below it
    return small


def test_a_change_in_part_of_a_text_line_grows_to_the_whole_line() -> None:
    grown = grow_to_text_run(_screen(), Rect(45 * SCALE, 22 * SCALE, SCALE, 2 * SCALE))
    assert grown == Rect(30 * SCALE, 20 * SCALE, 20 * SCALE, 6 * SCALE)


def test_growth_stops_at_the_empty_rows_between_lines() -> None:
    grown = grow_to_text_run(_screen(), Rect(45 * SCALE, 24 * SCALE, SCALE, SCALE))
    assert grown.bottom <= 26 * SCALE and grown.y >= 20 * SCALE


def test_a_clock_digit_changing_only_some_rows_masks_every_row_of_the_clock() -> None:
    """5 -> 6 touches fewer rows than 9 -> 0: the mask learned from the first must cover
    the second."""
    before, after = _screen(), _screen()
    after[21:23, 46:48] = 200  # the digit's top rows changed
    learned = grow_to_text_run(after, changed_regions(before, after)[0])
    later = _screen()
    later[24:26, 46:48] = 200  # another tick changes its bottom rows
    for region in changed_regions(_screen(), later):
        assert learned.x <= region.x and region.right <= learned.right
        assert learned.y <= region.y and region.bottom <= learned.bottom
