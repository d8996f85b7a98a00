"""The `regions` matcher's bounds, each at its edge: a change one step inside a bound is
judged one way, one step outside it the other. Synthetic 640x480 screens; changed regions
come in whole downscaled pixels (4 screen px)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from mmcli.screen.analysis import fingerprint_of, patch_of
from mmcli.screen.carets import in_focused_field, ink_columns, on_focus_line
from mmcli.screen.fingerprint import Fingerprint, Frame, Rect
from mmcli.screen.matcher import Difference, References, Verdict, compare, target_rect

GREY = (100, 100, 100)
TARGET = (560, 420)
"""The action's target: far from every change drawn here."""


def grey(*boxes: tuple[tuple[int, int, int, int], tuple[int, int, int]]) -> Image.Image:
    img = Image.new("RGB", (640, 480), GREY)
    d = ImageDraw.Draw(img)
    for (x, y, w, h), colour in boxes:
        d.rectangle([x, y, x + w - 1, y + h - 1], fill=colour)
    return img


def judged(
    live: Image.Image,
    *,
    area: Rect | None = None,
    path: tuple[Image.Image, ...] = (),
    recorded: Image.Image | None = None,
) -> Verdict:
    before = Frame.from_image(recorded or grey())
    fp: Fingerprint = fingerprint_of(before, TARGET)
    refs = References.prepare(before.small, [Frame.from_image(p).small for p in path], [])
    return compare(fp, Frame.from_image(live), area=area, references=refs)


BLOCK = (348, 200, 8, 8)
"""A small square of ink, too wide to be a caret."""


def test_a_change_within_the_area_margin_counts_and_beyond_it_is_excused() -> None:
    """`AREA_MARGIN` is 48 px: a change starting 47 px right of the task area is in it;
    one starting 48 px right of it is not."""
    live = grey((BLOCK, (255, 255, 255)))
    inside = judged(live, area=Rect(101, 100, 200, 200))  # right edge 301: 47 px away
    assert not inside.ok and inside.differences[0].region == Rect(*BLOCK)
    outside = judged(live, area=Rect(100, 100, 200, 200))  # right edge 300: 48 px away
    assert outside.ok and outside.excused == (f"outside the task area: {Rect(*BLOCK)}",)


def test_a_change_of_the_pixel_threshold_is_no_change() -> None:
    """Downscaled luma must move by more than 12 levels to count."""
    panel = (300, 200, 40, 40)  # larger than a caret, whose faint phase is excused
    assert judged(grey((panel, (112, 112, 112)))).ok
    assert not judged(grey((panel, (113, 113, 113)))).ok


def test_a_seen_state_may_be_as_large_as_a_widget_and_no_larger() -> None:
    """`SEEN_MAX` is 400 x 80 px: a region of that size in a state the task shows at
    another step is excused; one a downscaled pixel wider or taller is not."""
    blue = (48, 112, 240)
    for w, h, excused in ((400, 80, True), (404, 80, False), (400, 84, False)):
        state = grey(((100, 100, w, h), blue))
        verdict = judged(state, path=(state,))
        assert verdict.ok is excused, (w, h, verdict.summary())


def test_the_target_is_its_patch_and_its_core_the_central_half() -> None:
    patch = patch_of(Frame.from_image(grey()), 300, 200)
    assert target_rect(patch) == Rect(268, 168, 64, 64)
    assert target_rect(patch, core=True) == Rect(284, 184, 32, 32)


def test_a_summary_names_three_differences_and_counts_the_rest() -> None:
    found = tuple(
        Difference("regions", Rect(i, 0, 4, 4), "changed region (px)", 16, 0) for i in range(5)
    )
    assert Verdict(()).summary() == "screen matches"
    assert Verdict(found[:3]).summary().count(";") == 2
    assert Verdict(found[:4]).summary().endswith("at (2, 0); and 1 more")
    assert Verdict(found).summary().endswith("at (2, 0); and 2 more")
    assert Verdict(found).summary(limit=1) == f"{found[0]}; and 4 more"


