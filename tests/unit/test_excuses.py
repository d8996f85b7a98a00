"""Each excuse of the `regions` matcher alone, on plain screens: when it applies, and the
first thing that stops it (`compare` runs them together: test_matcher_rules.py)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from mmcli.screen.analysis import PIXEL_THRESHOLD, changed_regions, fingerprint_of
from mmcli.screen.excuses import (
    CARET,
    EXCUSES,
    FOCUSED_CARET,
    LEFT_BEHIND,
    OUTSIDE_AREA,
    SEEN_LIMIT,
    SEEN_STATE,
    Scene,
    excuse_for,
    task_window_areas,
)
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Context, Policy, References

SIZE = (400, 300)
AREA = Rect(100, 100, 100, 60)
BAR = (200, 100, 1, 12)
"""A caret: 1 px wide, a line of text tall."""


def screen(*boxes: tuple[int, int, int, int], fill: str = "black") -> Frame:
    """A white screen with boxes (x, y, w, h) drawn in `fill`."""
    image = Image.new("RGB", SIZE, "white")
    d = ImageDraw.Draw(image)
    for x, y, w, h in boxes:
        d.rectangle([x, y, x + w - 1, y + h - 1], fill=fill)
    return Frame.from_image(image)


def scene(
    recorded: Frame,
    live: Frame,
    *,
    target: tuple[int, int] | None = None,
    pointer_step: bool = True,
    policy: Policy = Policy.DEFAULT,
    path: tuple[Frame, ...] = (),
    typed: tuple[Rect, ...] = (),
    unmoved: np.ndarray | None = None,
    offset: tuple[int, int] = (0, 0),
    area: Rect = AREA,
    workarea: Rect | None = None,
    task_windows: tuple[Rect, ...] = (),
) -> Scene:
    refs = References(recorded.small, [p.small for p in path], [typed] * len(path))
    ctx = Context(
        policy.tolerance,
        area=area,
        references=refs,
        pointer_step=pointer_step,
        unmoved=unmoved,
        offset=offset,
        workarea=workarea,
        task_windows=task_windows,
    )
    fp = fingerprint_of(recorded, target)
    core = None if target is None else Rect(target[0] - 16, target[1] - 16, 32, 32)
    return Scene(fp, live, live.small, recorded.small, ctx, core)


def changed(recorded: Frame, live: Frame) -> Rect:
    regions = changed_regions(recorded.small, live.small, PIXEL_THRESHOLD)
    assert len(regions) == 1, regions
    return regions[0]


def test_the_excuses_are_asked_in_this_order() -> None:
    assert [e.name for e in EXCUSES] == [
        "outside the task area",
        "desktop that stayed where it was as the window moved",
        "caret-like mark",
        "caret in the focused field",
        "a state the task shows at another step",
    ]
    assert OUTSIDE_AREA.explain(Rect(1, 2, 3, 4)) == "outside the task area: 3x4 at (1, 2)"


def test_outside_the_task_area() -> None:
    far, near = Rect(340, 240, 8, 8), Rect(210, 120, 8, 8)
    s = scene(screen(), screen())
    assert OUTSIDE_AREA.applies(far, s)
    assert not OUTSIDE_AREA.applies(near, s)  # within the 48 px margin
    assert not OUTSIDE_AREA.applies(far, scene(screen(), screen(), target=(344, 244)))
    assert not OUTSIDE_AREA.applies(far, scene(screen(), screen(), policy=Policy.STRICT))


def test_a_change_anywhere_in_the_task_s_window_is_inside_the_task() -> None:
    """A cell of the sheet far from where the task types is the task's: the app's window
    is the task, not only the 48 px around its actions."""
    far = Rect(340, 240, 8, 8)
    window = Rect(60, 60, 320, 220)
    assert not OUTSIDE_AREA.applies(far, scene(screen(), screen(), task_windows=(window,)))
    beside = Rect(390, 20, 8, 8)  # beyond the window: another app's, or the desktop
    assert OUTSIDE_AREA.applies(beside, scene(screen(), screen(), task_windows=(window,)))


def test_the_task_s_window_never_takes_in_a_panel() -> None:
    """A maximized window's client area is kept within the work area: a panel's clock
    below it stays outside the task."""
    assert task_window_areas([Rect(0, 0, 400, 300)], Rect(0, 0, 400, 262)) == [Rect(0, 0, 400, 260)]
    assert task_window_areas([Rect(0, 280, 50, 20)], Rect(0, 0, 400, 262)) == []
    assert task_window_areas([Rect(5, 5, 9, 9), Rect(5, 5, 9, 9)], None) == [Rect(5, 5, 9, 9)]


def test_a_row_of_cells_straddling_a_panel_s_edge_is_the_panel_s() -> None:
    """The work area ends at y 262 (a panel below), inside the downscaled row 260-263:
    that row is the panel's, so a change there is outside the task area, however near."""
    s = scene(screen(), screen(), area=Rect(100, 200, 100, 40), workarea=Rect(0, 0, 400, 262))
    assert OUTSIDE_AREA.applies(Rect(120, 260, 8, 4), s)
    assert not OUTSIDE_AREA.applies(Rect(120, 256, 8, 4), s)


