"""Finding a moved task area on synthetic screens (the real-screen proof is in e2e)."""

from __future__ import annotations

import numpy as np
import pytest

from mmcli.fingerprint import Frame, Rect
from mmcli.model import Action, ActionKind
from mmcli.relocate import find_offset, moved, shifted

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
