"""The replay speed benchmark's floor: the waits replay keeps, summed over a recording."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.perf.replay import kept_waits
from mmcli.model import Action, ActionKind
from mmcli.replay import look, outcome
from tests.helpers import sample_recording


def test_kept_waits_count_a_move_s_stillness_each_step_s_quiet_the_keys_and_the_outcome() -> None:
    recording = sample_recording()  # click (100, 200), type 14 keys, hotkey, click (300, 400)
    keys = 13 * 0.012  # no pace recorded: xdotool's default between two keys
    want = 2 * look.POLL + 4 * look.CHECK_QUIET + keys + outcome.QUIET
    assert kept_waits(recording) == pytest.approx(want)


def test_a_click_where_the_pointer_already_is_waits_for_no_move() -> None:
    recording = sample_recording()
    steps = list(recording.steps)
    steps[3] = replace(steps[3], action=Action(ActionKind.CLICK, x=100, y=200))
    again = replace(recording, steps=steps)
    assert kept_waits(again) == pytest.approx(kept_waits(recording) - look.POLL)


def test_keys_are_counted_at_the_recorded_pace() -> None:
    recording = sample_recording()
    steps = list(recording.steps)
    steps[1] = replace(steps[1], action=replace(steps[1].action, key_ms=40))
    slower = replace(recording, steps=steps)
    assert kept_waits(slower) == pytest.approx(kept_waits(recording) + 13 * (0.040 - 0.012))
