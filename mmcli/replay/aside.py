"""Taking the pointer off a click's target before checking it, when replay finds the
pointer already resting there.

A target recorded without its hover (an app that draws it late, past the recorder's
wait: Swing's rollover) is checked on the screen as found and clicked by moving and
pressing at once (`Looker.match_as_found`). When the pointer already rests on that
target at replay (left there by an earlier run, or by a person), the screen as found
shows a hover the recording never saw: neither the look as found nor the look with the
pointer on the target matches. Replay then moves the pointer off the target's window,
once, and looks again, only when the window system says this changes nothing over the
task:

- every child of the node is a click in one window the recording knows, there once, and
  the pointer rested within `REACH` of a click's recorded point when the look began;
- a point `OUT` px beside that window's frame (left, right, above or below, in that
  order) is on the screen, away from its corners (the fail-safe), and over no window at
  all: the pointer brings no hover anywhere;
- after the move, the windows over the task are the same ones in the same order (none
  hidden, none revealed);
- the still screen then passes the full check, and the click moves and presses at once.

Otherwise the pointer goes back where it was found, and the screen as found is what
replay reports.
"""

from __future__ import annotations

from collections.abc import Callable

from mmcli.backends.base import Backend, Settled, in_failsafe_corner
from mmcli.model import Step
from mmcli.replay.focus import clicked_window
from mmcli.replay.judge import Judge, Match
from mmcli.screen.fingerprint import Rect
from mmcli.screen.relocate import Offset, moved_point
from mmcli.screen.windows import StackedWindow, layout

QUIET = 0.015
LIMIT = 0.25
"""The screen after the pointer moved aside is checked once still this long (at most
LIMIT): the app has taken its hover off the target."""
REACH = 32
"""How far (px) from a click's recorded point the pointer may rest and be taken for
resting on its target (the target patch's half width)."""
OUT = 16
"""How far (px) beside the target window's frame the pointer is put."""


class StepAside:
    def __init__(self, backend: Backend, judge: Judge, progress: Callable[[str], None]) -> None:
        self.backend = backend
        self.judge = judge
        self.progress = progress

    def attempt(
        self,
        group: list[Step],
        found: Settled,
        offset: Offset,
        depth: int,
        rested: tuple[int, int] | None,
    ) -> Match | None:
        """`group`'s clicks, which the screen (`found`, with the pointer on their target)
        did not match, when the look began with the pointer resting there (`rested`):
        the match once the pointer stands beside their window, under the rules above;
        None (the pointer back where it was) otherwise."""
        if rested is None or found.stack is None:
            return None
        window = _resting_in(group, rested, offset, found.stack)
        if window is None:
            return None
        pointer = self.backend.pointer()
        point = self._beside(window.frame, pointer, found.stack)
        if point is None:
            return None
        self.backend.move(*point)
        after = self.backend.settle(QUIET, LIMIT, windows=True)
        scope = self.judge.scope(offset)
        if after.stack is not None and layout(after.stack, scope) == layout(found.stack, scope):
            match = self.judge.first_match(group, after.frame, offset, after.stack)
            if match.step is not None and match.offset == offset and after.still:
                self.progress(
                    f"step {depth + 1}: the pointer rested on the target, drawn hovered "
                    f"as the recording never saw it; moved it aside to {point} (the "
                    "windows over the task unchanged) and checked the screen there"
                )
                return match
        self.backend.move(*pointer)
        return None

    def _beside(
        self, frame: Rect, pointer: tuple[int, int], stack: list[StackedWindow]
    ) -> tuple[int, int] | None:
        """A point `OUT` px beside `frame`, on the screen, out of its corners, over no
        window; None when there is none."""
        width, height = self.backend.size()
        screen = Rect(0, 0, width, height)
        x, y = pointer
        for point in (
            (frame.x - OUT, y),
            (frame.right + OUT, y),
            (x, frame.y - OUT),
            (x, frame.bottom + OUT),
        ):
            if not screen.holds(*point):
                continue
            if in_failsafe_corner(point, (width, height)):
                continue
            if any(w.frame.holds(*point) for w in stack):
                continue
            return point
        return None


def _resting_in(
    group: list[Step], pointer: tuple[int, int], offset: Offset, stack: list[StackedWindow]
) -> StackedWindow | None:
    """The one window the group's clicks were recorded in (`focus.clicked_window`), as it
    stands now, when the pointer rests on (within `REACH` of) one of their points; else
    None."""
    ref = clicked_window(group, offset)
    live = [w for w in stack if w.ref == ref]
    if ref is None or len(live) != 1:
        return None
    for step in group:
        point = moved_point(step.fingerprint.pointer, offset)
        if point is not None and _near(point, pointer):
            return live[0]
    return None


def _near(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return abs(a[0] - b[0]) <= REACH and abs(a[1] - b[1]) <= REACH
