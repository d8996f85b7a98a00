"""Finding a moved task area on synthetic screens (the real-screen proof is in e2e)."""

from __future__ import annotations

import numpy as np
import pytest

from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.relocate import find_offset, moved, shifted

W, H = 640, 360
AREA = Rect(100, 80, 160, 120)


def screen(*origins: tuple[int, int]) -> Frame:
    """Black screen with the same textured 'window' (AREA's size) at each origin."""
    rng = np.random.default_rng(7)
    window = np.repeat(np.repeat(rng.integers(0, 256, (15, 20), np.uint8), 8, 0), 8, 1)
    pixels = np.zeros((H, W, 4), np.uint8)
    for x, y in origins:
        pixels[y : y + AREA.h, x : x + AREA.w, :3] = window[:, :, None]
    return Frame(pixels.tobytes(), W, H)


@pytest.mark.parametrize("offset", [(40, 0), (37, 13), (-21, 6), (0, 0)])
def test_the_area_is_found_at_its_offset_to_the_pixel(offset: tuple[int, int]) -> None:
    recorded = screen((AREA.x, AREA.y))
    live = screen((AREA.x + offset[0], AREA.y + offset[1]))
    assert find_offset(recorded.small, AREA, live) == offset


def test_two_copies_of_the_area_are_ambiguous() -> None:
    recorded = screen((AREA.x, AREA.y))
    assert find_offset(recorded.small, AREA, screen((20, 20), (400, 200))) is None


def test_an_area_not_on_screen_is_not_found() -> None:
    recorded = screen((AREA.x, AREA.y))
    assert find_offset(recorded.small, AREA, screen()) is None


def test_shifting_back_restores_the_recorded_screen() -> None:
    recorded = screen((AREA.x, AREA.y))
    live = screen((AREA.x + 37, AREA.y + 13))
    assert np.array_equal(shifted(live, (37, 13)).pixels, recorded.pixels)


def test_actions_move_with_the_offset() -> None:
    drag = Action(ActionKind.DRAG, x=1, y=2, x2=3, y2=4)
    assert moved(drag, (10, 20)) == Action(ActionKind.DRAG, x=11, y=22, x2=13, y2=24)
    typed = Action(ActionKind.TYPE, text="hi")
    assert moved(typed, (10, 20)) == typed


def desk(window_at: tuple[int, int], *extra: tuple[int, int, int, int, int]) -> Frame:
    """A flat desktop with a static object (another window) above and right of where the
    task window was recorded, the textured task window at `window_at`, and `extra`
    rectangles (x, y, w, h, shade) drawn last (a dialog)."""
    rng = np.random.default_rng(7)
    window = np.repeat(np.repeat(rng.integers(0, 256, (15, 20), np.uint8), 8, 0), 8, 1)
    pixels = np.full((H, W, 4), 90, np.uint8)
    pixels[20:60, 300:360, :3] = 200
    x, y = window_at
    pixels[y : y + AREA.h, x : x + AREA.w, :3] = window[:, :, None]
    for ex, ey, ew, eh, shade in extra:
        pixels[ey : ey + eh, ex : ex + ew, :3] = shade
    return Frame(pixels.tobytes(), W, H)


def relocated_check(live: Frame, offset: tuple[int, int]):  # type: ignore[no-untyped-def]
    from mmcli.screen.analysis import fingerprint_of
    from mmcli.screen.matcher import References, compare

    recorded = desk((AREA.x, AREA.y))
    fp = fingerprint_of(recorded, (AREA.x + 40, AREA.y + 40))
    refs = References.prepare(recorded.small, [], [], [])
    return compare(
        fp, shifted(live, offset), area=AREA, references=refs, unmoved=live, offset=offset
    )


def test_the_desktop_beside_a_moved_window_is_not_a_difference() -> None:
    """Shifted back, the static object above the window lands in the task's margin; the
    screen unshifted shows it exactly where it was recorded: nothing there is new."""
    live = desk((AREA.x + 60, AREA.y))
    assert find_offset(desk((AREA.x, AREA.y)).small, AREA, live) == (60, 0)
    verdict = relocated_check(live, (60, 0))
    assert verdict.ok, verdict.differences
    assert any("stayed where it was" in why for why in verdict.excused)


def test_a_dialog_beside_the_moved_window_is_still_a_difference() -> None:
    live = desk((AREA.x + 60, AREA.y), (364, 24, 40, 30, 20))
    verdict = relocated_check(live, (60, 0))
    assert not verdict.ok


