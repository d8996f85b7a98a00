"""Between the agent's actions, what changes again is learned as changing on its own;
what changes once (the last action's late answer) is not (`IdleWatch.note_repeated`)."""

from __future__ import annotations

import pytest
from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.capture import idle
from mmcli.capture.idle import IdleWatch
from mmcli.screen.fingerprint import Rect

CLOCK = Rect(1800, 10, 80, 20)
DIALOG = Rect(700, 400, 320, 130)


@pytest.fixture
def watch() -> IdleWatch:
    return IdleWatch(FakeBackend(Image.new("RGB", (1920, 1080), "white")))


def at(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    monkeypatch.setattr(idle.time, "monotonic", lambda: seconds)


def test_a_region_changing_again_a_second_later_is_learned(
    watch: IdleWatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    at(monkeypatch, 10.0)
    once = watch.note_repeated([], [CLOCK])
    at(monkeypatch, 11.0)
    watch.note_repeated(once, [CLOCK])
    assert CLOCK in watch.volatile


def test_an_answer_drawn_in_two_frames_is_not_learned(
    watch: IdleWatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dialog that fades in over two samples, 0.25 s apart: one late answer."""
    at(monkeypatch, 10.0)
    once = watch.note_repeated([], [DIALOG])
    at(monkeypatch, 10.25)
    once = watch.note_repeated(once, [DIALOG])
    assert watch.volatile == []
    at(monkeypatch, 12.0)
    watch.note_repeated(once, [CLOCK])  # elsewhere, later: not the dialog again
    assert watch.volatile == []