def test_desktop_left_behind_by_a_moved_window() -> None:
    region = Rect(20, 20, 8, 8)
    still = screen().small
    s = scene(screen(), screen(), unmoved=still, offset=(40, 0))
    assert LEFT_BEHIND.applies(region, s)
    assert not LEFT_BEHIND.applies(Rect(120, 120, 8, 8), s)  # inside the task area
    new = screen((20, 20, 8, 8)).small  # something new where the region stands
    assert not LEFT_BEHIND.applies(region, scene(screen(), screen(), unmoved=new, offset=(40, 0)))
    assert not LEFT_BEHIND.applies(region, scene(screen(), screen()))  # window not moved
    on_target = scene(screen(), screen(), target=(24, 24), unmoved=still, offset=(40, 0))
    assert not LEFT_BEHIND.applies(region, on_target)


def test_a_caret_like_mark_at_a_pointer_step() -> None:
    recorded, live = screen(), screen(BAR)
    region = changed(recorded, live)
    assert CARET.applies(region, scene(recorded, live))
    assert CARET.applies(region, scene(live, recorded))  # the other phase
    assert not CARET.applies(region, scene(recorded, live, pointer_step=False))
    assert not CARET.applies(region, scene(recorded, live, policy=Policy.STRICT))
    glyph = screen((200, 100, 6, 12))
    assert not CARET.applies(changed(recorded, glyph), scene(recorded, glyph))


def test_a_caret_in_the_focused_field_at_a_keyboard_step() -> None:
    recorded, live = screen(), screen(BAR)
    region = changed(recorded, live)
    focus = (120, 106)  # the field's last click, on the caret's line
    assert FOCUSED_CARET.applies(region, scene(recorded, live, target=focus, pointer_step=False))
    assert not FOCUSED_CARET.applies(region, scene(recorded, live, target=focus))
    other_line = (120, 250)
    typing = scene(recorded, live, target=other_line, pointer_step=False)
    assert not FOCUSED_CARET.applies(region, typing)
    walled = screen((160, 96, 1, 20))  # a widget edge between the focus and the mark
    live_walled = screen((160, 96, 1, 20), BAR)
    typing = scene(walled, live_walled, target=focus, pointer_step=False)
    assert not FOCUSED_CARET.applies(changed(walled, live_walled), typing)
    assert not FOCUSED_CARET.applies(region, scene(recorded, live, pointer_step=False))


def test_a_state_the_task_shows_at_another_step() -> None:
    box = (140, 120, 40, 12)
    recorded, live = screen(), screen(box, fill="grey")
    region = changed(recorded, live)
    s = scene(recorded, live, path=(live,))
    assert SEEN_STATE.applies(region, s)
    assert not SEEN_STATE.applies(region, scene(recorded, live))  # no other step
    assert not SEEN_STATE.applies(region, scene(recorded, live, path=(screen(),)))
    typed_there = scene(recorded, live, path=(live,), typed=(Rect(140, 120, 40, 12),))
    assert not SEEN_STATE.applies(region, typed_there)  # typing done, not a state
    assert not SEEN_STATE.applies(region, scene(recorded, live, path=(live,), target=(150, 125)))
    assert not SEEN_STATE.applies(region, scene(recorded, live, path=(live,), policy=Policy.STRICT))
    s.excused[SEEN_STATE.name] = SEEN_LIMIT
    assert not SEEN_STATE.applies(region, s)


def test_the_first_excuse_that_applies_is_counted() -> None:
    s = scene(screen(), screen(BAR))
    assert excuse_for(Rect(340, 240, 8, 8), s) is OUTSIDE_AREA  # a caret, but outside first
    assert excuse_for(changed(screen(), screen(BAR)), s) is CARET
    assert excuse_for(Rect(120, 120, 40, 40), s) is None
    assert dict(s.excused) == {OUTSIDE_AREA.name: 1, CARET.name: 1}
