"""Each rule of the `regions` matcher, on synthetic screens, through `compare` as replay
calls it (recorded screens as references)."""

from __future__ import annotations

from PIL import Image, ImageDraw

from mmcli.screen.analysis import fingerprint_of
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Policy, References, compare
from tests.helpers import form_screen

FIELD_CLICK = (350, 185)
"""A click in the middle of the form's Name field (the field spans x 200-500, y 175-195)."""
SUBMIT = (160, 415)
AREA = Rect(100, 100, 560, 420)
FIELD = Rect(200, 175, 300, 20)


def glyph(image: Image.Image, x: int, width: int) -> Image.Image:
    """A character-like mark `width` px wide in the Name field, at `x`."""
    out = image.copy()
    d = ImageDraw.Draw(out)
    d.rectangle([x, 180, x + width - 1, 191], fill="black")
    if width > 2:
        d.rectangle([x, 180, x + width - 1, 181], fill="white")  # not a solid bar
    return out


def check(
    recorded_img: Image.Image,
    live_img: Image.Image,
    target: tuple[int, int],
    *,
    path: tuple[Image.Image, ...] = (),
    pointer_step: bool = True,
    typed: tuple[Rect, ...] = (),
    policy: Policy = Policy.DEFAULT,
):
    """`typed`: where the task types between the path's screens and this step's."""
    recorded = Frame.from_image(recorded_img)
    fp = fingerprint_of(recorded, target)
    refs = References.prepare(
        recorded.small, [Frame.from_image(p).small for p in path], [], [typed] * len(path)
    )
    return compare(
        fp,
        Frame.from_image(live_img),
        policy,
        area=AREA,
        references=refs,
        pointer_step=pointer_step,
    )


def test_a_caret_appearing_in_a_field_is_excused_at_a_pointer_step() -> None:
    base = form_screen()
    assert check(base, glyph(base, 220, 1), SUBMIT).ok


def test_one_glyph_is_not_a_caret_though_as_small_once_downscaled() -> None:
    base = form_screen()
    live = glyph(base, 220, 6)
    verdict = check(base, live, SUBMIT)
    assert not verdict.ok, verdict.excused
    assert verdict.differences[0].region.intersects(FIELD)


def test_a_glyph_in_the_focused_field_is_not_its_caret_at_a_keyboard_step() -> None:
    base = form_screen()
    live = glyph(base, 220, 6)
    assert not check(base, live, FIELD_CLICK, pointer_step=False).ok
    assert check(base, glyph(base, 220, 1), FIELD_CLICK, pointer_step=False).ok


def test_text_the_task_types_later_is_not_excused_as_a_seen_state() -> None:
    """The field already shows what the task is about to type: typing it again would
    submit "AdaAda". The later step's screen shows that very state."""
    empty, filled = form_screen(), form_screen(text="Ada")
    # Without knowing where the task types, the state-seen-elsewhere rule excuses it.
    assert check(empty, filled, SUBMIT, path=(filled,)).ok
    # Knowing it (the typing step's effect), it does not.
    verdict = check(empty, filled, SUBMIT, path=(filled,), typed=(FIELD,))
    assert not verdict.ok
    assert "state the task shows" not in " ".join(verdict.excused)


def test_typed_text_that_vanished_is_not_excused_as_an_earlier_state() -> None:
    """The recording typed "Ada" before this step; the live field is empty, as at an
    earlier step: submitting now would send an empty name."""
    empty, filled = form_screen(), form_screen(text="Ada")
    assert not check(filled, empty, SUBMIT, path=(empty,), typed=(FIELD,)).ok


def test_a_seen_state_elsewhere_is_still_excused() -> None:
    """A focus ring or hover on another widget, in a state the task shows at another
    step, stays harmless even when the task types into a field."""
    base = form_screen()
    hovered = form_screen(button_color="#bbbbbb")
    assert check(base, hovered, FIELD_CLICK, path=(hovered,), typed=(FIELD,)).ok


def test_a_focus_ring_on_a_field_typed_into_later_is_still_a_seen_state() -> None:
    """The state (a focus ring) is shown at a step before the typing: no typing lies
    between it and this step, so it is harmless."""
    base = form_screen()
    ringed = base.copy()
    ImageDraw.Draw(ringed).rectangle([198, 173, 502, 197], outline="#3070f0", width=2)
    assert check(base, ringed, SUBMIT, path=(ringed,)).ok


