"""The plain sentence a divergence leads with, from the matcher's differences."""

from __future__ import annotations

import pytest

from mmcli.model import ActionKind
from mmcli.screen.explain import headline, moved_by
from mmcli.screen.fingerprint import Rect
from mmcli.screen.matcher import Difference, Verdict

TARGET = Difference("target", Rect(230, 165, 40, 40), "patch cells", 40, 6)
DIALOG = Difference("regions", Rect(200, 150, 300, 160), "changed region on the target (px)", 9, 0)
SMALL = Difference("regions", Rect(600, 150, 40, 20), "changed region (px)", 4, 0)
TILE = Difference("grid", Rect(0, 0, 120, 120), "tile bits", 20, 6)


@pytest.mark.parametrize(
    "diffs,action,expected",
    [
        ((TARGET, DIALOG), ActionKind.CLICK, "A window or dialog covers the click target"),
        ((TARGET,), ActionKind.CLICK, "The click target looks different"),
        ((TARGET,), ActionKind.TYPE, "Text differs in the field being typed into"),
        ((SMALL,), ActionKind.CLICK, "Something new appeared near the task"),
        ((TILE,), ActionKind.CLICK, "Part of the screen near the task looks different"),
    ],
)
def test_sentences(diffs: tuple[Difference, ...], action: ActionKind, expected: str) -> None:
    assert headline(Verdict(diffs), action) == expected


def test_a_moved_window_says_how_far_and_suggests_relocate() -> None:
    verdict = Verdict((TILE,))
    assert headline(verdict, ActionKind.CLICK, found_at=(60, 0)) == (
        "The window moved 60 px right; replay with --relocate to act there"
    )
    assert headline(verdict, ActionKind.CLICK, moved=(-10, 25)) == (
        "The window moved 10 px left and 25 px down, and differs there"
    )
    assert moved_by((0, -3)) == "3 px up"


def test_a_bare_task_area_is_no_window_of_the_app() -> None:
    import numpy as np

    from mmcli.screen.explain import bare

    desktop = np.full((150, 200), 40, np.uint8)
    form = desktop.copy()
    form[25:100, 25:150] = 220  # a window
    form[40:45, 30:140] = 0  # text on it
    area = Rect(100, 100, 500, 300)
    assert bare(desktop, area) and bare(desktop, None)
    assert not bare(form, area)
    assert bare(form, Rect(700, 450, 60, 60))  # a corner of the desktop only
    verdict = Verdict((TARGET, DIALOG))
    assert headline(verdict, ActionKind.CLICK, no_window=True).startswith(
        "No window of the recorded app is on the screen"
    )


def test_no_window_names_the_window_the_recording_began_in() -> None:
    sentence = headline(Verdict((TARGET,)), ActionKind.CLICK, no_window=True, window="Acme")
    expected = "No window of the recorded app is on the screen (it expected 'Acme')"
    assert sentence.startswith(expected)