def test_the_desktop_rule_needs_the_window_moved() -> None:
    """Not relocating, the same difference (an object moved on the desktop) counts."""
    from mmcli.screen.analysis import fingerprint_of
    from mmcli.screen.matcher import References, compare

    recorded = desk((AREA.x, AREA.y))
    live = desk((AREA.x, AREA.y), (240, 20, 60, 40, 200), (300, 20, 60, 40, 90))
    fp = fingerprint_of(recorded, (AREA.x + 40, AREA.y + 40))
    refs = References.prepare(recorded.small, [], [], [])
    assert not compare(fp, live, area=AREA, references=refs).ok


def test_a_dialog_the_shift_pushes_off_the_screen_is_still_a_difference() -> None:
    """Shifted back by the offset, a dialog at the screen's left edge leaves the picture;
    the screen unshifted still shows it where the region is: not excused."""
    recorded = desk((AREA.x, AREA.y), (70, 20, 60, 40, 200))
    live = desk((AREA.x + 60, AREA.y), (70, 20, 60, 40, 200), (0, 24, 50, 30, 20))
    from mmcli.screen.analysis import fingerprint_of
    from mmcli.screen.matcher import References, compare

    fp = fingerprint_of(recorded, (AREA.x + 40, AREA.y + 40))
    refs = References.prepare(recorded.small, [], [], [])
    view = shifted(live, (60, 0))
    verdict = compare(fp, view, area=AREA, references=refs, unmoved=live, offset=(60, 0))
    assert not verdict.ok
    calm = desk((AREA.x + 60, AREA.y), (70, 20, 60, 40, 200))
    shifted_calm = shifted(calm, (60, 0))
    assert compare(fp, shifted_calm, area=AREA, references=refs, unmoved=calm, offset=(60, 0)).ok


# ---- the desktop rule's own bounds, on a plain downscaled screen ---------------------------
# A 400 x 300 px screen (100 x 75 downscaled cells), the task area at (100, 100) 100 x 60
# px, the window moved 40 px right. The rule excuses a region beside the area when the
# unshifted live screen equals the recording there and 40 px to the right of it, except
# in the one ring of cells along the area's edge (x 96-100 and 200-204, y 96-100 and
# 160-164 in the recording's coordinates).

PLAIN_AREA = Rect(100, 100, 100, 60)


def left_behind(
    region: Rect,
    *changed: tuple[int, int],
    offset: tuple[int, int] = (40, 0),
    level: int = 200,
    shifted_changed: tuple[tuple[int, int], ...] | None = None,
    window: Rect | None = None,
    workarea: Rect | None = None,
) -> bool:
    """Whether `region` is excused when the unshifted live screen differs from the
    recording by `level` in the downscaled cells `changed` (column, row) only, and the
    shifted live screen in the cells `shifted_changed` (None: not given to the rule)."""
    from mmcli.screen import excuses
    from mmcli.screen.matcher import Context, Policy

    reference = np.zeros((75, 100), np.uint8)
    unmoved = reference.copy()
    for column, row in changed:
        unmoved[row, column] = level
    now = None
    if shifted_changed is not None:
        now = reference.copy()
        for column, row in shifted_changed:
            now[row, column] = level
    ctx = Context(
        Policy.DEFAULT.tolerance,
        area=PLAIN_AREA,
        unmoved=unmoved,
        offset=offset,
        moved_windows=() if window is None else (window,),
        workarea=workarea,
    )
    return excuses.left_behind(region, reference, ctx, now)


def test_a_region_taking_in_matching_cells_of_the_area_is_beside_it() -> None:
    """A region found as one block (the desktop now shifted in beside the window) may take
    in cells of the area proper: it is beside the area if none of those differs."""
    region = Rect(192, 80, 24, 32)  # 8 px into the area proper at x 192-196, y 104-112
    assert left_behind(region, shifted_changed=((52, 22),))  # differs only beside the area
    assert not left_behind(region, shifted_changed=((48, 26),))  # differs inside it
    assert not left_behind(region)  # the shifted screen not given: inside is inside
    assert not left_behind(Rect(120, 120, 8, 8), shifted_changed=())  # wholly inside


