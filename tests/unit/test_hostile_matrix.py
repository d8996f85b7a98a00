"""The hostile matrix's generator, its labelling rule and where its windows go: pure, no
display (benchmarks/desktop/hostile.py, hostile_windows.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.desktop.bench import Judgement, Outcome
from benchmarks.desktop.hostile import (
    FOCUS,
    KINDS,
    PLACES,
    WHOSE,
    Case,
    Focus,
    Result,
    expected_label,
    generate,
    sample,
)
from benchmarks.desktop.hostile_report import explain, table
from benchmarks.desktop.hostile_windows import (
    EDGE_OVERLAP,
    FAR_GAP,
    INSET,
    MARGIN,
    Box,
    CannotPlace,
    Extents,
    placement,
)
from benchmarks.desktop.scenarios import Label

KIND = {k.key: k for k in KINDS}
PLACE = {p.key: p for p in PLACES}
OTHER, OWN = WHOSE
TAKES, NO_FOCUS, UNDER = FOCUS


# ----- the label -----------------------------------------------------------------------


@pytest.mark.parametrize("place", [p.key for p in PLACES])
@pytest.mark.parametrize("focus", [TAKES, NO_FOCUS], ids=["focus", "no-focus"])
def test_a_window_of_the_task_app_is_unsafe_wherever_it_is(place: str, focus: Focus) -> None:
    assert expected_label(PLACE[place], OWN, focus) is Label.UNSAFE


@pytest.mark.parametrize("place", ["target", "over", "edge"])
@pytest.mark.parametrize("focus", [TAKES, NO_FOCUS], ids=["focus", "no-focus"])
def test_another_apps_window_over_any_part_of_the_task_is_unsafe(place: str, focus: Focus) -> None:
    assert expected_label(PLACE[place], OTHER, focus) is Label.UNSAFE
    assert expected_label(PLACE[place], OTHER, focus, kind="dialog") is Label.UNSAFE


@pytest.mark.parametrize("kind", ["notification", "tooltip"])
def test_another_apps_notification_or_tooltip_clear_of_the_target_is_left_out(kind: str) -> None:
    """As the product does (docs/validation.md): over the task but no target, no focus."""
    for place in ("over", "edge"):
        assert expected_label(PLACE[place], OTHER, NO_FOCUS, kind=kind) is Label.HARMLESS
    assert expected_label(PLACE["target"], OTHER, NO_FOCUS, kind=kind) is Label.UNSAFE
    assert expected_label(PLACE["over"], OWN, NO_FOCUS, kind=kind) is Label.UNSAFE


@pytest.mark.parametrize("place", [p.key for p in PLACES])
def test_another_apps_window_under_the_task_window_is_harmless_the_apps_own_is_not(
    place: str,
) -> None:
    """It hides nothing of the task: what shows of it beside the task window is left out
    (docs/validation.md). No case puts the app's own window under its task window."""
    for kind in ("dialog", "normal", "override", "tooltip"):
        assert expected_label(PLACE[place], OTHER, UNDER, kind=kind) is Label.HARMLESS
    assert expected_label(PLACE[place], OWN, UNDER, kind="normal") is Label.UNSAFE
    assert not [
        c
        for c in generate(["qt", "tk"], ["openbox"], ["pyautogui"])
        if c.focus.under and c.whose.own
    ]


def test_another_apps_window_far_away_is_harmless_with_or_without_the_focus() -> None:
    """The task starts with a click into its window, which takes the focus back."""
    assert expected_label(PLACE["far"], OTHER, NO_FOCUS) is Label.HARMLESS
    assert expected_label(PLACE["far"], OTHER, TAKES) is Label.HARMLESS


def test_a_far_override_window_holding_the_focus_is_unsafe_where_a_click_leaves_it_there() -> None:
    """On IceWM a click into the task does not take the focus back from an
    override-redirect window that took it (the keys go there), but a Java app takes it."""
    from benchmarks.desktop.hostile import Case

    assert Case.of("gtk", "override/far/other/focus", wm="icewm").label is Label.UNSAFE
    assert Case.of("java", "override/far/other/focus", wm="icewm").label is Label.HARMLESS
    assert Case.of("gtk", "override/far/other/focus", wm="openbox").label is Label.HARMLESS
    assert Case.of("gtk", "normal/far/other/focus", wm="icewm").label is Label.HARMLESS
    assert Case.of("gtk", "override/far/other/no-focus", wm="icewm").label is Label.HARMLESS
    # the app's own popup far away is left to the pixels, but not with the keyboard there
    assert Case.of("qt", "override/far/own/focus", wm="icewm").label is Label.UNSAFE
    assert Case.of("qt", "override/far/own/focus", wm="openbox").label is Label.HARMLESS


def test_a_far_window_holding_the_focus_is_unsafe_where_keys_come_first() -> None:
    assert expected_label(PLACE["far"], OTHER, TAKES, starts_with_click=False) is Label.UNSAFE
    assert expected_label(PLACE["far"], OTHER, NO_FOCUS, starts_with_click=False) is (
        Label.HARMLESS
    )


