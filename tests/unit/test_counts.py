"""A line that counts what was typed (a status bar's "30 characters"): read when
recorded, let differ at replay only where its numbers moved by the typed values'
length."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from mmcli.capture.counts import CountCrop, count_lines, off_field_lines
from mmcli.capture.steps import Capture
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.readback.reader import Cell, band_pixels, cell_band, count_row, digests, row_cells
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


def fixture_frame(name: str) -> Frame:
    return Frame.from_image(Image.open(Path(__file__).parents[1] / "fixtures" / name))


def test_a_cell_is_not_cut_where_a_glyph_fills_the_changed_rows() -> None:
    # Writer's status bar after typing "Ada": typing changed 8 rows of "5 words, 22"
    # (the digits' rows); a letter's stem fills them, a separator fills the padded band.
    bar = fixture_frame("writer-status-bar.png")
    line, bounds = Rect(121, 24, 64, 8), Rect(0, 0, bar.width, bar.height)
    band = cell_band(bar.pixels, line, bounds)
    assert band == Rect(115, 20, 152, 16), band
    # The cell grown with its text ("Selected: 1 word, 11 characters") is taken whole.
    grown = fixture_frame("writer-status-bar-selected.png")
    assert cell_band(grown.pixels, line, bounds) == Rect(102, 20, 189, 16)


def test_a_count_cell_is_read_whole() -> None:
    need("tesseract")
    from mmcli.replay.counted import read_line

    bar = fixture_frame("writer-status-bar.png")
    assert read_line(bar, Rect(115, 20, 152, 16)) == (
        Rect(115, 20, 152, 16),
        "5 words, 22 characters",
    )
    grown = fixture_frame("writer-status-bar-selected.png")
    assert read_line(grown, Rect(115, 20, 152, 16)) == (
        Rect(102, 20, 189, 16),
        "Selected: 1 word, 11 characters",
    )


def crop_of(frame: Frame, band: Rect, cells: tuple[Cell, ...] | None = None) -> CountCrop:
    pixels = frame.pixels[band.y : band.bottom, band.x : band.right, 2::-1].copy()
    return CountCrop(band, pixels, Rect(0, band.y, frame.width, band.h), cells)


def test_a_count_line_is_kept_only_with_a_number_none_of_the_values_and_a_param_typed() -> None:
    need("tesseract")
    frame = Frame.from_image(status_screen("Ada", "1 words, 3 characters"))
    band = Rect(301, 360, 299, 24)
    crop = crop_of(frame, band)
    cache: dict[bytes, str | None] = {}
    lines = count_lines((crop,), ["name"], {"name": "Ada"}, set(), cache)
    assert [(c.text, c.chars, c.words) for c in lines] == [("1 words, 3 characters", 3, 1)]
    assert lines[0].row is None and lines[0].cells == ()
    assert count_lines((crop,), [], {"name": "Ada"}, set(), cache) == ()
    assert count_lines((crop,), ["name"], {"name": "Ada"}, {"name"}, cache) == ()
    named = Frame.from_image(status_screen("Ada", "Ada: 3 characters"))
    assert count_lines((crop_of(named, band),), ["name"], {"name": "Ada"}, set(), cache) == ()
    word = Frame.from_image(status_screen("Ada", "Ready"))
    assert count_lines((crop_of(word, band),), ["name"], {"name": "Ada"}, set(), cache) == ()
    # The row's cells are kept with the line they were found with.
    cells = (Cell(0, 300, "0123456789abcdef"), Cell(301, 640, ""))
    (kept,) = count_lines((crop_of(frame, band, cells),), ["name"], {"name": "Ada"}, set(), {})
    assert kept.row == Rect(0, 360, 640, 24) and kept.cells == ("0123456789abcdef", "")


def test_replay_reads_the_line_only_where_a_difference_lies_over_it() -> None:
    need("tesseract")
    from mmcli.screen.matcher import Difference

    rec = Recording("r", [], datetime(2026, 11, 1, tzinfo=UTC))
    counted = Counted(rec, {"name": "Bartholomew"})
    band = Rect(301, 360, 299, 24)
    line = CountLine(band, "1 words, 3 characters", 3, 1)
    live = Frame.from_image(status_screen("Bartholomew", "1 words, 11 characters"))
    over = [Difference("regions", Rect(320, 340, 80, 60), "changed", 9, 0)]
    assert counted.shown([line], ["name"], live, over) == [band, Rect(301, 360, 339, 24)]
    assert (
        counted.shown(
            [line], ["name"], live, [Difference("regions", Rect(0, 0, 80, 60), "changed", 9, 0)]
        )
        == []
    )
    assert counted.shown([line], ["name"], live, over, target=Rect(330, 362, 16, 16)) == []
    wrong = Frame.from_image(status_screen("Bartholomew", "1 words, 12 characters"))
    assert counted.shown([line], ["name"], wrong, over) == []


def writer_line(name: str, text: str, chars: int) -> tuple[Frame, CountLine]:
    """A count line recorded on one of Writer's status bars (`tests/fixtures`)."""
    bar = fixture_frame(name)
    band = Rect(115, 20, 152, 16)
    line = Rect(band.x, band.y + 4, band.w, band.h - 8)
    real = cell_band(bar.pixels, line, Rect(0, 0, bar.width, bar.height))
    assert real is not None
    row = count_row(real, Rect(0, 0, bar.width, bar.height))
    assert row == Rect(0, real.y - 4, bar.width, real.h + 8)
    found = row_cells(bar.pixels, row, real)
    assert found is not None
    cells = digests(found)
    assert cells.count("") == 1
    return bar, CountLine(real, text, chars, 1, row, cells)