def test_a_blinking_caret_is_not_learned_as_volatile_but_a_clock_is() -> None:
    from mmcli.backends.fake import FakeBackend
    from mmcli.capture.recorder import Recorder

    base = form_screen()
    d = ImageDraw.Draw(base)
    d.text((1700, 20), "12:00:01", fill="white")
    phases = [glyph(base, 220, 1), base]
    ticked = base.copy()
    ImageDraw.Draw(ticked).rectangle([1700, 18, 1760, 34], fill="black")
    ImageDraw.Draw(ticked).text((1700, 20), "12:00:02", fill="white")
    backend = FakeBackend(phases[0])
    recorder = Recorder(backend)
    recorder.idle.note_volatile(Frame.from_image(phases[0]), Frame.from_image(phases[1]))
    assert recorder.volatile == []
    recorder.idle.note_volatile(Frame.from_image(base), Frame.from_image(ticked))
    assert len(recorder.volatile) == 1 and recorder.volatile[0].x >= 1680


def test_part_of_a_digit_changing_is_not_a_caret() -> None:
    """A clock digit 3 -> 8 changes only its left strokes: thin, caret-sized, but ink on
    both sides of the change, where a blinking caret has none in its off phase."""
    from mmcli.capture.settling import is_caret

    base = form_screen()
    three, eight = glyph(base, 220, 1), glyph(base, 222, 1)
    region = Rect(218, 176, 8, 20)
    assert not is_caret(Frame.from_image(three), Frame.from_image(eight), region)
    assert is_caret(Frame.from_image(base), Frame.from_image(three), region)
    assert is_caret(Frame.from_image(three), Frame.from_image(base), region)


def test_a_caret_beside_the_field_border_is_a_caret() -> None:
    """An empty field's caret stands a pixel or two from its border: what changes is the
    caret alone, though the border shares its downscaled column."""
    from mmcli.capture.settling import is_caret

    base = form_screen()
    caret = glyph(base, 202, 1)
    assert is_caret(Frame.from_image(caret), Frame.from_image(base), Rect(200, 176, 8, 20))


def test_the_task_area_margin_never_reaches_into_a_panel() -> None:
    """A taskbar button appearing just below the task area (a new window far away) is in
    the desktop's panel: never part of the task, however close."""
    base = form_screen()
    live = base.copy()
    ImageDraw.Draw(live).rectangle([200, 530, 260, 545], fill="white")  # a taskbar button
    recorded = Frame.from_image(base)
    fp = fingerprint_of(recorded, SUBMIT)
    refs = References.prepare(recorded.small, [], [])
    kwargs = {"area": AREA, "references": refs}
    assert not compare(fp, Frame.from_image(live), **kwargs).ok  # 48 px margin: inside
    panel_above = Rect(0, 0, 1920, 528)  # the work area ends where the panel starts
    assert compare(fp, Frame.from_image(live), workarea=panel_above, **kwargs).ok
    panel_far_below = Rect(0, 0, 1920, 1040)  # the margin stays whole above a panel far away
    assert not compare(fp, Frame.from_image(live), workarea=panel_far_below, **kwargs).ok


def test_a_tick_too_faint_when_downscaled_is_learned_as_volatile() -> None:
    """A tick that changes one stroke of one digit (a few pixels) is below the
    downscaled threshold; the next tick the matcher sees may change several digits."""
    from mmcli.backends.fake import FakeBackend
    from mmcli.capture.recorder import Recorder

    base = form_screen()
    ImageDraw.Draw(base).text((1700, 20), "12:00:07", fill="white")
    ticked = base.copy()
    shade = base.getpixel((1745, 26))[0]
    shade = shade + 150 if shade < 128 else shade - 150  # < 12 levels once downscaled
    ticked.putpixel((1745, 26), (shade, shade, shade))
    before, after = Frame.from_image(base), Frame.from_image(ticked)
    recorder = Recorder(FakeBackend(base))
    recorder.idle.note_volatile(before, after)
    assert len(recorder.volatile) == 1 and recorder.volatile[0].intersects(Rect(1745, 26, 1, 1))


def _after_text(text: str, bar: int, on: bool) -> Image.Image:
    """The Name field holding `text`, with a caret-like bar `bar` px wide right against
    its last glyph when `on`."""
    image = form_screen(text=text)
    field = image.crop((FIELD.x + 1, FIELD.y + 1, FIELD.right - 1, FIELD.bottom - 1))
    ink = [
        x
        for x in range(field.width)
        if min(field.getpixel((x, y))[0] for y in range(field.height)) < 128
    ]
    x = FIELD.x + 1 + max(ink) + 1
    where = Rect(x, FIELD.y + 2, bar, FIELD.h - 4)
    if on:
        ImageDraw.Draw(image).rectangle([x, where.y, x + bar - 1, where.bottom - 1], fill="black")
    return image


def test_a_caret_right_against_the_last_glyph_is_excused_in_either_phase() -> None:
    """After typing, the caret touches the last glyph: the live ink there is not
    caret-thin, yet what changed is one thin bar, line tall, on one screen only."""
    off, on = _after_text("Ann", 2, on=False), _after_text("Ann", 2, on=True)
    assert check(off, on, SUBMIT).ok
    assert check(on, off, SUBMIT).ok
    assert check(off, on, FIELD_CLICK, pointer_step=False).ok


