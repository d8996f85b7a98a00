"""A VNC server's lag, learned from the first change reported at each click's spot."""

from __future__ import annotations

import time

import pytest

from mmcli.backends.base import ChangeLog
from mmcli.backends.serverlag import (
    CLICK_SEEN_WITHIN,
    LAG_LEARNED,
    LAG_MARGIN,
    LAG_SAMPLES,
    ServerLag,
)
from mmcli.screen.fingerprint import Rect


def _clicked_ago(lag: ServerLag, seconds: float, point: tuple[int, int]) -> None:
    lag.clicked(time.monotonic() - seconds, point)


def _learned(lag: ServerLag, log: ChangeLog, seconds: float) -> None:
    _clicked_ago(lag, seconds, (10, 10))
    log.note(areas=[Rect(0, 0, 20, 20)])
    lag.lags  # noqa: B018 - learned now, before the next click's change


def test_before_any_click_nothing_is_waited_after_an_input() -> None:
    assert ServerLag(ChangeLog()).after_input() == 0.0


def test_a_change_at_the_click_s_spot_tells_the_lag() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    _clicked_ago(lag, 0.4, (100, 50))
    log.note(areas=[Rect(90, 40, 40, 20)])
    (learned,) = lag.lags
    assert learned == pytest.approx(0.4, abs=0.05)


def test_a_lag_counts_once_enough_clicks_told_one() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    for _ in range(LAG_LEARNED - 1):
        _learned(lag, log, 0.4)
        assert lag.after_input() == 0.0
    _learned(lag, log, 0.4)
    assert lag.after_input() == pytest.approx(LAG_MARGIN * 0.4, abs=0.05)


def test_a_change_elsewhere_tells_nothing_until_the_spot_changes() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    _clicked_ago(lag, 0.6, (100, 50))
    log.note(areas=[Rect(900, 700, 40, 20)])  # a clock ticking far from the click
    assert lag.lags == []
    assert lag.after_input() == 0.0
    log.note(areas=[Rect(95, 45, 10, 10)])
    assert lag.lags[0] == pytest.approx(0.6, abs=0.05)


def test_the_middle_of_the_latest_lags_counts_not_a_slow_app_or_a_chance_change() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    for seconds in (0.4, 1.2, 0.42):  # a menu the app took 1.2 s to post
        _learned(lag, log, seconds)
    assert lag.after_input() == pytest.approx(LAG_MARGIN * 0.42, abs=0.05)
    _learned(lag, log, 0.01)  # a caret that blinked at the spot by chance
    assert lag.after_input() == pytest.approx(LAG_MARGIN * 0.4, abs=0.05)  # of 4, the shorter


def test_only_the_latest_clicks_count() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    for _ in range(LAG_SAMPLES):
        _learned(lag, log, 0.8)
    assert lag.after_input() == pytest.approx(LAG_MARGIN * 0.8, abs=0.05)
    for _ in range(LAG_SAMPLES // 2 + 1):
        _learned(lag, log, 0.3)
    assert lag.after_input() == pytest.approx(LAG_MARGIN * 0.3, abs=0.05)


def test_a_click_nothing_was_drawn_at_is_forgotten() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    _clicked_ago(lag, CLICK_SEEN_WITHIN + 0.5, (10, 10))
    assert lag.lags == []
    log.note(areas=[Rect(0, 0, 20, 20)])  # long after: not this click's doing
    assert lag.lags == []


def test_a_reaction_the_app_took_its_time_over_tells_nothing() -> None:
    log = ChangeLog()
    lag = ServerLag(log)
    _clicked_ago(lag, CLICK_SEEN_WITHIN + 0.5, (10, 10))
    _clicked_ago(lag, 0.4, (500, 500))
    log.note(areas=[Rect(0, 0, 20, 20)])  # a page loaded two seconds after its click
    log.note(areas=[Rect(490, 490, 20, 20)])
    assert lag.lags == [pytest.approx(0.4, abs=0.05)]
