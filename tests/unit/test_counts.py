"""A line that counts what was typed (a status bar's "30 characters"): read when
recorded, let differ at replay only where its numbers moved by the typed values'
length."""

from __future__ import annotations

from datetime import UTC, datetime

from PIL import Image, ImageDraw, ImageFont

from mmcli.capture.counts import count_lines, off_field_lines
from mmcli.capture.steps import Capture
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.readback.reader import cell_band
from mmcli.replay.counted import Counted
from mmcli.screen.analysis import patch_of
from mmcli.screen.counts import CountLine, agrees, shifts
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import WindowRef
from tests.desktop import need
from tests.helpers import form_screen, fp_of

LINE = CountLine(Rect(0, 0, 300, 20), "5 words, 30 characters", 3, 1)


def test_numbers_may_move_by_the_typed_values_length_and_nothing_else() -> None:
    allowed = shifts(LINE, ["name"], {"name": "Bartholomew"})  # 8 more characters
    assert agrees(LINE.text, "5 words, 38 characters", allowed)
    assert agrees(LINE.text, "5 words, 30 characters", allowed)  # not moved
    assert not agrees(LINE.text, "5 words, 39 characters", allowed)  # moved by other
    assert not agrees(LINE.text, "14 words, 30 characters", allowed)  # moved by other
    assert not agrees(LINE.text, "5 words, 38 lines", allowed)  # another word
    assert not agrees(LINE.text, "5 words, 38 characters selected", allowed)
    assert not agrees("Saved", "Saved", allowed)  # no number: the pixels judge


def test_words_and_what_is_left_move_too() -> None:
    allowed = shifts(LINE, ["name"], {"name": "Ada King Lovelace"})  # 14 more, 2 words more
    assert agrees(LINE.text, "7 words, 44 characters", allowed)
    left = CountLine(LINE.rect, "27 characters left", 3, 1)
    assert agrees(
        left.text, "13 characters left", shifts(left, ["name"], {"name": "Ada King Lovelace"})
    )


def test_each_time_a_param_was_typed_counts() -> None:
    allowed = shifts(CountLine(LINE.rect, "Col 7", 6, 2), ["name", "name"], {"name": "Bo"})
    assert allowed == {0, 2, -2}  # 4 characters (-2), 2 words (0)


def step(id: int, parent: int | None, action: Action) -> Step:
    return Step(id, parent, action, fp_of(form_screen(), None))


def test_the_params_typed_before_a_step_follow_its_path() -> None:
    click = Action(ActionKind.CLICK, x=10, y=10)
    steps = [
        step(0, None, click),
        step(1, 0, Action(ActionKind.TYPE, text="{{name}}")),
        step(2, 1, click),
        step(3, 2, Action(ActionKind.TYPE, text="{{city}}, {{name}}")),
        step(4, 1, Action(ActionKind.TYPE, text="{{other}}")),  # a branch from step 1
    ]
    rec = Recording("r", steps, datetime(2026, 11, 1, tzinfo=UTC))
    counted = Counted(rec, {})
    assert counted.typed_before(steps[0]) == []
    assert counted.typed_before(steps[2]) == ["name"]
    assert counted.typed_before(steps[3]) == ["name"]
    assert counted.typed_before(steps[3], including=True) == ["name", "city", "name"]
    assert counted.typed_before(steps[4], including=True) == ["name", "other"]


def status_screen(value: str, count: str) -> Image.Image:
    image = Image.new("RGB", (640, 400), "#d9d9d9")
    d = ImageDraw.Draw(image)
    d.font = ImageFont.load_default(size=14)
    d.rectangle([40, 60, 600, 84], fill="white", outline="black")  # the field
    d.text((46, 66), value, fill="black")
    d.rectangle([40, 360, 600, 384], fill="#eeeeee")  # the status bar
    d.line([(300, 360), (300, 384)], fill="#888888")  # a separator between its cells
    d.text((46, 366), "Page 1 of 1", fill="black")
    d.text((320, 366), count, fill="black")
    return image