def test_a_wide_mark_right_against_the_text_is_not_a_caret() -> None:
    off, wide = _after_text("Ann", 5, on=False), _after_text("Ann", 5, on=True)
    assert not check(off, wide, SUBMIT).ok
    assert not check(wide, off, SUBMIT).ok


def test_a_glyph_replaced_beside_the_caret_is_not_a_caret() -> None:
    """Ink taken away and ink added in the same place: another glyph, not a blink."""
    assert not check(form_screen(text="Ann"), form_screen(text="Amn"), SUBMIT).ok
    assert not check(form_screen(text="Ann"), form_screen(text="Ana"), SUBMIT).ok


def _marks(*bars: tuple[int, int, int]) -> Image.Image:
    """The Name field holding "Ann", with black bars (x, width, height) drawn from the
    field's top row of text."""
    image = form_screen(text="Ann")
    d = ImageDraw.Draw(image)
    for x, width, height in bars:
        d.rectangle([x, 179, x + width - 1, 179 + height - 1], fill="black")
    return image


def test_a_thin_mark_that_moved_is_not_a_blink() -> None:
    """Ink gone at one column and come at another: both ways at once, not a caret."""
    assert not check(_marks((243, 1, 14)), _marks((245, 1, 14)), SUBMIT).ok


def test_two_thin_strokes_apart_are_not_a_caret() -> None:
    """Each stroke is caret-thin; together they span three downscaled columns."""
    assert not check(_marks(), _marks((243, 1, 14), (249, 1, 14)), SUBMIT).ok


def test_a_short_mark_is_not_a_caret() -> None:
    """A dot or a comma is thin, but a caret is a text line tall."""
    assert not check(_marks(), _marks((244, 2, 3)), SUBMIT).ok
    assert check(_marks(), _marks((244, 2, 14)), SUBMIT).ok


def test_a_bar_with_faint_ink_beside_it_is_not_a_bare_caret() -> None:
    """Ink too faint to count as changed on its own, one downscaled pixel beside the bar
    (the thin part of a glyph), still makes the change wider than a caret."""
    live = _marks((247, 2, 14))  # across two downscaled columns
    live.putpixel((242, 185), (120, 120, 120))  # in the column before them
    assert not check(_marks(), live, SUBMIT).ok


def lit(image: Image.Image, count: int) -> Image.Image:
    """`count` small widgets (check boxes, far enough apart to be separate regions) drawn
    in their highlighted state."""
    out = image.copy()
    d = ImageDraw.Draw(out)
    for i in range(count):
        x = 130 + 120 * i
        d.rectangle([x, 460, x + 40, 480], fill="#3070f0", outline="black")
    return out


def test_at_most_three_regions_are_excused_as_seen_states() -> None:
    """Each widget is in a state the task shows at another step, but so many at once is
    a different screen: only three of them are excused."""
    base = form_screen()
    path = (lit(base, 4),)
    ok = check(base, lit(base, 3), SUBMIT, path=path)
    assert ok.ok and len(ok.excused) == 3
    verdict = check(base, lit(base, 4), SUBMIT, path=path)
    assert not verdict.ok
    assert len(verdict.differences) == 1 and len(verdict.excused) == 3


def test_strict_excuses_nothing_default_and_loose_excuse_what_is_harmless() -> None:
    """A caret, a state seen at another step, a change far outside the task area: each
    harmless under `default` and `loose`, each a difference under `strict`."""
    base = form_screen()
    hovered = form_screen(button_color="#bbbbbb")
    corner = base.copy()
    ImageDraw.Draw(corner).rectangle([1700, 1000, 1800, 1040], fill="white")
    cases = {
        "caret": (glyph(base, 220, 1), SUBMIT, ()),
        "seen state": (hovered, FIELD_CLICK, (hovered,)),
        "outside the area": (corner, SUBMIT, ()),
    }
    for name, (live, target, path) in cases.items():
        for policy in (Policy.DEFAULT, Policy.LOOSE):
            verdict = check(base, live, target, path=path, policy=policy)
            assert verdict.ok and len(verdict.excused) == 1, (name, policy)
        strict = check(base, live, target, path=path, policy=Policy.STRICT)
        assert not strict.ok and strict.excused == (), name


def test_a_change_on_the_target_is_never_a_seen_state() -> None:
    """A check box at the target already ticked, as the task shows it at a later step:
    too small a change for the target's own tolerance, never excused as harmless."""
    base = form_screen()
    ticked = base.copy()
    ImageDraw.Draw(ticked).rectangle([156, 412, 163, 419], fill="black")
    verdict = check(base, ticked, SUBMIT, path=(ticked,))
    assert not verdict.ok, verdict.excused
    assert verdict.differences[0].measure == "changed region on the target (px)"