def test_a_count_that_grew_its_cell_lets_its_row_differ_where_the_other_cells_only_moved() -> None:
    need("tesseract")
    from mmcli.screen.matcher import Difference

    _, line = writer_line("writer-status-bar-selected-3.png", "Selected: 1 word, 3 characters", 3)
    live = fixture_frame("writer-status-bar-selected.png")  # 11 characters: cells moved
    counted = Counted(
        Recording("r", [], datetime(2026, 11, 1, tzinfo=UTC)), {"name": "Bartholomew"}
    )
    page = [Difference("regions", Rect(30, 20, 80, 16), "changed", 9, 0)]
    assert counted.shown([line], ["name"], live, page) == [line.row]
    # Another cell of the row changed ("Default Page Style" reads otherwise): the line
    # alone is let differ; the other cell stays a difference.
    image = Image.open(Path(__file__).parents[1] / "fixtures" / "writer-status-bar-selected.png")
    ImageDraw.Draw(image).rectangle([310, 24, 340, 32], fill="black")
    changed = Frame.from_image(image)
    shown = counted.shown([line], ["name"], changed, page)
    assert line.row not in shown and shown == [line.rect, Rect(102, 20, 189, 16)]
    # Over the step's target, the row is never let differ.
    assert counted.shown([line], ["name"], live, page, target=Rect(400, 20, 16, 16)) == [
        line.rect,
        Rect(102, 20, 189, 16),
    ]


def test_a_line_drawn_late_reads_as_a_line_of_its_stretch_of_the_path() -> None:
    need("tesseract")
    from mmcli.screen.matcher import Difference

    _, before = writer_line("writer-status-bar.png", "5 words, 22 characters", 3)
    _, selected = writer_line(
        "writer-status-bar-selected-3.png", "Selected: 1 word, 3 characters", 3
    )

    def step(i: int, parent: int | None, action: Action, counts: tuple[CountLine, ...]) -> Step:
        return Step(i, parent, action, fp_of(form_screen(), None), counts=counts)

    key = Action(ActionKind.HOTKEY, keys=["ctrl", "shift", "left"])
    click = Action(ActionKind.CLICK, x=10, y=10)
    steps = [
        step(0, None, Action(ActionKind.TYPE, text="{{name}}"), ()),
        step(1, 0, key, (before,)),  # the selection not drawn yet
        step(2, 1, click, ()),  # a menu over the status bar
        step(3, 2, click, (selected,)),
        step(4, 3, Action(ActionKind.TYPE, text="{{city}}"), (selected,)),
        step(5, 4, click, ()),
    ]
    counted = Counted(
        Recording("r", steps, datetime(2026, 11, 1, tzinfo=UTC)), {"name": "Bartholomew"}
    )
    assert counted.near(steps[1]) == [before, selected, selected]
    assert counted.near(steps[2]) == [before, selected, selected]
    assert counted.near(steps[4]) == [selected, selected, before]
    assert counted.near(steps[5]) == []
    # A path that ends on a typing: its outcome follows the typing, so is not this stretch's.
    from mmcli.model import EndScreen

    end = replace(steps[4], outcome=EndScreen(steps[4].fingerprint, counts=(before,)))
    ended = Counted(
        Recording("r", [*steps[:4], end], datetime(2026, 11, 1, tzinfo=UTC)),
        {"name": "Bartholomew"},
    )
    assert ended.near(steps[3]) == [selected, before, selected]
    live = fixture_frame("writer-status-bar-selected.png")  # drawn early this time
    over = [Difference("regions", Rect(30, 20, 80, 16), "changed", 9, 0)]
    assert counted.at_step(steps[1], live, over, None) == [before.row]
    # Past the next typing, the line is not this stretch's.
    assert counted.at_step(steps[5], live, over, None) == []


