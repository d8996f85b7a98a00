"""Step building: what each action changed, and the masks derived from it."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from PIL import Image, ImageDraw

from mmcli.capture.steps import (
    Capture,
    build_steps,
    effect_regions,
    join_typing,
    spanned,
    union_of,
)
from mmcli.model import Action, ActionKind
from mmcli.screen.analysis import box_of, patch_of
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import WindowRef
from tests.helpers import ended_on, form_screen

FIELD_CLICK = (350, 185)
CLOCK = Rect(1690, 10, 120, 30)


def screen(text: str = "", clock: str = "12:00:01") -> Image.Image:
    img = form_screen(text=text)
    ImageDraw.Draw(img).text((1700, 20), clock, fill="white")
    return img


def capture(img: Image.Image, action: Action, focus: tuple[int, int]) -> Capture:
    frame = Frame.from_image(img)
    return Capture(
        action=action,
        small=frame.small,
        patch=patch_of(frame, *focus),
        pointer=focus,
        size=(frame.width, frame.height),
        at=datetime(2026, 11, 1, tzinfo=UTC),
    )


def typed_run(clock_ticks: bool) -> list[Capture]:
    click = Action(ActionKind.CLICK, x=FIELD_CLICK[0], y=FIELD_CLICK[1])
    typing = Action(ActionKind.TYPE, text="Ada")
    submit = Action(ActionKind.CLICK, x=160, y=415)
    later = "12:00:02" if clock_ticks else "12:00:01"
    return [
        capture(screen(), click, FIELD_CLICK),
        capture(screen(), typing, FIELD_CLICK),
        capture(screen(text="Ada", clock=later), submit, (160, 415)),
    ]


def test_the_effect_of_typing_is_the_field_even_when_the_clock_ticks() -> None:
    """A clock ticking between two captures is not the typing's doing: the param mask
    derived from the effect must stay on the field, not stretch to the clock."""
    built = build_steps(typed_run(clock_ticks=True), None, {"name": "Ada"}, 0, None, [])
    effect = built.steps[1].effect
    assert effect is not None
    assert effect.intersects(Rect(200, 175, 300, 20))
    assert not effect.intersects(CLOCK)
    param_mask = built.steps[2].fingerprint.masks[-1]
    assert not param_mask.intersects(CLOCK)
    assert built.steps[1].action.text == "{{name}}"


def test_a_masked_region_is_no_part_of_any_effect() -> None:
    captures = typed_run(clock_ticks=True)
    captures[1] = capture(screen(clock="12:00:05"), captures[1].action, FIELD_CLICK)
    built = build_steps(captures, None, {}, 0, None, [CLOCK])
    assert built.steps[0].effect is None  # the click changed nothing but the clock
    assert built.area is not None and not built.area.intersects(CLOCK)


def test_thumbnail_paint_covers_exactly_the_blanked_cells() -> None:
    """A secret painted over in a thumbnail is compared blanked: a painted row or column
    beyond the blanked cells would read as a change at every replay."""
    import io

    import numpy as np

    from mmcli.screen.analysis import blank
    from mmcli.screen.paint import blank_png

    white = Image.new("RGB", (40, 30), "white")
    buf = io.BytesIO()
    white.save(buf, format="PNG")
    region = Rect(10, 10, 21, 21)
    painted = Image.open(io.BytesIO(blank_png(buf.getvalue(), [region])))
    small = Frame.small_from_thumbnail(painted)
    untouched = Frame.small_from_thumbnail(white)
    assert (blank(small, [region]) == blank(untouched, [region])).all()
    assert not np.array_equal(small, untouched)


def test_typing_over_a_volatile_region_still_masks_the_param_text() -> None:
    """A region learned as volatile over part of the field (its caret's first blinks)
    must not hide the typing: the replayed value, longer or shorter, is masked still."""
    volatile = Rect(196, 172, 40, 28)  # learned over the field's start
    built = build_steps(typed_run(clock_ticks=False), None, {"name": "Ada"}, 0, None, [volatile])
    assert built.steps[1].effect is not None
    param_mask = built.steps[2].fingerprint.masks[-1]
    assert param_mask.right > 300  # the typed text and the room a longer value needs


def test_parametrize_replaces_the_longest_value_first() -> None:
    from mmcli.params import parametrize

    values = {"first": "Ada", "x": "Ada Lovelace", "empty": ""}
    assert parametrize("Ada Lovelace, Ada", values) == "{{x}}, {{first}}"
    assert parametrize("", values) == ""
    assert parametrize("Bob", values) == "Bob"


def test_a_rectangle_less_a_hole_is_up_to_four_rectangles() -> None:
    from mmcli.screen.paint import _minus

    r = Rect(0, 0, 100, 100)
    assert _minus(r, Rect(40, 40, 20, 20)) == [
        Rect(0, 0, 100, 40),
        Rect(0, 60, 100, 40),
        Rect(0, 40, 40, 20),
        Rect(60, 40, 40, 20),
    ]
    assert _minus(r, Rect(0, 0, 20, 20)) == [Rect(0, 20, 100, 80), Rect(20, 0, 80, 20)]
    rim = _minus(r, Rect(1, 1, 98, 98))  # parts one pixel thick are kept
    assert sum(p.w * p.h for p in rim) == 100 * 100 - 98 * 98


def test_painting_leaves_the_core_of_the_target_visible() -> None:
    """A secret painted over never covers the target's central 32 x 32 px, which the
    step's own check compares."""
    from mmcli.screen.paint import paintable as _paintable

    field = Rect(200, 175, 300, 20)
    assert _paintable([field], None) == [field]
    patch = patch_of(Frame.from_image(screen()), *FIELD_CLICK)  # core: 334-366, 169-201
    parts = _paintable([field, CLOCK], patch)
    assert CLOCK in parts
    core = Rect(FIELD_CLICK[0] - 16, FIELD_CLICK[1] - 16, 32, 32)
    assert not any(p.intersects(core) for p in parts)
    assert sum(p.w * p.h for p in parts if p != CLOCK) == 300 * 20 - 32 * 20
    around = Rect(300, 140, 100, 100)  # holds the whole core: a 32 x 32 hole
    assert sum(p.w * p.h for p in _paintable([around], patch)) == 100 * 100 - 32 * 32


def test_a_keyboard_action_acts_where_the_last_pointer_action_did() -> None:
    from mmcli.capture.steps import focus_point

    click = Action(ActionKind.CLICK, x=FIELD_CLICK[0], y=FIELD_CLICK[1])
    assert focus_point(click, (1, 2)) == FIELD_CLICK
    assert focus_point(Action(ActionKind.TYPE, text="x"), (1, 2)) == (1, 2)
    assert focus_point(Action(ActionKind.PRESS, keys=("enter",)), None) is None


def test_a_region_inside_a_mask_is_no_part_of_an_effect_even_at_its_edges() -> None:
    assert Rect(0, 0, 10, 10).inside(Rect(0, 0, 10, 10))
    assert not Rect(0, 0, 10, 10).inside(Rect(5, 0, 10, 10))
    assert not Rect(0, 0, 10, 10).inside(Rect(0, 0, 10, 9))


def test_the_effect_of_a_click_is_everything_it_changed() -> None:
    """Unlike typing, a click's effect is not limited to the clicked line: the field it
    cleared and the message it showed far below."""
    click = Action(ActionKind.CLICK, x=FIELD_CLICK[0], y=FIELD_CLICK[1])
    before = capture(screen(text="Ada"), click, FIELD_CLICK)
    after = form_screen()
    ImageDraw.Draw(after).text((1700, 20), "12:00:01", fill="white")
    ImageDraw.Draw(after).text((120, 470), "Cleared", fill="red")
    effect = union_of(effect_regions(before, Frame.from_image(after).small, []))
    assert effect is not None
    assert effect.intersects(Rect(200, 175, 300, 20)) and effect.intersects(Rect(120, 470, 60, 12))


def test_thumbnail_paint_is_the_blanked_cells_wherever_the_region_lies() -> None:
    """Every cell `blank` blanks is painted, and no other: regions inside the screen,
    across its corner, and wholly off it."""
    import io

    import numpy as np

    from mmcli.screen.analysis import blank
    from mmcli.screen.paint import PAINT, blank_png

    white = Image.new("RGB", (40, 30), "white")
    buf = io.BytesIO()
    white.save(buf, format="PNG")
    for regions in ([Rect(10, 10, 21, 21)], [Rect(-8, -6, 17, 15)], [Rect(150, 90, 8, 8)],
                    [Rect(10, -20, 8, 8)], [Rect(33, 2, 5, 4), Rect(0, 25, 3, 40)]):  # fmt: skip
        with Image.open(io.BytesIO(blank_png(buf.getvalue(), regions))) as img:
            painted = (np.asarray(img.convert("RGB")) == PAINT).all(axis=-1)
        blanked = blank(np.full((30, 40), 255, np.uint8), regions) == 0
        assert (painted == blanked).all(), regions


def test_the_task_area_of_a_lone_click_is_its_target_patch() -> None:
    click = Action(ActionKind.CLICK, x=FIELD_CLICK[0], y=FIELD_CLICK[1])
    built = build_steps([capture(screen(), click, FIELD_CLICK)], None, {}, 0, None, [])
    assert built.steps[0].effect is None
    assert built.area == Rect(FIELD_CLICK[0] - 32, FIELD_CLICK[1] - 32, 64, 64)


def test_echoes_are_the_typed_text_elsewhere_once_each_never_the_field() -> None:
    from mmcli.screen.echoes import find_echoes

    typed = Rect(204, 176, 72, 16)  # the text in the field
    shown = Frame.from_image(screen(text="Ada Lovelace")).small
    echoed = screen(text="Ada Lovelace")
    ImageDraw.Draw(echoed).rectangle([300, 470, 500, 495], fill="white")
    ImageDraw.Draw(echoed).text((304, 478), "Ada Lovelace", fill="black")
    later = [shown, Frame.from_image(echoed).small, Frame.from_image(echoed).small]
    found = find_echoes(shown, typed, later)
    assert [j for j, _ in found] == [1]  # on the screen it first shows on, once
    (_, rect) = found[0]
    assert rect.intersects(Rect(304, 478, 60, 10)) and not rect.intersects(typed.grow(8))
    assert find_echoes(shown, Rect(200, 175, 20, 20), later) == []  # too short to look for


@pytest.mark.parametrize(("size", "dy"), [(15, 0), (15, 1), (15, 2), (15, 3), (13, 2)])
def test_an_echo_off_the_fields_grid_offset_is_found_at_full_resolution(size: int, dy: int) -> None:
    """The same text 1 px right of the field's offset of the 4 px downscale grid (and 0-3
    px below it) is another picture at a quarter of the size: the typing's
    full-resolution detail finds it where the later screen changed, though a clock
    elsewhere ticked while it was typed; another word and a long edge drawn beside it
    are not taken for it."""
    from PIL import ImageFont

    from mmcli.screen.echoes import Detail, find_echoes

    font = ImageFont.load_default(size=size)
    before = screen()
    after = screen(clock="12:00:02")  # a clock ticked while the name was typed
    ImageDraw.Draw(after).text((206, 178), "Ada Lovelace", fill="black", font=font)
    echoed = after.copy()
    ImageDraw.Draw(echoed).rectangle([300, 468, 760, 500], fill="#d9d9d9")
    ImageDraw.Draw(echoed).text((323, 478 + dy), "Ada Lovelace", fill="black", font=font)
    ImageDraw.Draw(echoed).text((523, 478 + dy), "Ada Lavelace", fill="black", font=font)
    ImageDraw.Draw(echoed).rectangle([300, 501, 760, 530], fill="black")  # a long edge
    frame, small_before = Frame.from_image(after), Frame.from_image(before).small
    typed = box_of(np.abs(frame.small.astype(int) - small_before)[:100, :200] > 12, 0, 0)
    assert typed is not None
    shown = Frame.from_image(echoed)
    later = [shown.small]
    detail = Detail.of(small_before, frame)
    assert detail is not None and typed in [r for r, _ in detail.pieces]
    changes = [Detail.of(frame.small, shown)]
    found = find_echoes(frame.small, typed, later, detail, changes)
    assert len(found) == 1, found
    # Where the text stands, as the typing's own box: all its ink, a cell or two more.
    box = ImageDraw.Draw(echoed).textbbox((323, 478 + dy), "Ada Lovelace", font=font)
    left, top, right, bottom = box
    at = found[0][1]
    assert at.x <= left and right <= at.right <= right + 12, (at, box)
    assert at.y <= top and bottom <= at.bottom <= bottom + 8, (at, box)
    # A longer value shows within the mask grown from it, as over the field.
    from mmcli.screen.analysis import SPILL, ground_reach

    assert ground_reach(shown.small, at, 80, 160, SPILL)[1] >= 80
    assert find_echoes(frame.small, typed, later, detail, [None]) == []  # seen only where new
    ImageDraw.Draw(after).rectangle([0, 0, 1200, 500], fill="white")  # over 1/4 of it
    kept = Detail.of(small_before, Frame.from_image(after))
    assert kept is not None and [r for r, _ in kept.pieces] == [Rect(1732, 28, 4, 4)]  # clock


def test_typed_text_found_in_more_than_echo_max_new_places_is_a_pattern() -> None:
    """A typed value the later screen shows in more places than `ECHO_MAX` (a list
    filled with it) gives no echo: masks over all of them would hide what must be
    checked."""
    from PIL import ImageFont

    from mmcli.screen.echoes import ECHO_MAX, Detail, find_echoes

    font = ImageFont.load_default(size=15)
    before = screen()
    after = screen()
    ImageDraw.Draw(after).text((206, 178), "Ada Lovelace", fill="black", font=font)
    echoed = after.copy()
    ImageDraw.Draw(echoed).rectangle([300, 400, 800, 700], fill="#d9d9d9")
    for k in range(ECHO_MAX + 1):
        at = (323 + k % 2, 420 + 50 * k)
        ImageDraw.Draw(echoed).text(at, "Ada Lovelace", fill="black", font=font)
    frame, small_before = Frame.from_image(after), Frame.from_image(before).small
    typed = box_of(np.abs(frame.small.astype(int) - small_before)[:100, :200] > 12, 0, 0)
    assert typed is not None
    shown = Frame.from_image(echoed)
    detail = Detail.of(small_before, frame)
    changes = [Detail.of(frame.small, shown)]
    assert find_echoes(frame.small, typed, [shown.small], detail, changes) == []
    ImageDraw.Draw(echoed).rectangle([300, 610, 800, 700], fill="#d9d9d9")  # ECHO_MAX left
    shown = Frame.from_image(echoed)
    changes = [Detail.of(frame.small, shown)]
    assert len(find_echoes(frame.small, typed, [shown.small], detail, changes)) == ECHO_MAX


# ---- find_echoes' bounds, on a plain downscaled screen ------------------------------------
# Typed text 9 cells wide and 2 tall at cell (10, 10) (px 40-76, 40-48), a caret standing in
# its first column and in its last two (before and after typing). The template is what
# lies between: 6 columns, the least `find_echoes` looks for.


def _typed_screen(width: int = 9, height: int = 2) -> tuple[np.ndarray, np.ndarray, Rect]:
    """(shown, the word without carets, the typed region)."""
    rng = np.random.default_rng(3)
    word = rng.integers(100, 160, (height, width), np.uint8)
    shown = np.full((60, 100), 255, np.uint8)
    shown[10 : 10 + height, 10 : 10 + width] = word
    for column in (10, 10 + width - 2, 10 + width - 1):
        shown[10 : 10 + height, column] = 0
    return shown, word, Rect(40, 40, 4 * width, 4 * height)


def _echoed(shown: np.ndarray, word: np.ndarray, column: int, row: int = 40) -> np.ndarray:
    later = shown.copy()
    later[row : row + word.shape[0], column : column + word.shape[1]] = word
    return later


def test_an_echo_is_found_from_the_text_between_the_carets() -> None:
    from mmcli.screen.echoes import find_echoes

    shown, word, typed = _typed_screen()
    found = find_echoes(shown, typed, [_echoed(shown, word, 50)])
    assert found == [(0, Rect(50 * 4, 40 * 4, 9 * 4, 2 * 4))]  # the whole word's box


@pytest.mark.parametrize(("width", "height"), [(8, 2), (9, 1)])
def test_text_too_narrow_or_too_low_is_not_looked_for(width: int, height: int) -> None:
    from mmcli.screen.echoes import find_echoes

    shown, word, typed = _typed_screen(width, height)
    assert find_echoes(shown, typed, [_echoed(shown, word, 50)]) == []


def test_an_echo_8_px_from_the_field_or_nearer_is_the_field() -> None:
    """The template starts one column into the word: an echo whose word starts at column
    20 (px 80) matches at px 84, 8 px right of the typed text (which ends at px 76); its
    box is the word's own, from px 80."""
    from mmcli.screen.echoes import find_echoes

    shown, word, typed = _typed_screen()
    assert find_echoes(shown, typed, [_echoed(shown, word, 20, row=10)]) == [
        (0, Rect(80, 40, 36, 8))
    ]
    assert find_echoes(shown, typed, [_echoed(shown, word, 19, row=10)]) == []


def test_the_task_area_stays_in_the_window_the_task_acted_in() -> None:
    """A notification that vanished far away while a step was recorded changed the screen
    too; where the window system names the task's window, it is no part of the task."""
    from dataclasses import replace

    from mmcli.screen.windows import WindowRef

    with_note = screen()
    ImageDraw.Draw(with_note).rectangle([1500, 900, 1800, 980], fill="yellow")
    click = Action(ActionKind.CLICK, x=FIELD_CLICK[0], y=FIELD_CLICK[1])
    submit = Action(ActionKind.CLICK, x=160, y=415)
    captures = [capture(with_note, click, FIELD_CLICK), capture(screen(), submit, (160, 415))]
    far = Rect(1500, 900, 300, 80)

    unknown = build_steps(captures, None, {}, 0, None, []).area
    assert unknown is not None and unknown.intersects(far)  # no window system: as before

    form = WindowRef("form.Form", Rect(100, 100, 561, 421))
    known = [replace(c, window=form) for c in captures]
    area = build_steps(known, None, {}, 0, None, []).area
    assert area is not None and not area.intersects(far)
    assert area.intersects(Rect(FIELD_CLICK[0], FIELD_CLICK[1], 1, 1))


def test_a_panel_that_changed_at_the_top_does_not_stretch_the_task_area() -> None:
    """A step that changed the task window's title bar and, at the same time, a taskbar
    button in a panel at the top of the screen (Xfce's): the two changes are one changed
    region (less than a block apart), but the desktop between them, above the title bar,
    is no part of the task."""
    from dataclasses import replace

    from mmcli.screen.windows import WindowRef

    def shown(button: bool, title: str) -> Image.Image:
        img = screen()
        draw = ImageDraw.Draw(img)
        draw.rectangle([100, 62, 660, 99], fill=title)  # the window manager's title bar
        if button:
            draw.rectangle([150, 2, 450, 24], fill="yellow")
        return img

    click = Action(ActionKind.CLICK, x=FIELD_CLICK[0], y=FIELD_CLICK[1])
    submit = Action(ActionKind.CLICK, x=160, y=415)
    form = WindowRef("form.Form", Rect(100, 100, 561, 421))
    captures = [
        replace(capture(shown(True, "#3060a0"), click, FIELD_CLICK), window=form),
        replace(capture(shown(False, "#a0a0a0"), submit, (160, 415)), window=form),
    ]
    area = build_steps(captures, None, {}, 0, None, []).area
    assert area is not None and not area.intersects(Rect(100, 0, 561, 60)), area
    assert area.intersects(Rect(100, 62, 561, 1))  # the title bar that changed
    assert area.intersects(Rect(FIELD_CLICK[0], FIELD_CLICK[1], 1, 1))


def test_a_picture_found_in_more_places_than_echoes_take_is_a_pattern() -> None:
    """A typed region whose picture is a spreadsheet's grid line matches on every row:
    that is no echo, and nothing is masked for it."""
    from mmcli.screen.echoes import ECHO_MAX, find_echoes

    shown, word, typed = _typed_screen()
    for count in (ECHO_MAX, ECHO_MAX + 1):
        later = shown
        for k in range(count):
            later = _echoed(later, word, 10 + 10 * (k % 8), row=20 + 4 * (k // 8))
        assert len(find_echoes(shown, typed, [later])) == (count if count <= ECHO_MAX else 0)


# ---- text the typing made appear elsewhere in another font --------------------------------
# A field line at rows 30-33 (px 120-135) where the typing wrote, and above it an input
# line, white between grey borders, at rows 10-12 (px 40-51) beside an icon that changed.


def _shown_elsewhere(
    echo: tuple[int, int] = (3, 8), icon_before: bool = True, border: bool = True, at: int = 28
) -> tuple[np.ndarray, np.ndarray, Rect]:
    """(before, after, what the typing wrote); `echo`: the new text's (rows, columns),
    from column `at`."""
    before = np.full((60, 100), 255, np.uint8)
    before[10:13, 20:24] = 90 if icon_before else 255  # an icon beside the input line
    if border:
        before[[9, 13], 26:40] = 223  # the input line's border above and below it
    after = before.copy()
    after[10:13, 20:24] = 40  # the icon changed (Calc's Σ = became X ✓)
    rows, cols = echo
    after[10 : 10 + rows, at : at + cols] = 60  # the value again, in another font
    after[30:34, 40:50] = 50  # the value in its field
    return before, after, Rect(160, 120, 40, 16)


def test_text_that_appeared_on_blank_ground_while_typing_is_an_echo() -> None:
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere()
    assert text_shown_elsewhere(before, after, typed, None) == [Rect(112, 40, 32, 12)]
    # Within the window typed into, when it is known; never outside it.
    assert text_shown_elsewhere(before, after, typed, Rect(100, 30, 300, 200)) != []
    assert text_shown_elsewhere(before, after, typed, Rect(150, 100, 200, 100)) == []


@pytest.mark.parametrize(
    ("echo", "why"),
    [((10, 8), "taller than the field's line: a list or a dialog"),
     ((3, 30), "wider than twice the typed text: not the value"),
     ((3, 1), "one stroke: a clock's digit changing")],
)  # fmt: skip
def test_what_is_no_line_of_the_value_is_no_echo(echo: tuple[int, int], why: str) -> None:
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere(echo)
    assert text_shown_elsewhere(before, after, typed, None) == [], why


def test_what_changed_where_something_was_drawn_is_no_echo() -> None:
    """The icon beside the input line changed too: it had something drawn before, so it
    is not text that appeared; drawn on blank ground it would count."""
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere(icon_before=False)
    found = text_shown_elsewhere(before, after, typed, None)
    assert Rect(80, 40, 16, 12) in found and Rect(112, 40, 32, 12) in found


def test_typing_s_effect_keeps_to_the_focused_line_of_a_region_over_two() -> None:
    """An input line 8 px above the field changed as the field did: one changed region,
    but the effect (and so the param's mask) is the field's line alone."""
    before = np.full((60, 100), 255, np.uint8)
    after = before.copy()
    after[27:29, 26:34] = 60  # the value again, two rows above the field's line
    after[31:34, 30:40] = 50  # the value in its field
    frame = Frame(bytes(400 * 240 * 4), 400, 240)
    cap = Capture(
        Action(ActionKind.TYPE, text="Ada"), before, patch_of(frame, 140, 130), (140, 130),
        (400, 240), datetime(2026, 11, 1, tzinfo=UTC),
    )  # fmt: skip
    assert effect_regions(cap, after, []) == [Rect(120, 124, 40, 12)]


def test_typing_into_a_dialog_a_hotkey_opened_is_found_in_the_window_with_the_keyboard() -> None:
    """The last click was on a menu item far below the dialog's field (GIMP: Flip, then
    Shift+Ctrl+E and the name): nothing changed on that line, so what the typing wrote is
    what changed on a line inside the window that had the keyboard, not the taskbar's
    button above it, nor the image window's title beside it."""
    before = np.full((60, 100), 255, np.uint8)
    after = before.copy()
    after[2:4, 28:33] = 60  # the taskbar's button, over no window
    after[10:12, 4:8] = 60  # the image window's title, left of the dialog
    after[17:19, 40:50] = 50  # the name in the dialog's field
    frame = Frame(bytes(400 * 240 * 4), 400, 240)
    cap = Capture(
        Action(ActionKind.TYPE, text="Ada"), before, patch_of(frame, 200, 200), (200, 200),
        (400, 240), datetime(2026, 11, 1, tzinfo=UTC),
        window=WindowRef("gimp.Gimp", Rect(80, 56, 300, 170)),
    )  # fmt: skip
    assert effect_regions(cap, after, []) == [Rect(160, 68, 40, 8)]
    # No window known: everything that changed, as before.
    cap.window = None
    assert len(effect_regions(cap, after, [])) == 3


@pytest.mark.parametrize("secret", [False, True])
def test_a_value_shown_again_in_another_font_is_masked_and_a_secret_painted(
    secret: bool,
) -> None:
    """The form shows the typed value again above the field, larger (another font, which
    no correlation with the field's text finds): it is masked in the steps after, and
    painted over in their thumbnails when the value is a secret."""
    from PIL import ImageFont

    def shown(text: str) -> Image.Image:
        img = screen(text=text)
        ImageDraw.Draw(img).text((300, 240), text, fill="black", font=ImageFont.load_default(13))
        return img

    import io
    from concurrent.futures import Future

    from mmcli.screen.paint import PAINT

    captures = typed_run(clock_ticks=False)
    captures[2] = capture(shown("Ada"), captures[2].action, (160, 415))
    thumbnail: Future[bytes] = Future()
    buf = io.BytesIO()
    shown("Ada").resize((480, 270)).save(buf, format="PNG")
    thumbnail.set_result(buf.getvalue())
    captures[2].thumbnail = thumbnail
    built = build_steps(captures, None, {"name": "Ada"}, 0, None, [], {"name"} if secret else None)
    echo = Rect(300, 244, 24, 12)
    assert any(echo.inside(m) for m in built.steps[2].fingerprint.masks)
    assert not any(m.intersects(Rect(120, 300, 80, 30)) for m in built.steps[2].fingerprint.masks)
    name = built.steps[2].thumbnail
    assert name is not None
    kept = Image.open(io.BytesIO(built.thumbnails[name])).convert("RGB")
    painted = [kept.getpixel((x, y)) == PAINT for x in range(75, 81) for y in range(61, 64)]
    assert all(painted) if secret else not any(painted)


@pytest.mark.parametrize(
    ("echo", "found"),
    [((6, 8), True), ((7, 8), False), ((3, 24), True), ((3, 25), False), ((3, 2), True)],
    ids=["as-tall-as-the-field-s-change-plus-8-px", "taller", "twice-as-wide-plus-16-px",
         "wider", "two-downscaled-pixels-wide"],
)  # fmt: skip
def test_an_echo_s_size_bounds_hold_to_the_pixel(echo: tuple[int, int], found: bool) -> None:
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere(echo, border=False)
    rows, cols = echo
    expected = [Rect(112, 40, 4 * cols, 4 * rows)] if found else []
    assert text_shown_elsewhere(before, after, typed, None) == expected


def test_text_that_appeared_on_the_field_s_own_line_is_no_echo() -> None:
    """A counter ("12 characters") the field shows on its own line, 48 px right of the
    text: the typing's own doing, on the line its mask covers."""
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere()
    after[31:34, 62:70] = 60
    assert text_shown_elsewhere(before, after, typed, None) == [Rect(112, 40, 32, 12)]


def test_an_echo_at_the_screen_s_edge_takes_its_ground_from_the_side_it_has() -> None:
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere((3, 4), at=96)
    assert Rect(384, 40, 16, 12) in text_shown_elsewhere(before, after, typed, None)


def test_an_echo_lower_than_the_icon_beside_it_is_cut_to_its_own_rows() -> None:
    from mmcli.screen.echoes import text_shown_elsewhere

    before, after, typed = _shown_elsewhere((3, 8), border=False)
    after[10:13, 28:36] = 255
    after[11:13, 28:36] = 60  # two rows, one lower than the icon's top
    assert text_shown_elsewhere(before, after, typed, None) == [Rect(112, 44, 32, 8)]


def test_a_param_s_mask_keeps_to_its_field() -> None:
    """The value's mask reaches as far as the field's blank ground, for a longer value at
    replay, and stops at the field's border: the label beside it is checked still."""
    built = build_steps(typed_run(clock_ticks=False), None, {"name": "Ada"}, 0, None, [])
    (mask,) = built.steps[2].fingerprint.masks
    label = Rect(120, 178, 30, 12)  # "Name", 50 px left of the field
    assert not mask.intersects(label)
    assert 196 <= mask.x <= 206 and 300 < mask.right <= 504  # the field is 200 to 500


def cells(values: dict[int, str], right: tuple[int, ...] = (), pad: int = 4) -> Image.Image:
    """A spreadsheet row: white cells 100 px wide between light grey grid lines; the value
    of each cell in `right` right-aligned."""
    img = Image.new("RGB", (640, 120), "white")
    d = ImageDraw.Draw(img)
    for x in range(0, 640, 100):
        d.line([x, 0, x, 120], fill="#c0c0c0")
    d.line([0, 40, 640, 40], fill="#c0c0c0")
    d.line([0, 60, 640, 60], fill="#c0c0c0")
    for cell, text in values.items():
        width = round(d.textlength(text))
        d.text((cell * 100 + (100 - pad - width if cell in right else 4), 44), text, fill="black")
    return img


@pytest.mark.parametrize("offset", [0, 4], ids=["on-the-text", "echo-box-found-4-px-off"])
def test_a_value_s_ground_ends_at_the_grid_lines_of_its_cell(offset: int) -> None:
    from mmcli.screen.analysis import SPILL, changed_within, ground_reach
    from mmcli.screen.paint import TEXT_GROW, TEXT_GROW_LEFT, text_mask

    before = Frame.from_image(cells({1: "Anna"})).small
    after = Frame.from_image(cells({1: "Anna", 2: "5000"}, right=(2,))).small
    text = changed_within(before, after, Rect(200, 40, 100, 20))
    assert text is not None
    shifted = text.moved(offset, 0)
    spill = SPILL if offset else 0  # an echo's box, found by its picture
    mask = text_mask(shifted, ground_reach(after, shifted, TEXT_GROW_LEFT, TEXT_GROW, spill))
    assert mask.x >= 200 - 2 and mask.right <= 300 + 4 + 2  # cell C, grid lines at most
    assert mask.x <= text.x - 40  # room for a longer number, to the cell's left edge
    assert not mask.intersects(Rect(104, 44, 30, 12))  # "Anna" in the cell to the left


def test_a_value_s_ground_is_read_on_the_rows_of_its_letters() -> None:
    """A status line's text box found with the typed field's height takes in the line's
    sunken border above the letters: that row is the same beside the text, and the ground
    still runs on to the line's end."""
    from mmcli.screen.analysis import ground_reach

    img = Image.new("RGB", (640, 60), "#d9d9d9")
    d = ImageDraw.Draw(img)
    d.rectangle([4, 20, 600, 42], outline="#808080")  # the status line, sunken
    d.text((8, 26), "Saved application for Ada Lovelace", fill="black")
    small = Frame.from_image(img).small
    name = Rect(104, 16, 64, 24)  # the name, and the border row above it
    left, right = ground_reach(small, name, 80, 160)
    assert right == 160 and left <= 8  # "for " just before it is other content


def test_a_value_s_mask_stops_at_the_number_that_ends_at_its_cell_s_edge() -> None:
    """A spreadsheet: a number right-aligned in A up to the grid line, the name typed in
    B just after it. The name's mask may take in the grid line, not the number."""
    from mmcli.screen.analysis import changed_within, ground_reach
    from mmcli.screen.paint import TEXT_GROW, TEXT_GROW_LEFT, text_mask

    empty = Frame.from_image(cells({})).small
    number = Frame.from_image(cells({0: "5000"}, right=(0,), pad=1)).small
    both = Frame.from_image(cells({0: "5000", 1: "Anna"}, right=(0,), pad=1)).small
    in_a = changed_within(empty, number, Rect(0, 40, 100, 20))
    name = changed_within(number, both, Rect(100, 40, 100, 20))
    assert in_a is not None and name is not None
    mask = text_mask(name, ground_reach(both, name, TEXT_GROW_LEFT, TEXT_GROW))
    assert mask.x >= in_a.right - 2  # the mask's 2 px margin at most
    assert mask.right >= 200  # the rest of B: room for a longer name


def test_a_value_s_ground_is_compared_row_for_row_over_a_box_taller_than_its_line() -> None:
    """notepad under Wine: what typing changed is a column the height of the page, down
    over a status bar and a scroll bar's row. Each row keeps its own ground: the white
    page beside the name, the grey bars below it, all the way right."""
    from mmcli.screen.analysis import ground_reach

    img = Image.new("RGB", (640, 240), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([0, 180, 640, 196], fill="#d4d0c8")  # a scroll bar's row
    d.line([0, 200, 640, 200], fill="#808080")
    d.rectangle([0, 201, 640, 240], fill="#ece9d8")  # a status bar
    d.line([0, 0, 0, 240], fill="#808080")  # the page's edge, in the box
    d.text((4, 4), "Ada", fill="black")
    small = Frame.from_image(img).small
    left, right = ground_reach(small, Rect(0, 0, 52, 236), 80, 160)
    assert (left, right) == (0, 160)


def test_a_typed_value_s_mask_takes_no_letters_beside_its_box() -> None:
    """What typing changed is the value's box exactly: letters right beside it are other
    content (a label's), which its mask leaves out."""
    from mmcli.screen.analysis import changed_within, ground_reach

    before = Frame.from_image(Image.new("RGB", (320, 60), "white"))
    img = Image.new("RGB", (320, 60), "white")
    ImageDraw.Draw(img).text((80, 20), "Name:Ada", fill="black")
    after = Frame.from_image(img).small
    label = ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength("Name:")
    box = changed_within(before.small, after, Rect(80, 0, 240, 60))
    assert box is not None
    value = Rect(80 + round(label) + 4, box.y, box.right - 80 - round(label) - 4, box.h)
    assert ground_reach(after, value, 80, 160)[0] == 0


def test_the_caret_blinking_after_a_typed_value_is_no_edge_of_its_field() -> None:
    """What typing changed may leave out the caret (learned as volatile, or off when the
    field was kept before the typing), which shows right after the text once typed: the
    field before the typing shows its ground whole, and the mask reaches over it."""
    from mmcli.capture.steps import _value_mask
    from mmcli.screen.analysis import changed_within

    before = Frame.from_image(form_screen()).small
    typed = Frame.from_image(form_screen(text="Ada")).small
    after = Frame.from_image(form_screen(text="Ada", caret=True)).small
    text = changed_within(before, typed, Rect(200, 175, 300, 20))
    assert text is not None
    assert _value_mask(text, after).right <= text.right + 8  # the caret stops it there
    assert _value_mask(text, before, after).right >= text.right + 160  # the most it takes


def test_full_resolution_search_looks_at_lines_of_the_texts_height_within_a_limit() -> None:
    """Typed text is looked for on the lines of a piece about its height: inside a
    dialog's frame, where every row crosses the frame's sides; not in a picture with no
    such line (noise: nothing searched); and no further once the limit is reached."""
    from PIL import ImageFont

    from mmcli.screen.echoes import Detail, _ink

    font = ImageFont.load_default(size=15)
    typed = Image.new("L", (200, 24), 255)
    ImageDraw.Draw(typed).text((3, 3), "Ada Lovelace", fill=0, font=font)
    cut = _ink(np.asarray(typed))
    assert cut is not None
    text = cut[0]
    dialog = Image.new("L", (400, 160), 214)
    draw = ImageDraw.Draw(dialog)
    draw.rectangle([0, 0, 399, 159], outline=0)
    draw.rectangle([2, 2, 397, 157], outline=255)
    for row in range(4):
        line = "Saved application for Ada Lovelace" if row == 2 else f"Line {row} of the dialog"
        draw.text((20 + row, 12 + 30 * row), line, fill=0, font=font)
    piece = Detail(((Rect(500, 300, 400, 160), np.asarray(dialog)),))
    hits, searched = piece.find(text, 10**6)
    assert len(hits) == 1 and 4 * 400 * 12 <= searched <= 4 * 400 * 30, (hits, searched)
    right = draw.textbbox((22, 72), "Saved application for ", font=font)[2]
    assert abs(hits[0].x - (500 + right)) <= 4 and 300 + 70 <= hits[0].y <= 300 + 76, hits
    assert piece.find(text, 1)[0] == []  # one line searched, not the third
    noise = np.random.default_rng(0).integers(0, 255, (160, 400), dtype=np.uint8)
    assert Detail(((Rect(0, 0, 400, 160), noise),)).find(text, 10**6) == ([], 0)


def test_typing_is_cut_where_it_leaves_its_field_unless_a_value_crosses() -> None:
    assert spanned(["5000\t", "Ann", "a\t", "1100\t"], ["Anna"]) == [[0], [1, 2], [3]]
    assert spanned(["A", "n", "n", "a"], ["Anna"]) == [[0, 1, 2, 3]]  # key by key
    assert spanned(["jo", "hn@", "x.com"], []) == [[0, 1, 2]]  # chunks of one field
    assert spanned(["Anna\n", "Anna\n"], ["Anna"]) == [[0], [1]]
    assert spanned(["a\n", "b"], ["a\nb"]) == [[0, 1]]  # a value across the Return
    assert spanned([], ["x"]) == []


def test_sixty_values_typed_by_sixty_calls_stay_sixty_steps() -> None:
    """Cells filled by calls of their own (each ending with Return) are each checked
    before they are typed; a value typed in pieces becomes one `type`."""
    img = screen()
    calls = [Action(ActionKind.TYPE, text=f"{n}\n") for n in range(60)]
    name = [Action(ActionKind.PRESS, keys=("G",)), Action(ActionKind.TYPE, text="race\n")]
    captures = [capture(img, a, FIELD_CLICK) for a in [*calls, *name]]
    joined = join_typing(captures, ["Grace"])
    assert [c.action.text for c in joined] == [f"{n}\n" for n in range(60)] + ["Grace\n"]


def test_a_value_typed_with_no_known_field_is_masked_line_by_line() -> None:
    """Typing whose field is not known (no click before it): what it changed is the text
    on its line, the window's title (an edited document's star) and the status bar (the
    caret's column). Each is masked on its own line; the window between them stays
    checked (one rectangle around all three left most of an editor unchecked)."""

    def editor(text: str, title: str, status: str) -> Image.Image:
        img = Image.new("RGB", (800, 600), "white")
        d = ImageDraw.Draw(img)
        d.rectangle([0, 0, 799, 24], fill="navy")
        d.text((10, 6), title, fill="white")
        d.text((20, 200), text, fill="black")
        d.rectangle([0, 570, 799, 599], fill="lightgray")
        d.text((700, 580), status, fill="black")
        return img

    typing = Action(ActionKind.TYPE, text="Grace Hopper")
    save = Action(ActionKind.CLICK, x=400, y=300)
    before = Frame.from_image(editor("", "notes", "Col 1"))
    after = Frame.from_image(editor("Grace Hopper", "*notes", "Col 13"))
    when = datetime(2026, 11, 1, tzinfo=UTC)
    captures = [
        Capture(typing, before.small, None, (400, 300), (800, 600), when),
        Capture(save, after.small, patch_of(after, 400, 300), (400, 300), (800, 600), when),
    ]
    built = build_steps(captures, ended_on(after), {"name": "Grace Hopper"}, 0, None, [])
    assert built.steps[0].action.text == "{{name}}"
    masks = built.steps[1].fingerprint.masks
    assert len(masks) == 3, masks
    assert any(m.intersects(Rect(20, 200, 60, 10)) for m in masks)  # the typed line
    middle = Rect(0, 300, 800, 200)  # the document below the typed line
    assert not any(m.intersects(middle) for m in masks)
    assert sum(m.w * m.h for m in masks) < 800 * 600 // 5
