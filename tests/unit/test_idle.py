"""What changes again is learned as changing on its own; what changes once (the last
action's late answer, the app finishing its start) is not: between the agent's actions
(`IdleWatch.note_repeated`) and in the idle watch before it starts (`IdleWatch.observe`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from PIL import Image, ImageDraw

from mmcli.backends import FakeBackend
from mmcli.capture import idle
from mmcli.capture.idle import IdleWatch
from mmcli.screen.fingerprint import Frame, Rect

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


class Clock:
    """A monotonic clock that moves only when the watch sleeps."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Scripted(FakeBackend):
    """A screen drawn by `draw` at the clock's time since the watch began."""

    def __init__(self, clock: Clock, draw: Callable[[float], Image.Image]) -> None:
        super().__init__(draw(0.0))
        self.clock, self.draw, self.began = clock, draw, clock.now

    def grab(self) -> Frame:
        self.screen = self.draw(self.clock.now - self.began)
        return super().grab()


def box_until(gone: float) -> Callable[[float], Image.Image]:
    """A "Connecting" box over the form that closes itself at `gone` seconds."""

    def draw(t: float) -> Image.Image:
        image = Image.new("RGB", (1920, 1080), "white")
        if t < gone:
            ImageDraw.Draw(image).rectangle(
                (DIALOG.x, DIALOG.y, DIALOG.right, DIALOG.bottom), fill="#707070"
            )
        return image

    return draw


def seconds_clock(phase: float) -> Callable[[float], Image.Image]:
    """A clock whose seconds tick at `phase`, `phase` + 1, ..."""

    def draw(t: float) -> Image.Image:
        image = Image.new("RGB", (1920, 1080), "white")
        tick = math.floor(t - phase) + 1
        x = CLOCK.x + 8 * (tick % 8)
        ImageDraw.Draw(image).rectangle((x, CLOCK.y, x + 10, CLOCK.y + 14), fill="black")
        return image

    return draw


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(idle, "time", fake)
    return fake


def test_the_idle_watch_does_not_learn_a_box_that_closes_once(clock: Clock) -> None:
    """The app still finishing its start when the recording began: its "Connecting" box
    closes 0.5 s into the watch. Seen changing once, it is not learned (learned, a
    dialog at the same place at replay was masked and clicked under)."""
    watch = IdleWatch(Scripted(clock, box_until(0.5)))
    watch.observe(1.0)
    assert watch.volatile == []
    assert clock.now - 100.0 < 1.0 + idle.OBSERVE_GRACE


@pytest.mark.parametrize("phase", [0.05, 0.3, 0.62, 0.95])
def test_the_idle_watch_learns_a_clock_s_seconds_seen_ticking_once_in_its_time(
    clock: Clock, phase: float
) -> None:
    """A one-second watch sees a seconds clock tick once: it watches on until the tick
    comes again, and learns it."""
    watch = IdleWatch(Scripted(clock, seconds_clock(phase)))
    watch.observe(1.0)
    assert watch.volatile and all(r.intersects(CLOCK) for r in watch.volatile)
    assert clock.now - 100.0 <= 1.0 + idle.OBSERVE_GRACE + idle.SAMPLE_EVERY


def test_the_idle_watch_takes_its_time_only_on_a_still_screen(clock: Clock) -> None:
    watch = IdleWatch(Scripted(clock, box_until(99.0)))
    watch.observe(1.0)
    assert watch.volatile == []
    assert clock.now - 100.0 == pytest.approx(1.0)


SPIN = Rect(1720, 950, 120, 20)
"""A bar 20 px wide sweeping across this canvas, 4 px every 20 ms: its sweep takes 0.5 s,
a multiple of the watch's pace."""


def sweeping(t: float) -> Image.Image:
    image = Image.new("RGB", (1920, 1080), "white")
    x = SPIN.x + (math.floor(t / 0.02) * 4) % 100
    ImageDraw.Draw(image).rectangle((x, SPIN.y, x + 19, SPIN.bottom - 1), fill="#2050c0")
    return image


@pytest.mark.parametrize("seed", range(10))
def test_an_animation_whose_period_is_a_multiple_of_the_pace_is_learned_across_its_sweep(
    clock: Clock, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Sampled at an even pace the bar is seen at the same few places of its sweep
    however long the watch goes on (79 % of it, at every seed); the samples come at
    uneven times, and six seconds learn 97 % of it or more."""
    import random

    monkeypatch.setattr(idle, "_pace", random.Random(seed))
    watch = IdleWatch(Scripted(clock, sweeping))
    watch.observe(6.0)
    left = max(min(r.x for r in watch.volatile), SPIN.x)
    right = min(max(r.right for r in watch.volatile), SPIN.x + 116)
    assert right - left >= 0.95 * 116, watch.volatile
