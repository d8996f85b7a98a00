"""An app's gauge is learned from what changed on its own after two or more actions, to
another value each time; a late answer that comes back the same, a change seen after one
action only, a window, and anything on or near what the task acts on are not."""

from __future__ import annotations

from PIL import Image, ImageDraw

from mmcli.capture.gauges import MAX_SHOWN, Gauges, away_from_task, task_places
from mmcli.screen.fingerprint import Frame, Patch, Rect

GAUGE = Rect(480, 390, 64, 16)
"""Where the status bar's gauge stands (its text run)."""
RAW = Rect(496, 392, 16, 12)
"""The glyphs a new value changes."""


def screen(gauge: str = "182/388Mb", notice: str = "") -> Frame:
    image = Image.new("RGB", (640, 420), "#d9d9d9")
    draw = ImageDraw.Draw(image)
    draw.text((GAUGE.x + 2, GAUGE.y + 2), gauge, fill="black")
    if notice:
        draw.rectangle((100, 100, 400, 230), fill="white", outline="black")
        draw.text((120, 150), notice, fill="black")
    return Frame.from_image(image)


def test_a_gauge_showing_another_value_after_two_actions_is_learned() -> None:
    gauges = Gauges()
    gauges.note(1, screen("182/388Mb"), screen("184/388Mb"), [(RAW, GAUGE)])
    assert gauges.learned == []
    gauges.note(3, screen("184/388Mb"), screen("186/388Mb"), [(RAW, GAUGE)])
    assert gauges.learned == [GAUGE, GAUGE]


def test_a_late_answer_that_comes_back_the_same_is_not_learned() -> None:
    """A status that reads "Saved" a moment after each action: an answer, not a gauge."""
    gauges = Gauges()
    for gap in (1, 2, 3):
        gauges.note(gap, screen(""), screen("Saved"), [(RAW, GAUGE)])
    assert gauges.learned == []


def test_a_value_seen_before_is_no_new_value() -> None:
    gauges = Gauges()
    gauges.note(1, screen("182/388Mb"), screen("184/388Mb"), [(RAW, GAUGE)])
    gauges.note(2, screen("184/388Mb"), screen("186/388Mb"), [(RAW, GAUGE)])
    learned = list(gauges.learned)
    gauges.note(3, screen("186/388Mb"), screen("184/388Mb"), [(RAW, GAUGE)])
    assert gauges.learned == learned


def test_a_blinker_is_no_gauge() -> None:
    """A block cursor seen going off after one action and on after the next: two values
    in turn, the second the one the first change left."""
    gauges = Gauges()
    gauges.note(1, screen("ls #"), screen("ls"), [(RAW, GAUGE)])
    gauges.note(2, screen("ls"), screen("ls #"), [(RAW, GAUGE)])
    gauges.note(3, screen("ls #"), screen("ls"), [(RAW, GAUGE)])
    assert gauges.learned == []


def test_changes_after_one_action_only_are_not_learned() -> None:
    """Two changes in one gap are the idle watch's to judge (`IdleWatch.note_repeated`)."""
    gauges = Gauges()
    gauges.note(1, screen("182/388Mb"), screen("184/388Mb"), [(RAW, GAUGE)])
    gauges.note(1, screen("184/388Mb"), screen("186/388Mb"), [(RAW, GAUGE)])
    assert gauges.learned == []


def test_more_than_a_few_glyphs_is_no_gauge() -> None:
    dialog = Rect(100, 100, 300, 130)
    gauges = Gauges()
    gauges.note(1, screen(), screen(notice="Upload failed"), [(dialog, dialog)])
    gauges.note(2, screen(), screen(notice="Server busy"), [(dialog, dialog)])
    assert gauges.learned == []


def test_a_few_glyphs_on_a_whole_line_are_no_gauge() -> None:
    """A few glyphs of a status line's message: the line is learned whole or not at all."""
    line = Rect(4, 388, 620, 24)
    gauges = Gauges()
    gauges.note(1, screen("Saved 10:30:58"), screen("Saved 10:31:02"), [(RAW, line)])
    gauges.note(2, screen("Saved 10:31:02"), screen("Saved 10:31:09"), [(RAW, line)])
    assert gauges.learned == []


def test_a_gauge_near_a_target_or_over_a_typed_field_is_left_to_count() -> None:
    places = task_places([Patch(520, 360, b"")], [None])
    assert away_from_task([GAUGE], places) == []
    places = task_places([Patch(100, 100, b"")], [Rect(470, 385, 200, 30)])
    assert away_from_task([GAUGE], places) == []
    places = task_places([Patch(100, 100, b"")], [Rect(130, 70, 300, 24)])
    assert away_from_task([GAUGE], places) == [GAUGE]


def test_more_new_glyphs_than_a_few_are_no_gauge() -> None:
    """Glyphs 100 px wide that changed on a 120 px run: a message, not a gauge's value."""
    run = Rect(440, 392, 120, 16)
    gauges = Gauges()
    gauges.note(1, screen(""), screen("Saved to disk"), [(Rect(450, 394, 100, 12), run)])
    gauges.note(2, screen(""), screen("Sent to server"), [(Rect(450, 394, 100, 12), run)])
    assert gauges.learned == []


def test_what_is_kept_stays_bounded_however_long_the_run() -> None:
    """Changes at a new place after each of 1000 actions: the latest are kept; and a gauge
    learned is not learned again."""
    gauges = Gauges()
    blank, shown = screen(""), screen("x")
    for gap in range(1000):
        place = Rect(gap % 560, 200 + gap // 560 * 40, 12, 12)
        gauges.note(gap, blank, shown, [(place, place)])
    assert len(gauges.shown) == MAX_SHOWN
    gauges = Gauges()
    frames = [screen(f"{n}/388Mb") for n in range(180, 190)]
    for gap in range(100):
        gauges.note(gap, frames[gap % 10], frames[(gap + 1) % 10], [(RAW, GAUGE)])
    assert gauges.learned == [GAUGE, GAUGE]
