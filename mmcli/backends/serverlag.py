"""How late a VNC server reports a change, learned as it is driven: a server sends a
change some time after it happens (x11vnc polls its display and defers its updates), so a
screen that has been still since an input may only not have been sent yet. Each click's
first change reported at the click's own spot (a caret, a pressed button, a focus ring:
what an app draws at once) tells the server's lag then; a screen counts as still no sooner
than the middle one of the last few lags, with a margin, after the last input
(`after_input`), and, as on any display, once it has not changed for a while. The middle
one, not the longest: a click whose app took its time (a menu posted, a page loaded) tells
the app's pace, not the server's, and would slow every step after it; nor the shortest:
a change at the spot that came by chance (a caret blinking there) tells nothing.

Measured against x11vnc serving Xvfb (`benchmarks/README.md`, "Over VNC"): at its
defaults the first update came 20-55 ms after a click; with `-defer 400`, 410-420 ms;
with `-wait 300` (a server that polls its screen slowly), 400-780 ms, 470 ms the median.
A wait of 150 ms judged a screen the server had not yet brought up to date. The lag is
waited after the input, not as the stillness every change restarts: a caret that blinks
every 300 ms is never still for 500 ms.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence

from mmcli.backends.base import ChangeLog

SERVER_LAG = 0.15
"""The screen counts as still at least this long after the last change and the last input:
x11vnc at its defaults sent the first update 20-55 ms after a click or key here (median 47
ms after a click)."""
LAG_SAMPLES = 5
"""How many of the latest clicks' lags count (the middle one of them)."""
LAG_LEARNED = 3
"""A lag counts once this many clicks told one: the middle of fewer is one of two, either
a slow app's or a chance change's (x11vnc `-defer 400` drew a first click's spot 7 ms
after it, the next ones 410-420 ms)."""
LAG_MARGIN = 1.5
"""The wait is the middle recent lag times this: a polling server's lag varies with where
in its poll a change falls (x11vnc `-wait 300`: 470 ms the median, 780 ms the longest)."""
CLICK_SEEN_WITHIN = 1.5
"""A click whose spot has not changed this long after it tells nothing (no reaction
drawn there, or one the app took its time over: a page loaded)."""


class ServerLag:
    """How long after an input its changes may still be on their way, learned from clicks
    (`clicked`) and the changes `log` noted after them."""

    def __init__(self, log: ChangeLog, recalled: Sequence[float] = ()) -> None:
        """`recalled`: the lags an earlier connection to this server learned, oldest
        first (`lagmemory`): they count until this connection's clicks replace them."""
        self._log = log
        self._pending: list[tuple[float, tuple[int, int]]] = []
        self._lags: deque[float] = deque(recalled, maxlen=LAG_SAMPLES)

    def clicked(self, at: float, point: tuple[int, int]) -> None:
        """A click was given at `point` at `at` (monotonic)."""
        self._pending.append((at, point))

    @property
    def lags(self) -> list[float]:
        """The lags learned so far that count (seconds), oldest first."""
        self._learn()
        return list(self._lags)

    def after_input(self) -> float:
        """How long after the last input the screen counts as still at the soonest: the
        middle one of the recent lags (of four, the shorter) times `LAG_MARGIN`, once
        `LAG_LEARNED` clicks told one (0 before)."""
        lags = sorted(self.lags)
        if len(lags) < LAG_LEARNED:
            return 0.0
        return LAG_MARGIN * lags[(len(lags) - 1) // 2]

    def _learn(self) -> None:
        now = time.monotonic()
        waiting: list[tuple[float, tuple[int, int]]] = []
        for at, point in self._pending:
            seen = self._log.first_after(at, at=point)
            if seen is not None and seen - at <= CLICK_SEEN_WITHIN:
                self._lags.append(seen - at)
            elif seen is None and now - at < CLICK_SEEN_WITHIN:
                waiting.append((at, point))
        self._pending = waiting
