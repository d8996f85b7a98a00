"""The fingerprint's value objects and small measures, at their edges: rectangles, the
share of an area masks cover, grids and patches read back from their text, the bounding
box of a change, merging, and finding a template."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from mmcli.screen.analysis import (
    changed_region,
    covered_share,
    find_template,
    grid_of,
    merge_rects,
    patch_of,
)
from mmcli.screen.fingerprint import SCALE, Frame, Grid, Patch, Rect, same_picture, tile_rect


def test_rectangles_that_only_touch_do_not_intersect() -> None:
    r = Rect(10, 20, 30, 40)
    assert (r.right, r.bottom) == (40, 60)
    assert r.intersects(Rect(39, 59, 5, 5))
    for touching in (Rect(40, 20, 5, 5), Rect(5, 20, 5, 5), Rect(10, 60, 5, 5), Rect(10, 15, 5, 5)):
        assert not r.intersects(touching) and not touching.intersects(r), touching
        assert r.intersection(touching) is None
    assert r.intersection(Rect(30, 50, 50, 50)) == Rect(30, 50, 10, 10)
    assert r.union(Rect(0, 70, 5, 5)) == Rect(0, 20, 40, 55)
    assert r.grow(3) == Rect(7, 17, 36, 46)
    assert r.as_list() == [10, 20, 30, 40] and str(r) == "30x40 at (10, 20)"


@pytest.mark.parametrize(
    "text", ["1,2,3", "1,2,0,4", "1,2,4,0", "1,2,-3,4", "1,2,3,-4", "a,b,c,d", "1,2,3,4,5"]
)
def test_a_bad_region_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Rect.parse(text)


def test_a_region_reads_as_x_y_w_h() -> None:
    assert Rect.parse("-5,6,7,8") == Rect(-5, 6, 7, 8)
    assert Rect.parse("1,2,7x8") == Rect(1, 2, 7, 8)
    assert Rect.parse("0,0,1,1") == Rect(0, 0, 1, 1)


def test_covered_share_counts_overlaps_once() -> None:
    area = Rect(0, 0, 40, 40)
    assert covered_share([], area) == 0.0
    assert covered_share([Rect(0, 0, 20, 40)], area) == 0.5
    assert covered_share([Rect(0, 0, 20, 40), Rect(0, 0, 20, 40)], area) == 0.5
    assert covered_share([Rect(8, 8, 40, 40)], area) == 0.64  # clipped to the area
    assert covered_share([Rect(100, 100, 4, 4)], area) == 0.0
    assert covered_share([Rect(0, 0, 4, 4)], Rect(0, 0, 0, 8)) == 0.0
    assert covered_share([Rect(2, 2, 1, 1)], Rect(0, 0, 8, 8)) == 0.25  # whole cells
    assert covered_share([Rect(0, 0, 4, 4)], Rect(0, 0, 8, 0)) == 0.0
    assert covered_share([Rect(0, 0, 4, 4)], Rect(0, 0, 1, 1)) == 1.0
    away = Rect(100, 200, 40, 40)  # an area away from the origin
    assert covered_share([Rect(120, 200, 20, 40)], away) == 0.5
    assert covered_share([Rect(100, 220, 40, 20)], away) == 0.5
    assert covered_share([Rect(90, 190, 14, 14)], away) == 0.01


def test_grids_and_patches_read_back_from_their_text() -> None:
    img = Image.effect_noise((640, 360), 60)
    frame = Frame.from_image(img.convert("RGB"))
    grid = grid_of(frame.small)
    again = Grid.parse(grid.cols, grid.rows, str(grid), grid.tones_hex(), grid.details_hex())
    assert again == grid and (grid - again).bits == (0,) * (16 * 9)
    hashes, tones, details = str(grid), grid.tones_hex(), grid.details_hex()
    for bad in ((hashes[:-1], tones, details), (hashes, tones + "00", details),
                (hashes, tones, details[:-2])):  # fmt: skip
        with pytest.raises(ValueError, match="needs"):
            Grid.parse(grid.cols, grid.rows, *bad)
    with pytest.raises(ValueError, match="different shapes"):
        _ = grid - grid_of(frame.small, cols=8, rows=9)
    patch = patch_of(frame, 100, 100)
    assert Patch.parse(100, 100, str(patch)) == patch
    with pytest.raises(ValueError):
        Patch.parse(100, 100, str(patch) + "0")


def test_patch_distance_counts_cells_more_than_one_level_apart() -> None:
    base = Patch(0, 0, bytes([8] * 256))
    near = Patch(0, 0, bytes([9] * 10 + [8] * 246))
    far = Patch(0, 0, bytes([10] * 3 + [0] + [8] * 252))
    assert (base - near).cells == 0 and (base - near).max_delta == 1
    assert (base - far).cells == 4 and (base - far).max_delta == 8
    core = bytearray([8] * 256)
    core[4 * 16 + 4] = 0  # the first cell of the central half
    assert base.distance(Patch(0, 0, bytes(core)), core=True).cells == 1
    assert base.distance(far, core=True).cells == 0  # the corner is outside the core
    edge = bytearray([8] * 256)
    edge[3 * 16 + 3] = 0  # the last cell before the central half
    assert base.distance(Patch(0, 0, bytes(edge)), core=True).cells == 0
    assert (base - base).max_delta == 0 and (base - base).cells == 0
    assert str(base - far) == "4 cells differ (max 8/15)"


def test_a_patch_near_the_screen_edge_is_clamped_inside_it() -> None:
    img = Image.new("RGB", (200, 100), "white")
    img.paste((0, 0, 0), (0, 0, 4, 4))  # the top-left cell
    img.paste((0, 0, 0), (196, 96, 200, 100))  # the bottom-right cell
    frame = Frame.from_image(img)
    assert patch_of(frame, 0, 0).cells[0] == 0 and patch_of(frame, 0, 0).cells[1] == 15
    assert patch_of(frame, 199, 99).cells[-1] == 0 and patch_of(frame, 199, 99).cells[-2] == 15


def test_tiles_cover_the_screen_exactly() -> None:
    tiles = [tile_rect(i, 16, 9, 1000, 500) for i in range(16 * 9)]
    assert tiles[0] == Rect(0, 0, 62, 55)
    assert tiles[17] == Rect(62, 55, 63, 56)
    assert tiles[-1] == Rect(937, 444, 63, 56)
    assert sum(t.w * t.h for t in tiles) == 1000 * 500


def test_a_changed_region_is_the_box_of_pixels_past_the_threshold() -> None:
    a = np.full((30, 40), 100, np.uint8)
    b = a.copy()
    b[5, 7] = 112  # within the threshold
    assert changed_region(a, b) is None
    b[5, 7] = 113
    b[9, 20] = 87
    assert changed_region(a, b) == Rect(7 * SCALE, 5 * SCALE, 14 * SCALE, 5 * SCALE)
    assert changed_region(a, b[:, :-1]) == Rect(0, 0, 39 * SCALE, 30 * SCALE)
    fa = Frame.from_image(Image.new("RGB", (160, 120), (100, 100, 100)))
    assert same_picture(fa, Frame.from_image(Image.new("RGB", (160, 120), (112, 112, 112))))
    assert not same_picture(fa, Frame.from_image(Image.new("RGB", (160, 120), (113, 113, 113))))


def test_rectangles_near_each_other_merge_into_one() -> None:
    assert merge_rects([]) == []
    a, b, c = Rect(0, 0, 10, 10), Rect(17, 0, 10, 10), Rect(34, 0, 10, 10)
    # With a 4 px margin each side, a-b (7 px apart) merge, and then c (7 px from b).
    assert merge_rects([a, b, c]) == [Rect(-4, -4, 52, 18)]
    assert merge_rects([a, c]) == [Rect(-4, -4, 18, 18), Rect(30, -4, 18, 18)]
    assert merge_rects([a, Rect(18, 0, 10, 10)]) == [Rect(-4, -4, 18, 18), Rect(14, -4, 18, 18)]
    assert merge_rects([c, Rect(0, 40, 5, 5)], margin=0) == [c, Rect(0, 40, 5, 5)]


def test_a_template_is_found_where_it_is_drawn() -> None:
    rng = np.random.default_rng(7)
    image = rng.integers(0, 255, (60, 80)).astype(np.uint8)
    template = image[20:26, 30:42].copy()
    assert find_template(image, template, 0.99) == [Rect(30 * SCALE, 20 * SCALE, 48, 24)]
    brighter = np.clip(image.astype(np.int16) // 2 + 100, 0, 255).astype(np.uint8)
    assert Rect(30 * SCALE, 20 * SCALE, 48, 24) in find_template(brighter, template, 0.99)
    assert find_template(image, np.full((6, 12), 9, np.uint8)) == []  # flat: no pattern
    assert find_template(image, np.zeros((0, 4), np.uint8)) == []
    assert find_template(image[:5], template) == []  # larger than the image


GOLDEN_FINGERPRINT = "1bace4c209ac23949c5ddb2aae5eb7126ff031282970e6585fec8a20e836a5fb"
"""sha256 of a fixed screen's grid hashes, tones, details and target patch, as text."""


