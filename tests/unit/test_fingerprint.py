"""Fingerprint helpers on synthetic downscaled screens."""

from __future__ import annotations

import numpy as np

from mmcli.screen.analysis import WINDOW_MIN, changed_regions, grow_to_text_run, window_changed_at
from mmcli.screen.fingerprint import SCALE, Rect


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


def _desktop() -> np.ndarray:
    """A coloured wallpaper (luma 90) with a dialog (light grey, a dark 1-px border) whose
    row also holds, far to its left, other desktop content."""
    small = np.full((80, 300), 90, np.uint8)
    small[10:60, 100:220] = 215  # the dialog
    small[10:60, 100] = small[10:60, 219] = 40  # its left and right edges
    small[30:36, 110:150] = 255  # a white field inside it
    small[31:35, 10:60] = 20  # icons / text on the wallpaper, same row
    return small


def test_growth_takes_the_background_from_the_widget_not_the_screen_row() -> None:
    """On a coloured desktop the row's median is the wallpaper: every widget on the row
    would read as content and a change in a field would grow into a mask over the whole
    row, the dialog and the desktop beside it."""
    small = _desktop()
    small[31:35, 112:114] = 0  # a glyph in the field
    grown = grow_to_text_run(small, Rect(112 * SCALE, 31 * SCALE, 2 * SCALE, 4 * SCALE))
    assert grown.x >= 110 * SCALE and grown.right <= 150 * SCALE  # the field at most


def test_growth_stops_at_a_widget_edge() -> None:
    small = _desktop()
    small[40:44, 104:118] = 0  # text touching the dialog's left edge
    grown = grow_to_text_run(small, Rect(110 * SCALE, 41 * SCALE, SCALE, 2 * SCALE))
    assert grown.x >= 101 * SCALE


def test_growth_is_bounded() -> None:
    small = np.full((20, 400), 200, np.uint8)
    small[5:10, :] = 0
    small[5:10, ::2] = 200  # a very long run of content on a flat background
    grown = grow_to_text_run(small, Rect(200 * SCALE, 5 * SCALE, SCALE, 5 * SCALE))
    assert grown.w <= (2 * 48 + 2) * SCALE


def test_a_clock_at_a_window_edge_grows_to_the_whole_clock() -> None:
    """Beside the window, the root window is black: a median over the wider band would
    fall between the two and make every column of the window a wall."""
    small = np.full((60, 100), 217, np.uint8)
    small[:, 62:] = 0  # the root window, right of the window's edge
    small[20:23, 40:60] = 150  # "12:34:56"
    small[20:23, 44:60:4] = 217  # with the gaps between its glyphs
    small[20:23, 60:62] = 217
    grown = grow_to_text_run(small, Rect(56 * SCALE, 20 * SCALE, 2 * SCALE, 2 * SCALE))
    assert grown.x <= 40 * SCALE and grown.right == 60 * SCALE


def test_a_change_too_faint_when_downscaled_is_still_seen_at_full_resolution() -> None:
    """One stroke of a small glyph (a clock digit 7 -> 8) may move a downscaled pixel by
    less than the threshold: learning what changes alone must still see it."""
    from mmcli.screen.analysis import changed_regions_fine
    from mmcli.screen.fingerprint import Frame

    pixels = np.full((64, 96, 4), 200, np.uint8)
    before = Frame(pixels.tobytes(), 96, 64)
    pixels[41, 50, :3] = 40  # one dark pixel: 160 / 16 = 10 luma levels once downscaled
    after = Frame(pixels.tobytes(), 96, 64)
    assert changed_regions(before.small, after.small) == []
    (region,) = changed_regions_fine(before, after)
    assert region.x <= 50 < region.right and region.y <= 41 < region.bottom
    assert changed_regions_fine(before, Frame(before.raw, 96, 64)) == []


def test_a_mask_wholly_off_the_screen_blanks_nothing() -> None:
    """`--ignore-region -100,-100,50,50`: a slice stop below zero would count from the far
    end and blank almost the whole screen."""
    import numpy as np

    from mmcli.screen.analysis import blank, small_slice

    small = np.full((270, 480), 200, np.uint8)
    for off in (Rect(-100, -100, 50, 50), Rect(100, -60, 50, 50), Rect(-60, 100, 50, 50),
                Rect(2000, 100, 50, 50), Rect(100, 1200, 50, 50)):  # fmt: skip
        assert (blank(small, [off]) == 200).all(), off
        ys, xs = small_slice(off, small.shape)
        assert small[ys, xs].size == 0, off
    across = blank(small, [Rect(-8, -8, 16, 12)])  # across the corner: the part on screen
    assert int((across == 0).sum()) == 2 * 1
    assert (across[:1, :2] == 0).all()


def test_within_grid_keeps_only_whole_cells() -> None:
    from mmcli.screen.fingerprint import Rect

    workarea = Rect(0, 0, 1280, 770)  # a 30 px panel at the bottom of 800
    assert workarea.within_grid(4) == Rect(0, 0, 1280, 768)
    assert Rect(3, 5, 10, 10).within_grid(4) == Rect(4, 8, 8, 4)
    assert Rect(1, 1, 2, 2).within_grid(4) is None


def test_around_grid_takes_every_cell_touched() -> None:
    from mmcli.screen.fingerprint import Rect

    assert Rect(3, 5, 10, 10).around_grid(4) == Rect(0, 4, 16, 12)
    assert Rect(4, 8, 8, 4).around_grid(4) == Rect(4, 8, 8, 4)


def _with_box(x: int, y: int, w: int, h: int) -> np.ndarray:
    small = np.full((270, 480), 200, np.uint8)  # a 1920x1080 screen, downscaled
    small[y // SCALE : (y + h) // SCALE, x // SCALE : (x + w) // SCALE] = 90
    return small


def test_a_window_sized_change_under_the_point_is_a_window_that_opened_or_closed() -> None:
    ground = _with_box(0, 0, 0, 0)
    w, h = WINDOW_MIN
    assert window_changed_at(_with_box(400, 300, 320, 132), ground, (500, 350))  # a dialog
    assert window_changed_at(ground, _with_box(400, 300, w, h), (400 + w - 4, 300 + h - 4))
    assert not window_changed_at(ground, _with_box(400, 300, 320, 132), (380, 350))  # beside
    assert not window_changed_at(ground, _with_box(400, 300, 300, 20), (500, 310))  # a row
    assert not window_changed_at(ground, _with_box(400, 300, w - 8, 96), (420, 320))  # an icon
    assert not window_changed_at(ground, _with_box(400, 300, 200, h - 8), (420, 320))
    assert not window_changed_at(ground, ground, (500, 350))


def test_changes_found_within_a_rectangle_join_nothing_outside_it() -> None:
    """A taskbar button that changed along the top of the screen, touching a title bar
    that changed below it: within the work area, only the title bar's change is found,
    not one box from the button's left edge."""
    before = np.full((60, 100), 120, np.uint8)
    after = before.copy()
    after[0:7, 10:40] = 30  # the taskbar button (rows 0-6: the panel)
    after[7:12, 30:90] = 30  # the title bar just under it
    assert changed_regions(before, after) == [Rect(10 * SCALE, 0, 80 * SCALE, 12 * SCALE)]
    work = Rect(0, 7 * SCALE, 100 * SCALE, 53 * SCALE)
    inside = changed_regions(before, after, within=work)
    assert inside == [Rect(30 * SCALE, 7 * SCALE, 60 * SCALE, 5 * SCALE)]
    # screens of two sizes: all of the rectangle on the screen
    assert changed_regions(before, after[:30], within=work) == [Rect(0, 28, 400, 92)]