# ----- the generator -------------------------------------------------------------------


def test_the_cases_of_each_app_are_its_applicable_combinations() -> None:
    """Other apps' windows: 4 places x (dialog, normal, terminal, override: 3 focus
    values; notification, tooltip: no focus or under the task) = 64; own windows where
    the app opens that kind (Qt: all but the terminal and the notification; Tk: dialog,
    normal; Chromium: normal; GTK: none), never under the task."""
    cases = generate(["gtk", "qt", "chromium", "tk"], ["openbox"], ["pyautogui"])
    per_app = Counter(c.app for c in cases)
    assert per_app == {"gtk": 64, "chromium": 72, "tk": 80, "qt": 92}
    own = {(c.app, c.kind.key) for c in cases if c.whose.own}
    assert own == {
        ("qt", "dialog"),
        ("qt", "normal"),
        ("qt", "override"),
        ("qt", "tooltip"),
        ("tk", "dialog"),
        ("tk", "normal"),
        ("chromium", "normal"),
    }


def test_no_case_where_the_combination_is_ill_defined() -> None:
    cases = generate(["qt", "tk", "chromium", "gtk"], ["openbox"], ["pyautogui"])
    assert not [c for c in cases if c.focus.takes and c.kind.key in ("notification", "tooltip")]
    assert not [c for c in cases if c.whose.own and c.kind.key in ("notification", "terminal")]


def test_window_managers_and_styles_multiply_the_cases_and_keys_are_unique() -> None:
    one = generate(["gtk"], ["openbox"], ["pyautogui"])
    all_ = generate(["gtk"], ["openbox", "icewm", "xfce"], ["pyautogui", "xdotool"])
    assert len(all_) == 6 * len(one)
    assert len({c.name for c in all_}) == len(all_)
    assert {(c.wm, c.style) for c in all_} == {
        (wm, s) for wm in ("openbox", "icewm", "xfce") for s in ("pyautogui", "xdotool")
    }


def test_each_case_is_labelled_by_the_rule_and_unsafe_means_acting_is_wrong() -> None:
    for case in generate(["qt", "gtk"], ["openbox"], ["pyautogui"]):
        assert case.label is expected_label(case.place, case.whose, case.focus, kind=case.kind.key)
        scenario = case.scenario()
        assert scenario.key == case.key
        assert scenario.label is case.label
        assert scenario.under_window is (case.label is Label.UNSAFE)
        assert scenario.own_window == (case.kind.key if case.whose.own else "")


def test_both_labels_occur_and_only_far_windows_of_other_apps_are_harmless() -> None:
    """... or another app's notification or tooltip clear of the target, or another
    app's window under the task window."""
    cases = generate(["qt"], ["openbox"], ["pyautogui"])
    harmless = [c for c in cases if c.label is Label.HARMLESS and not c.focus.under]
    assert harmless and len(harmless) < len(cases)
    assert {(c.place.key, c.whose.key) for c in harmless if c.place.key != "far"} <= {
        ("over", "other"),
        ("edge", "other"),
    }
    assert {c.kind.key for c in harmless if c.place.key != "far"} <= {"notification", "tooltip"}


def test_a_sample_is_drawn_from_the_seed_in_the_cases_order() -> None:
    cases = generate(["gtk", "qt"], ["openbox"], ["pyautogui"])
    drawn = sample(cases, 10, seed=7)
    assert drawn == sample(cases, 10, seed=7)
    assert drawn != sample(cases, 10, seed=8)
    assert len(drawn) == 10
    assert drawn == [c for c in cases if c in drawn]
    assert sample(cases, 10_000, seed=1) == cases


# ----- where a window goes -------------------------------------------------------------

TASK = Box(200, 120, 400, 230)
TASK_FRAME = Extents(1, 1, 20, 5)
TARGET = (430, 184)
FRAME = Extents(1, 1, 20, 1)
AREA = Box(0, 0, 1280, 770)


def outer(place: str, size: tuple[int, int] = (150, 50), frame: Extents = FRAME) -> Box:
    return frame.outer(placement(place, TASK, TASK_FRAME, TARGET, size, frame, AREA))


def test_on_the_target_the_window_is_centred_on_it() -> None:
    client = placement("target", TASK, TASK_FRAME, TARGET, (150, 50), FRAME, AREA)
    assert client == Box(355, 159, 150, 50)
    assert client.contains(TARGET)


def test_over_the_task_the_window_is_inside_it_frame_and_all_clear_of_the_target() -> None:
    box = outer("over")
    assert box.inside(TASK.grown(-INSET))
    assert not box.grown(MARGIN).contains(TARGET)
    assert (box.right, box.bottom) == (TASK.right - INSET, TASK.bottom - INSET)  # lower right