def test_a_count_under_a_menu_lets_the_row_beside_the_menu_differ_where_only_moved() -> None:
    need("tesseract")
    from mmcli.screen.matcher import Difference

    # Recorded: Writer's Format menu over "Selected: 1 word, 3 characters"; now the same
    # menu over "... 11 characters", whose growth moved the cells either side of it.
    recorded = fixture_frame("writer-status-bar-menu.png")
    band = Rect(148, 20, 217, 16)
    row = count_row(band, Rect(0, 0, recorded.width, recorded.height))
    assert row is not None
    cells = row_cells(recorded.pixels, row, band)
    crop = CountCrop(band, band_pixels(recorded.pixels, band).copy(), row, cells)
    (unread,) = count_lines((crop,), ["name"], {"name": "Ada"}, set(), {})
    assert unread.text == "" and unread.over and unread.cells.count("") == 1
    _, selected = writer_line(
        "writer-status-bar-selected-3.png", "Selected: 1 word, 3 characters", 3
    )
    counted = Counted(
        Recording("r", [], datetime(2026, 11, 1, tzinfo=UTC)), {"name": "Bartholomew"}
    )
    live = fixture_frame("writer-status-bar-menu-11.png")
    over = [Difference("regions", Rect(30, 20, 116, 16), "changed", 9, 0)]
    beside = [Rect(0, 16, 148, 24), Rect(365, 16, recorded.width - 365, 24)]
    assert counted.shown([unread, selected], ["name"], live, over) == beside
    # Never read as a count on this row: nothing to read it against.
    assert counted.shown([unread], ["name"], live, over) == []
    # Another menu, or none: the line's cell shows otherwise.
    image = Image.open(Path(__file__).parents[1] / "fixtures" / "writer-status-bar-menu-11.png")
    ImageDraw.Draw(image).rectangle([200, 24, 220, 30], fill="white")
    assert counted.shown([unread, selected], ["name"], Frame.from_image(image), over) == []
    # A cell away from the menu changed ("100%" reads otherwise): nothing is let differ.
    image = Image.open(Path(__file__).parents[1] / "fixtures" / "writer-status-bar-menu-11.png")
    ImageDraw.Draw(image).rectangle([730, 24, 740, 30], fill="black")
    assert counted.shown([unread, selected], ["name"], Frame.from_image(image), over) == []


def test_a_band_taller_than_its_separators_still_finds_its_cells() -> None:
    # Another world: the digits' changed rows fell on 12 rows of the downscaled grid, so
    # the padded band (20 rows) takes in the status bar's top edge and is taller than
    # its separators (17 rows); the edge, drawn across every cell, is no cell's content.
    recorded = fixture_frame("writer-status-bar-tall.png")
    live = fixture_frame("writer-status-bar-tall-11.png")
    line, bounds = Rect(122, 18, 64, 12), Rect(0, 0, recorded.width, recorded.height)
    band = cell_band(recorded.pixels, line, bounds)
    assert band == Rect(104, 14, 184, 20), band
    grown = cell_band(live.pixels, line, bounds)
    assert grown == Rect(102, 14, 189, 20), grown
    row = count_row(band, bounds)
    assert row is not None
    found, moved = row_cells(recorded.pixels, row, band), row_cells(live.pixels, row, grown)
    assert found is not None and moved is not None
    cells = digests(found)
    assert len(cells) == 8
    assert digests(moved) == cells