def test_where_the_moved_task_stands_now_is_not_asked_to_be_desktop() -> None:
    """The window moved 40 px right covers desktop it did not cover when recorded: the
    live screen there shows the task (judged shifted), not the desktop recorded there."""
    beside = Rect(208, 120, 8, 8)  # right of the area; where the moved task stands now
    assert left_behind(beside, (52, 30))  # covered by the moved task: x 140-240
    assert not left_behind(beside, (62, 30))  # new where its content comes from (x 248)
    assert not left_behind(beside, (52, 30), offset=(0, 40))  # moved down: not covered


def test_a_panels_clock_and_a_moved_windows_shadow_are_not_the_desktop_left_behind() -> None:
    """Xfce: a region beside the moved window that reached into the panel at the top,
    whose clock had ticked, and one ring of cells below the moved frame where the
    compositor draws its shadow."""
    beside = Rect(300, 0, 40, 40)  # right of the area, from the panel (y < 24) down
    panel = Rect(0, 24, 400, 276)
    assert not left_behind(beside, (80, 2))  # the clock's cell differs
    assert left_behind(beside, (80, 2), workarea=panel)
    assert not left_behind(beside, (80, 8), workarea=panel)  # below the panel: judged
    frame = Rect(138, 84, 104, 78)  # the moved window's frame: its bottom at y 162
    below = Rect(220, 160, 8, 16)
    assert left_behind(below, (56, 42), window=frame)  # y 168-172: within its shadow
    assert not left_behind(below, (56, 43), window=frame)  # y 172-176: past it


def test_the_moved_windows_frame_is_the_task_too() -> None:
    """The task area may leave out the window's title bar; the window system tells where
    the moved window's frame stands, title bar included."""
    above = Rect(150, 80, 8, 8)  # above the area, where the moved title bar now stands
    frame = Rect(138, 84, 104, 78)  # its top at y 84
    assert not left_behind(above, (38, 21))
    assert left_behind(above, (38, 21), window=frame)
    assert not left_behind(above, (38, 20), window=frame)  # y 80-84, above the frame


def test_the_desktop_rule_excuses_an_unchanged_place_beside_the_area() -> None:
    assert left_behind(Rect(20, 20, 8, 8))
    assert not left_behind(Rect(20, 20, 8, 8), (5, 5))  # new where it stands
    assert not left_behind(Rect(20, 20, 8, 8), (15, 5))  # new where its content comes from
    assert left_behind(Rect(20, 20, 8, 8), (5, 5), level=12)  # within PIXEL_THRESHOLD
    assert not left_behind(Rect(20, 20, 8, 8), (5, 5), level=13)


def test_a_region_reaching_into_the_areas_edge_ring_only_is_beside_the_area() -> None:
    # A window manager's title bar just inside the recorded area's top edge: the region
    # found on the 4 px grid reaches 4 px (one ring of cells) into the area.
    assert left_behind(Rect(120, 80, 8, 24))
    assert not left_behind(Rect(120, 80, 8, 24), (30, 21))  # new above the area
    assert not left_behind(Rect(120, 80, 8, 28))  # 8 px in: inside the area proper


def test_the_desktop_rule_never_excuses_inside_the_area_or_without_its_screen() -> None:
    from mmcli.screen import excuses
    from mmcli.screen.matcher import Context, Policy

    assert not left_behind(Rect(120, 120, 8, 8))
    reference = np.zeros((75, 100), np.uint8)
    other_size = Context(
        Policy.DEFAULT.tolerance, area=PLAIN_AREA, unmoved=np.zeros((10, 10), np.uint8)
    )
    assert not excuses.left_behind(Rect(20, 20, 8, 8), reference, other_size)


@pytest.mark.parametrize(
    ("region", "offset", "cell"),
    [
        (Rect(360, 20, 40, 8), (40, 0), (92, 5)),  # to the right edge; the window moved right
        (Rect(20, 264, 8, 36), (0, 40), (5, 70)),  # to the bottom edge; moved down
        (Rect(396, 20, 8, 8), (40, 0), (99, 5)),  # reaching past the edge: its part on it
    ],
)
def test_what_the_shift_brings_in_from_beyond_the_screen_is_not_a_difference(
    region: Rect, offset: tuple[int, int], cell: tuple[int, int]
) -> None:
    """Shifted back by the offset, the strip along the edge the window moved towards comes
    from beyond the screen (black there): nothing beyond the screen can be new (Xfce: a
    window moved 60 px right with the wallpaper's edge in its margin diverged). The
    region's cells on the screen are judged as always."""
    assert left_behind(region, offset=offset)
    assert not left_behind(region, cell, offset=offset)


