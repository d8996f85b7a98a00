"""Giving the focus back to the task's window before a click, without changing what is
over the task.

A window that lost the focus to another one (a terminal far away, a small window a
program opened) is drawn as inactive: its title bar, GTK's "backdrop" colours, no focus
ring. The screen as found then differs from the recording in exactly those cues, and the
click itself would give the window the focus back. Replay gives it first, as the click
would, only when the window system says this changes nothing over the task:

- every child of the node is a click, and the recording knows the window it clicked in;
- the window system shows that window, once, with the focus elsewhere, and no window
  above it covers any part of it (a dialog over the form, a terminal in front of it:
  raising the form would hide them, so the screen as found diverges);
- after the window manager made it active, the windows over the task are the same ones
  in the same order (none hidden, none revealed), and nothing covers it still;
- the screen then passes the full check.

Otherwise the focus is given back to the window that had it, and the screen as found is
what replay reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mmcli.backends.base import Backend, Settled
from mmcli.model import ActionKind, Step
from mmcli.replay.judge import Judge, Match
from mmcli.screen.relocate import Offset
from mmcli.screen.windows import StackedWindow, WindowRef, same_over, uncovered

QUIET = 0.015
LIMIT = 0.25
"""The screen after the focus moved is checked once still this long (at most LIMIT)."""
REDRAW_WAIT = 1.5
"""How long after the focus moved the window's redraw as active may take before the hand
back fails: the window manager's title bar and the toolkit's colours are drawn a while
after (GTK on a loaded machine: past 0.25 s in 1 of 4 replays). Looked at again each
time the screen changes; the focus itself is moved once."""


class FocusHandBack:
    def __init__(self, backend: Backend, judge: Judge, progress: Callable[[str], None]) -> None:
        self.backend = backend
        self.judge = judge
        self.progress = progress
        self.activated = False
        """The last `attempt` asked the window manager to move the focus."""

    def attempt(
        self, group: list[Step], found: Settled, offset: Offset, depth: int
    ) -> Match | None:
        """`group`'s clicks, which the screen as found (`found`) did not match: the match
        on the screen after giving their window the focus, under the rules above; None
        (the focus where it was found) when a rule does not hold."""
        self.activated = False
        ref = clicked_window(group, offset)
        stack = found.stack
        if ref is None or stack is None:
            return None
        i = uncovered(stack, ref)
        if i is None or stack[i].focused:
            return None  # covered, or it has the focus: no focus cue explains the difference
        had_focus = next((w for w in stack if w.focused and w.xid), None)
        self.activated = True
        if self.backend.activate(stack[i].xid):
            match = self._redrawn(group, stack, ref, offset)
            if match is not None:
                self.progress(
                    f"step {depth + 1}: the window at the click had lost the focus to "
                    "another window that covers none of it; gave it the focus, as the "
                    "click would (the windows over the task unchanged)"
                )
                return match
        if had_focus is not None:  # the screen as it was found, for the report and the agent
            self.backend.activate(had_focus.xid)
        return None

    def _redrawn(
        self, group: list[Step], stack: list[StackedWindow], ref: WindowRef, offset: Offset
    ) -> Match | None:
        """Once the window was given the focus: the match on a still screen where the
        windows over the task are still those found, looked at again as the screen changes
        for up to `REDRAW_WAIT`; None when the windows changed or no look matched."""
        deadline = time.monotonic() + REDRAW_WAIT
        scope = self.judge.scope(offset)
        while True:
            after = self.backend.settle(QUIET, LIMIT, windows=True)
            if after.stack is None or not same_over(stack, after.stack, scope, ref):
                return None
            match = self.judge.first_match(group, after.frame, offset, after.stack)
            if match.step is not None and match.offset == offset and after.still:
                return match
            if time.monotonic() >= deadline:
                return None
            self.backend.wait_change(after.at, min(LIMIT, max(deadline - time.monotonic(), 0)))


def clicked_window(group: list[Step], offset: Offset) -> WindowRef | None:
    """The one window `group`'s clicks were recorded in, where it stands now with the task
    at `offset`; None when a child is no click, or they were recorded in several windows
    or in none the recording knows."""
    if not group or not all(s.action.kind is ActionKind.CLICK for s in group):
        return None
    windows = {s.window for s in group}
    if len(windows) != 1:
        return None
    (window,) = windows
    if window is None:
        return None
    return WindowRef(window.wm_class, window.rect.moved(*offset))
