"""The `regions` matcher's bounds, each at its edge: a change one step inside a bound is
judged one way, one step outside it the other. Synthetic 640x480 screens; changed regions
come in whole downscaled pixels (4 screen px)."""

from __future__ import annotations

from PIL import Image, ImageDraw

from mmcli.fingerprint import Fingerprint, Frame, Rect, fingerprint_of, patch_of
from mmcli.matcher import Difference, References, Verdict, compare, target_rect

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