def test_over_the_task_the_next_corner_is_taken_when_the_first_is_not_clear() -> None:
    target = (TASK.right - 60, TASK.bottom - 30)  # in the lower right corner
    client = placement("over", TASK, TASK_FRAME, target, (150, 50), FRAME, AREA)
    assert FRAME.outer(client).x == TASK.x + INSET  # lower left


def test_a_window_too_big_for_the_room_beside_the_target_cannot_be_over_the_task() -> None:
    with pytest.raises(CannotPlace):
        outer("over", size=(380, 120))


def test_at_the_edge_the_window_covers_a_strip_of_the_task_clear_of_the_target() -> None:
    box = outer("edge")
    assert box.x == TASK.right - EDGE_OVERLAP
    assert box.overlaps(TASK)
    assert not box.grown(MARGIN).contains(TARGET)


def test_at_the_edge_the_left_one_is_taken_when_the_right_is_off_the_work_area() -> None:
    task = Box(1000, 120, 270, 230)
    target = (1100, 184)
    client = placement("edge", task, TASK_FRAME, target, (150, 50), FRAME, AREA)
    assert FRAME.outer(client).right == task.x + EDGE_OVERLAP


def test_far_away_the_window_is_in_the_farthest_corner_of_the_work_area() -> None:
    box = outer("far")
    assert box.inside(AREA)
    assert box.gap(TASK_FRAME.outer(TASK)) >= FAR_GAP
    assert box.x > TASK.right  # the right-hand corners are the farther


def test_far_away_needs_room() -> None:
    with pytest.raises(CannotPlace):
        placement("far", TASK, TASK_FRAME, TARGET, (150, 50), FRAME, Box(150, 80, 500, 320))


def test_box_gap_overlap_and_frame() -> None:
    a, b = Box(0, 0, 10, 10), Box(30, 5, 10, 10)
    assert a.gap(b) == b.gap(a) == 20
    assert not a.overlaps(b) and a.gap(Box(5, 5, 10, 10)) == 0
    assert Extents(1, 2, 20, 4).outer(Box(10, 30, 100, 50)) == Box(9, 10, 103, 74)
    assert Extents(1, 2, 20, 4).client(Box(9, 10, 103, 74)) == Box(10, 30, 100, 50)


# ----- the report ----------------------------------------------------------------------


def result(case: Case, outcome: Outcome, stderr: str = "") -> Result:
    j = Judgement(
        case.app, case.key, str(case.label), 0, outcome, 3, None, "Ada|Paris", stderr, 1.0
    )
    return Result(case, j, None)


def test_the_table_counts_each_dimension_value_and_keeps_na_apart() -> None:
    cases = generate(["gtk"], ["openbox"], ["pyautogui"])
    far = next(c for c in cases if c.place.key == "far")
    over = next(c for c in cases if c.place.key == "over")
    results = [
        result(far, Outcome.CORRECT),
        result(over, Outcome.WRONG_ACTION),
        result(over, Outcome.ERROR, "harness: CannotPlace: too big"),
    ]
    assert results[2].not_applicable and not results[1].not_applicable
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in table(results).splitlines()}
    # runs, wrong, false div, flagged, correct, error, n/a
    assert rows[("place", "over")] == ["1", "1", "0", "0", "0", "0", "1"]
    assert rows[("place", "far")] == ["1", "0", "0", "0", "1", "0", "0"]
    assert rows[("label", "harmless")][0] == "1"
    assert table(results).splitlines()[-1].split() == ["total", "2", "1", "0", "0", "1", "0", "1"]


def test_explain_says_where_replay_diverged_else_what_it_left_out() -> None:
    diverged = "step 1/5: click\ndiverged at step 2: a window over the target\nexit"
    assert explain(diverged) == "diverged at step 2: a window over the target"
    acted = "step 1: a tooltip window over the task: left out of the check\ndone: 5 steps"
    assert explain(acted) == "step 1: a tooltip window over the task: left out of the check"
    assert explain("step 1/5: click\ndone from memory: 5 steps") == "done from memory: 5 steps"
    assert explain("") == ""


def test_a_case_is_found_again_from_its_key() -> None:
    for case in generate(["qt", "tk"], ["icewm"], ["xdotool"]):
        assert Case.of(case.app, case.key, case.wm, case.style) == case
    with pytest.raises(ValueError):
        Case.of("gtk", "dialog/over/own/focus")  # zenity opens no dialog of its own
    with pytest.raises(ValueError):
        Case.of("qt", "tooltip/far/other/focus")  # a tooltip takes no focus


@pytest.mark.parametrize("focus", [TAKES, NO_FOCUS], ids=["focus", "no-focus"])
def test_the_apps_own_popup_far_from_the_task_is_left_to_the_pixels(focus: Focus) -> None:
    for kind in ("override", "tooltip"):
        assert expected_label(PLACE["far"], OWN, focus, kind=kind) is Label.HARMLESS
        assert expected_label(PLACE["over"], OWN, focus, kind=kind) is Label.UNSAFE
    assert expected_label(PLACE["far"], OWN, focus, kind="normal") is Label.UNSAFE