def test_the_fingerprint_of_a_fixed_screen_never_changes() -> None:
    """Recordings keep fingerprints, and replay computes the live one: a change to how a
    fingerprint is computed (scale, hash, tones, details, patch cells) makes every saved
    recording diverge. Such a change must be deliberate (and bump `format_version`)."""
    import hashlib

    from mmcli.screen.analysis import fingerprint_of

    rng = np.random.default_rng(2026)
    blocks = rng.integers(0, 256, (45, 80, 3), dtype=np.uint8)
    pixels = np.kron(blocks, np.ones((8, 8, 1), dtype=np.uint8))
    pixels[100:140, 200:400] = (250, 250, 250)
    pixels[:80, :80] = (90, 90, 90)  # flat tiles: no detail
    fp = fingerprint_of(Frame.from_image(Image.fromarray(pixels, "RGB")), (300, 120))
    assert fp.patch is not None
    text = "|".join([str(fp.grid), fp.grid.tones_hex(), fp.grid.details_hex(), str(fp.patch)])
    assert hashlib.sha256(text.encode()).hexdigest() == GOLDEN_FINGERPRINT


def _changes(*points: tuple[int, int], shape: tuple[int, int] = (60, 70)) -> np.ndarray:
    after = np.full(shape, 100, np.uint8)
    for x, y in points:
        after[y, x] = 200
    return after