def test_a_character_that_vanished_from_a_field_is_not_a_caret_off_phase() -> None:
    """The recording's field read "John"; the live one reads "Joh". Where the "n" was,
    the live screen has no ink, as a caret in its off phase would."""
    verdict = check(form_screen(text="John"), form_screen(text="Joh"), SUBMIT)
    assert not verdict.ok, verdict.excused


def test_a_caret_against_the_last_glyph_typed_is_a_caret() -> None:
    """ "Núñez|" on a VNC desktop: the z's bars reach into the caret's columns, so those
    columns hold ink in both blink phases. Learned as "changing on its own", the whole
    field was masked (58 % of the task area unchecked). What changes is ink in one frame
    and ground in the other, every row of the bar changed or glyph in both: a caret. A
    change with a row of ground in both frames between its strokes is not."""
    from mmcli.capture.settling import is_caret

    base = form_screen()
    glyph_z = base.copy()
    d = ImageDraw.Draw(glyph_z)
    d.rectangle([230, 180, 241, 181], fill="black")  # the z's top bar, into column 241
    d.rectangle([230, 190, 241, 191], fill="black")  # and its bottom bar
    d.line([(241, 182), (230, 189)], fill="black")
    caret = glyph_z.copy()
    ImageDraw.Draw(caret).rectangle([241, 178, 242, 193], fill="black")
    region = Rect(238, 176, 8, 20)
    assert is_caret(Frame.from_image(caret), Frame.from_image(glyph_z), region)
    assert is_caret(Frame.from_image(glyph_z), Frame.from_image(caret), region)
    # Two strokes over the z's columns with ground in both frames between them (rows
    # 185-186): a glyph's, not a caret.
    strokes = glyph_z.copy()
    ImageDraw.Draw(strokes).rectangle([241, 178, 242, 184], fill="black")
    ImageDraw.Draw(strokes).rectangle([241, 187, 242, 193], fill="black")
    assert not is_caret(Frame.from_image(strokes), Frame.from_image(glyph_z), region)


TK_CARET_AFTER_Z = (  # Tk's caret after "Núñez" on a VNC desktop (luma, 20 rows x 10 px):
    # its off phase, then its on phase; the z's anti-aliased end is under the caret
    [
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [0, 0, 0, 0, 0, 79, 255, 255, 255, 255],
        [247, 247, 247, 210, 13, 148, 255, 255, 255, 255],
        [255, 255, 241, 40, 96, 255, 255, 255, 255, 255],
        [255, 253, 75, 55, 248, 255, 255, 255, 255, 255],
        [255, 120, 25, 229, 255, 255, 255, 255, 255, 255],
        [168, 7, 199, 255, 255, 255, 255, 255, 255, 255],
        [10, 150, 247, 247, 247, 250, 255, 255, 255, 255],
        [0, 0, 0, 0, 0, 79, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [230, 230, 230, 230, 230, 230, 230, 230, 230, 230],
    ],
    [
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [0, 0, 0, 0, 0, 0, 0, 255, 255, 255],
        [247, 247, 247, 210, 13, 0, 0, 255, 255, 255],
        [255, 255, 241, 40, 96, 0, 0, 255, 255, 255],
        [255, 253, 75, 55, 248, 0, 0, 255, 255, 255],
        [255, 120, 25, 229, 255, 0, 0, 255, 255, 255],
        [168, 7, 199, 255, 255, 0, 0, 255, 255, 255],
        [10, 150, 247, 247, 247, 0, 0, 255, 255, 255],
        [0, 0, 0, 0, 0, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 0, 0, 255, 255, 255],
        [255, 255, 255, 255, 255, 255, 255, 255, 255, 255],
        [230, 230, 230, 230, 230, 230, 230, 230, 230, 230],
    ],
)


def test_tk_s_caret_after_a_z_as_measured_is_a_caret() -> None:
    """The frames measured (their luma): the z's end, anti-aliased grey, lies under the
    caret's first column, so 3 of the caret's 34 pixels hold ink in its off phase too."""
    from mmcli.capture.settling import is_caret

    base = form_screen()
    frames = []
    for phase in TK_CARET_AFTER_Z:
        image = base.copy()
        for y, row in enumerate(phase):
            for x, luma in enumerate(row):
                image.putpixel((300 + x, 170 + y), (luma, luma, luma))
        frames.append(Frame.from_image(image))
    region = Rect(304, 170, 4, 20)
    assert is_caret(frames[1], frames[0], region) and is_caret(frames[0], frames[1], region)