@pytest.mark.parametrize(
    ("region", "cell", "excused"),
    [
        (Rect(200, 120, 8, 8), (50, 30), True),  # right of the area: x 200-204 is the ring
        (Rect(200, 120, 8, 8), (51, 30), False),  # (with the window moved down, below)
        (Rect(200, 120, 8, 8), (60, 30), True),  # the same cells, 40 px to the right
        (Rect(200, 120, 8, 8), (61, 30), False),
        (Rect(92, 120, 8, 8), (24, 30), True),  # left of the area: x 96-100
        (Rect(92, 120, 8, 8), (23, 30), False),
        (Rect(120, 160, 8, 8), (30, 40), True),  # below: y 160-164
        (Rect(120, 160, 8, 8), (30, 41), False),
        (Rect(120, 92, 8, 8), (30, 24), True),  # above: y 96-100
        (Rect(120, 92, 8, 8), (30, 23), False),
    ],
)
def test_only_the_ring_of_cells_along_the_area_is_let_be(
    region: Rect, cell: tuple[int, int], excused: bool
) -> None:
    if region.x == 200 and cell[0] in (50, 51):
        # Moved right, the task now covers x 200-208 where the region stands: moved down,
        # it does not (the right of the area is judged as the other sides are).
        assert left_behind(region, cell, offset=(0, 40)) is excused
        assert left_behind(region, cell)
    else:
        assert left_behind(region, cell) is excused


@pytest.mark.parametrize(("cell", "excused"), [((30, 50), True), ((30, 51), False)])
def test_the_ring_is_found_where_the_content_comes_from_after_a_vertical_move(
    cell: tuple[int, int], excused: bool
) -> None:
    """Moved 40 px down: the region below the area takes its content from 40 px lower,
    whose first row of cells is the ring (y 160-164 in the recording's coordinates)."""
    assert left_behind(Rect(120, 160, 8, 8), cell, offset=(0, 40)) is excused


def test_the_outcome_s_pointer_goes_where_it_was_over_the_window_under_it() -> None:
    """The form moved 60 px right, a dialog it had opened stood apart and closed: the
    pointer belongs 60 px right of where it was recorded; nowhere when the window is
    not there, is there twice, moved without --relocate, or was not known."""
    from dataclasses import replace

    from mmcli.model import EndScreen
    from mmcli.replay.pointer_place import outcome_pointer
    from mmcli.screen.fingerprint import Fingerprint, Grid, Rect
    from mmcli.screen.windows import WindowRef

    form = WindowRef("loan.Tk", Rect(100, 100, 560, 420))
    moved = WindowRef("loan.Tk", Rect(160, 100, 560, 420))
    grid = Grid(4, 4, (0,) * 16, (0,) * 16, (0,) * 16)
    screen = Fingerprint(1280, 720, grid, pointer=(460, 395))
    end = EndScreen(screen, under=form)
    dialog = WindowRef("loan.Tk", Rect(300, 300, 320, 130))
    assert outcome_pointer(end, [moved], relocate=True) == (520, 395)
    assert outcome_pointer(end, [dialog, moved], relocate=True) == (520, 395)
    assert outcome_pointer(end, [form], relocate=True) == (460, 395)
    assert outcome_pointer(end, [form], relocate=False) == (460, 395)
    assert outcome_pointer(end, [moved], relocate=False) is None
    assert outcome_pointer(end, [moved, moved], relocate=True) is None
    assert outcome_pointer(end, [dialog], relocate=True) is None
    assert outcome_pointer(end, None, relocate=True) is None
    assert outcome_pointer(replace(end, under=None), [moved], relocate=True) is None
    unknown = replace(end, fingerprint=replace(screen, pointer=None))
    assert outcome_pointer(unknown, [moved], relocate=True) is None


def test_a_change_inside_a_named_title_bar_is_not_one_a_window_over_it_hides() -> None:
    """`outcome._outside`: the title's change, wholly in a bar the window system names,
    is known without its pixels; a change reaching past the bar, or in none, stays."""
    from mmcli.replay.outcome import _outside

    bar = Rect(100, 100, 560, 20)
    title, status = Rect(270, 102, 220, 16), Rect(120, 500, 300, 20)
    past = Rect(270, 102, 220, 40)
    assert _outside([title, status, past], [bar]) == [status, past]
    assert _outside([title], []) == [title]
    assert _outside(None, [bar]) is None