@pytest.mark.parametrize(
    "points, regions",
    [
        # Changed downscaled pixels in blocks of 8 x 8 that touch (diagonally too) form one
        # region, tightened to the changed pixels; blocks further apart do not.
        (((7, 0), (16, 0)), [(7, 0, 1, 1), (16, 0, 1, 1)]),
        (((7, 0), (15, 0)), [(7, 0, 9, 1)]),
        (((5, 5), (10, 10)), [(5, 5, 6, 6)]),
        (((10, 10), (5, 5)), [(5, 5, 6, 6)]),
        (((3, 20), (12, 12)), [(3, 12, 10, 9)]),
        (((69, 59),), [(69, 59, 1, 1)]),  # in the last, partial block
        (((1, 1), (40, 1), (1, 40)), [(1, 1, 1, 1), (40, 1, 1, 1), (1, 40, 1, 1)]),
    ],
)
def test_changed_regions_are_touching_blocks_tightened(
    points: tuple[tuple[int, int], ...], regions: list[tuple[int, int, int, int]]
) -> None:
    from mmcli.screen.analysis import changed_regions

    found = changed_regions(np.full((60, 70), 100, np.uint8), _changes(*points))
    expected = [Rect(x * SCALE, y * SCALE, w * SCALE, h * SCALE) for x, y, w, h in regions]
    assert sorted(found, key=lambda r: (r.x, r.y)) == sorted(expected, key=lambda r: (r.x, r.y))


def test_a_change_counts_past_twelve_levels() -> None:
    from mmcli.screen.analysis import changed_regions

    before = np.full((20, 20), 100, np.uint8)
    after = before.copy()
    after[3, 4] = 112
    assert changed_regions(before, after) == []
    after[3, 4] = 113
    assert changed_regions(before, after) == [Rect(16, 12, 4, 4)]
    assert changed_regions(before, after[:10]) == [Rect(0, 0, 80, 40)]


def test_one_full_resolution_pixel_counts_past_32_levels() -> None:
    """Too faint to move its downscaled pixel past the threshold, one pixel changed by
    more than 32 levels is a change; by 32, it is not."""
    from mmcli.screen.analysis import changed_regions_fine

    base = Image.new("RGB", (80, 60), (100, 100, 100))
    for level, seen in ((132, False), (133, True), (67, True), (68, False)):
        after = base.copy()
        after.putpixel((41, 22), (level, 100, 100))
        found = changed_regions_fine(Frame.from_image(base), Frame.from_image(after))
        assert found == ([Rect(40, 20, 4, 4)] if seen else []), level
    bigger = Frame.from_image(Image.new("RGB", (84, 60), (100, 100, 100)))
    assert changed_regions_fine(Frame.from_image(base), bigger) == [Rect(0, 0, 84, 60)]


@pytest.mark.parametrize(
    "gap, luma, right",
    [(2, 0, 50), (3, 0, 40), (2, 175, 50), (2, 176, 40)],
    ids=["two-empty-columns", "three-empty-columns", "ink-25-levels", "ink-24-levels"],
)
def test_growth_crosses_two_empty_columns_to_ink_past_24_levels(
    gap: int, luma: int, right: int
) -> None:
    from mmcli.screen.analysis import grow_to_text_run

    small = np.full((60, 100), 200, np.uint8)
    small[20:26, 30:40] = 0
    small[20:26, 40 + gap : 50] = luma
    grown = grow_to_text_run(small, Rect(35 * SCALE, 22 * SCALE, SCALE, 2 * SCALE))
    assert (grown.x, grown.right) == (30 * SCALE, right * SCALE)
    assert (grown.y, grown.bottom) == (20 * SCALE, 26 * SCALE)


def test_a_rect_moved_keeps_its_size() -> None:
    assert Rect(10, 20, 30, 40).moved(5, -7) == Rect(15, 13, 30, 40)