def test_a_count_drawn_late_is_found_after_the_keys_that_follow_the_typing() -> None:
    from mmcli.capture.counts import CountBands

    before = Frame.from_image(status_screen("", "0 words, 0 characters"))
    typed = Frame.from_image(status_screen("Ada", "0 words, 0 characters"))  # not drawn yet
    drawn = Frame.from_image(status_screen("Ada", "1 words, 3 characters"))

    def cap(action: Action, frame: Frame) -> Capture:
        return Capture(
            action, frame.small, patch_of(frame, 60, 72), (60, 72), (640, 400),
            datetime(2026, 11, 1, tzinfo=UTC), window=WindowRef("app.App", Rect(20, 40, 600, 360)),
        )  # fmt: skip

    typing = cap(Action(ActionKind.TYPE, text="Ada"), before)
    select = cap(Action(ActionKind.HOTKEY, keys=["ctrl", "shift", "left"]), typed)
    bands = CountBands()
    assert bands.crops([typing], typed) == ()
    (crop,) = bands.crops([typing, select], drawn)
    assert crop.band.x >= 301 and crop.band.y <= 366 and crop.band.bottom >= 380, crop.band
    # After a click, or a key that leaves the field, what changed is not the typing's.
    for after in (Action(ActionKind.CLICK, x=60, y=200), Action(ActionKind.PRESS, keys=["Tab"])):
        bands = CountBands()
        assert bands.crops([typing], typed) == ()
        assert bands.crops([typing, cap(after, typed)], drawn) == ()


def test_lines_never_read_as_a_count_are_not_kept() -> None:
    from mmcli.screen.counts import MAX_COUNT_LINES, on_count_rows

    row = Rect(0, 600, 760, 24)
    count = CountLine(Rect(100, 604, 150, 16), "5 words, 22 characters", 3, 1, row, ("", "a" * 16))
    covered = CountLine(Rect(120, 604, 200, 16), "", 3, 1, row, ("", "b" * 16), "c" * 16)
    toolbar = CountLine(Rect(100, 50, 40, 20), "", 3, 1, Rect(0, 46, 760, 28), ("",), "d" * 16)
    kept = on_count_rows([(count, toolbar), (covered, toolbar), (toolbar,)])
    assert kept == [(count,), (covered,), ()]
    many = tuple(replace(count, rect=Rect(100, 604 + 40 * i, 150, 16)) for i in range(5))
    (few,) = on_count_rows([(covered, *many)])
    assert few == many[:MAX_COUNT_LINES]  # read ones first


def test_the_steps_built_keep_unread_lines_only_on_a_count_row() -> None:
    need("tesseract")
    from mmcli.capture.steps import build_steps

    band = Rect(301, 360, 299, 24)
    row = Rect(20, 356, 600, 32)
    cells = (Cell(40, 300, "0123456789abcdef"), Cell(301, 640, "fedcba9876543210", own=True))

    def cap(action: Action, counts: tuple[CountCrop, ...]) -> Capture:
        frame = Frame.from_image(status_screen("Ada", "1 words, 3 characters"))
        return Capture(
            action, frame.small, patch_of(frame, 60, 72), (60, 72), (640, 400),
            datetime(2026, 11, 1, tzinfo=UTC), counts=counts,
        )  # fmt: skip

    def crop(count: str) -> CountCrop:
        frame = Frame.from_image(status_screen("Ada", count))
        pixels = frame.pixels[band.y : band.bottom, band.x : band.right, 2::-1].copy()
        return CountCrop(band, pixels, row, cells)

    typing = cap(Action(ActionKind.TYPE, text="Ada"), ())
    ready = cap(Action(ActionKind.CLICK, x=60, y=200), (crop("Ready"),))
    built = build_steps([typing, ready], None, {"name": "Ada"}, 0, None, [])
    assert built.steps[1].counts == ()  # never read as a count: not kept
    counted = cap(Action(ActionKind.CLICK, x=60, y=220), (crop("1 words, 3 characters"),))
    built = build_steps([typing, ready, counted], None, {"name": "Ada"}, 0, None, [])
    (unread,) = built.steps[1].counts
    assert unread.text == "" and unread.over == "fedcba9876543210"
    assert built.steps[2].counts[0].text == "1 words, 3 characters"