def test_the_line_typing_changed_off_its_field_is_kept_to_its_cell() -> None:
    before = Frame.from_image(status_screen("", "0 words, 0 characters"))
    after = Frame.from_image(status_screen("Ada", "1 words, 3 characters"))
    cap = Capture(
        Action(ActionKind.TYPE, text="Ada"), before.small, patch_of(before, 60, 72), (60, 72),
        (640, 400), datetime(2026, 11, 1, tzinfo=UTC),
        window=WindowRef("app.App", Rect(20, 40, 600, 360)),
    )  # fmt: skip
    lines = off_field_lines(cap, after)
    assert len(lines) == 1
    line, bounds = lines[0]
    assert bounds == Rect(20, 40, 600, 360)
    band = cell_band(after.pixels, line, bounds)
    assert band is not None
    assert band.x >= 301 and band.right <= 620 and band.y <= 366 and band.bottom >= 380, band
    # The cell's text grew past what the typing changed: the band is the cell's still.
    longer = Frame.from_image(status_screen("Ada", "Selected: 1 word, 3 characters"))
    assert cell_band(longer.pixels, line, bounds) == band
    # Where the text went is not known: nothing is told apart from it.
    cap.patch, cap.window = None, None
    assert off_field_lines(cap, after) == []


def test_a_count_line_is_kept_only_with_a_number_none_of_the_values_and_a_param_typed() -> None:
    need("tesseract")
    frame = Frame.from_image(status_screen("Ada", "1 words, 3 characters"))
    band = Rect(301, 360, 299, 24)
    crop = frame.pixels[band.y : band.bottom, band.x : band.right, 2::-1].copy()
    cache: dict[bytes, str | None] = {}
    lines = count_lines(((band, crop),), ["name"], {"name": "Ada"}, set(), cache)
    assert [(c.text, c.chars, c.words) for c in lines] == [("1 words, 3 characters", 3, 1)]
    assert count_lines(((band, crop),), [], {"name": "Ada"}, set(), cache) == ()
    assert count_lines(((band, crop),), ["name"], {"name": "Ada"}, {"name"}, cache) == ()
    named = Frame.from_image(status_screen("Ada", "Ada: 3 characters"))
    echo = named.pixels[band.y : band.bottom, band.x : band.right, 2::-1].copy()
    assert count_lines(((band, echo),), ["name"], {"name": "Ada"}, set(), cache) == ()
    word = Frame.from_image(status_screen("Ada", "Ready"))
    plain = word.pixels[band.y : band.bottom, band.x : band.right, 2::-1].copy()
    assert count_lines(((band, plain),), ["name"], {"name": "Ada"}, set(), cache) == ()


def test_replay_reads_the_line_only_where_a_difference_lies_over_it() -> None:
    need("tesseract")
    from mmcli.screen.matcher import Difference

    rec = Recording("r", [], datetime(2026, 11, 1, tzinfo=UTC))
    counted = Counted(rec, {"name": "Bartholomew"})
    band = Rect(301, 360, 299, 24)
    line = CountLine(band, "1 words, 3 characters", 3, 1)
    live = Frame.from_image(status_screen("Bartholomew", "1 words, 11 characters"))
    over = [Difference("regions", Rect(320, 340, 80, 60), "changed", 9, 0)]
    assert counted.shown([line], ["name"], live, over) == [band]
    assert (
        counted.shown(
            [line], ["name"], live, [Difference("regions", Rect(0, 0, 80, 60), "changed", 9, 0)]
        )
        == []
    )
    assert counted.shown([line], ["name"], live, over, target=Rect(330, 362, 16, 16)) == []
    wrong = Frame.from_image(status_screen("Bartholomew", "1 words, 12 characters"))
    assert counted.shown([line], ["name"], wrong, over) == []