@pytest.mark.parametrize(
    "focus, expected",
    [
        ((600, 96), True),  # a downscaled pixel above the mark's top
        ((600, 95), False),
        ((600, 124), True),  # a downscaled pixel below its bottom
        ((600, 125), False),
        ((120, 110), True),  # a field's reach (480 px) left of it
        ((119, 110), False),
        ((1088, 110), True),  # a field's reach right of it
        ((1089, 110), False),
    ],
)
def test_on_focus_line_up_to_a_field_s_reach(focus: tuple[int, int], expected: bool) -> None:
    assert on_focus_line(Rect(600, 100, 8, 20), focus) is expected


def _line(edges: dict[int, int] = {}) -> np.ndarray:  # noqa: B006 - read only
    """A downscaled 400 x 300 white screen; `edges`: columns of the mark's rows set to
    a luma (a widget edge, or a column one level short of being one)."""
    small = np.full((300, 400), 255, np.uint8)
    for x, luma in edges.items():
        small[20:40, x] = luma
    return small


EDGE = 120
"""A column this dark crosses the line: a widget edge."""


@pytest.mark.parametrize(
    "region, focus, edges, expected",
    [
        (Rect(400, 100, 4, 24), (400, 96), {}, True),  # the line: one small px above
        (Rect(400, 100, 4, 24), (400, 95), {}, False),
        (Rect(400, 100, 4, 24), (400, 128), {}, True),  # one small px below
        (Rect(400, 100, 4, 24), (400, 129), {}, False),
        (Rect(400, 100, 4, 24), (403, 110), {100: EDGE}, True),  # in the mark itself
        (Rect(400, 100, 4, 24), (440, 110), {110: EDGE}, False),
        (Rect(400, 100, 4, 24), (440, 110), {111: EDGE}, True),  # beyond the focus
        (Rect(400, 100, 4, 24), (360, 110), {90: EDGE}, False),  # left, at the focus
        (Rect(400, 100, 4, 24), (360, 110), {89: EDGE}, True),
        (Rect(400, 100, 4, 24), (440, 110), {105: 243}, True),  # 12 levels: no edge
        (Rect(400, 100, 4, 24), (440, 110), {105: 242}, False),
        (Rect(1000, 100, 4, 24), (520, 110), {}, True),  # 480 px to its left
        (Rect(1000, 100, 4, 24), (516, 110), {}, False),
        (Rect(1000, 100, 4, 24), (1480, 110), {}, True),  # 480 px to its right
        (Rect(1000, 100, 4, 24), (1484, 110), {}, False),
        (Rect(400, 100, 4, 4), (404, 100), {}, True),  # a band of one small pixel
        (Rect(400, 2000, 4, 8), (404, 2004), {}, False),  # off the screen: no band
    ],
)
def test_in_focused_field_at_its_edges(
    region: Rect, focus: tuple[int, int], edges: dict[int, int], expected: bool
) -> None:
    assert in_focused_field(region, focus, _line(edges)) is expected


def ink_screen(*bars: tuple[int, int, int, int]) -> Frame:
    """A white 200 x 100 screen with a black horizontal border across it at y 45, and
    vertical bars (x, top, bottom, luma) 1 px wide."""
    img = Image.new("RGB", (200, 100), "white")
    d = ImageDraw.Draw(img)
    d.line([0, 45, 199, 45], fill="black")
    for x, top, bottom, luma in bars:
        d.line([x, top, x, bottom], fill=(luma, luma, luma))
    return Frame.from_image(img)


def test_ink_columns_are_the_region_s_columns_with_ink_against_each_row() -> None:
    frame = ink_screen((53, 42, 57, 0), (47, 42, 57, 0), (150, 50, 60, 207), (152, 50, 60, 206))
    # The border crossing the region is background; the bar beside it, outside.
    assert list(np.flatnonzero(ink_columns(frame, Rect(50, 40, 8, 20)))) == [3]
    columns = ink_columns(frame, Rect(148, 48, 8, 14))
    assert columns is not None and list(np.flatnonzero(columns)) == [4]  # 48 levels: no ink
    edge = ink_screen((5, 2, 20, 0), (197, 80, 99, 0))
    top_left = ink_columns(edge, Rect(2, 2, 8, 20))
    assert top_left is not None and list(np.flatnonzero(top_left)) == [3]
    bottom_right = ink_columns(edge, Rect(195, 85, 5, 15))
    assert bottom_right is not None and list(np.flatnonzero(bottom_right)) == [2]
    assert ink_columns(edge, Rect(300, 40, 8, 8)) is None
    assert ink_columns(edge, Rect(-20, 40, 8, 8)) is None
    assert ink_columns(edge, Rect(50, 110, 8, 8)) is None


def caret_at(x: int, top: int, height: int, width: int = 1) -> Image.Image:
    return grey(((x, top, width, height), (0, 0, 0)))


def test_a_caret_like_mark_is_at_most_8_by_32_px() -> None:
    """A 2 px caret straddling two downscaled pixels makes an 8 px wide region; one 32 px
    tall, a 32 px tall one: both excused; 36 px tall is no caret."""
    for pointer_step, focus in ((True, TARGET), (False, (300, 220))):
        for height, excused in ((32, True), (36, False)):
            live = caret_at(223, 200, height, width=2)
            before = Frame.from_image(grey())
            fp = fingerprint_of(before, focus)
            verdict = compare(
                fp,
                Frame.from_image(live),
                references=References.prepare(before.small, [], []),
                pointer_step=pointer_step,
            )
            assert verdict.differences == () or verdict.differences[0].region.w == 8
            assert verdict.ok is excused, (pointer_step, height, verdict.summary())


def test_a_mark_wider_than_a_caret_is_none_however_thin_its_ink() -> None:
    """A faint 12 px wide box (a change, but no ink) with a 1 px bar in it."""
    recorded = grey(((300, 200, 12, 12), (130, 130, 130)))
    live = caret_at(304, 200, 12)
    verdict = judged(live, recorded=recorded)
    assert not verdict.ok and verdict.differences[0].region.w == 12


def test_a_step_without_a_target_is_judged_region_by_region() -> None:
    before = Frame.from_image(grey())
    fp = fingerprint_of(before, None)
    refs = References.prepare(before.small, [], [])
    live = Frame.from_image(grey(((300, 200, 40, 40), (255, 255, 255))))
    verdict = compare(fp, live, references=refs, pointer_step=False)
    (difference,) = verdict.differences
    assert difference.measure == "changed region (px)" and difference.tolerance == 0
    caret = Frame.from_image(caret_at(300, 200, 16))
    assert not compare(fp, caret, references=refs, pointer_step=False).ok  # no focus known
    assert compare(fp, caret, references=refs).ok  # a pointer step, the default


def test_only_the_target_s_core_is_never_a_seen_state() -> None:
    """The target is its central 32 x 32 px: a state seen elsewhere just beside it (in
    the patch, outside its core) is excused."""
    for dx, excused in ((-12, False), (20, True)):
        x, y = TARGET[0] + dx, TARGET[1] - 4
        state = grey(((x, y, 8, 8), (255, 255, 255)))
        verdict = judged(state, path=(state,))
        assert verdict.ok is excused, (dx, verdict.summary())


def test_a_seen_state_is_one_within_the_pixel_threshold() -> None:
    """The other step shows the region within 12 levels of the live screen; the path's
    typing is not known (none given)."""
    live = grey(((100, 100, 40, 40), (200, 200, 200)))
    assert judged(live, path=(grey(((100, 100, 40, 40), (212, 212, 212))),)).ok
    assert not judged(live, path=(grey(((100, 100, 40, 40), (213, 213, 213))),)).ok


def test_another_screen_size_names_the_live_screen() -> None:
    fp = fingerprint_of(Frame.from_image(grey()), TARGET)
    (difference,) = compare(fp, Frame.from_image(Image.new("RGB", (320, 240)))).differences
    assert difference.region == Rect(0, 0, 320, 240)
    assert (difference.amount, difference.tolerance) == (320, 640)
