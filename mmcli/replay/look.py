"""Looking at the screen until a step's screen is there: first the screen as found (still,
the pointer where it is), for the clicks among the step's children, which are then acted
on by moving and pressing at once, so replay never checks a hover its own pointer brought;
then the pointer put where the step had it, a still screen grabbed and judged, again each
time it changes, until a child matches or the timeout; Ctrl-C and the fail-safe corner
looked at between two looks."""

from __future__ import annotations

import time
from collections.abc import Callable

from mmcli.backends.base import Backend, Settled, in_failsafe_corner
from mmcli.desktop.agent import Interrupt
from mmcli.errors import Aborted
from mmcli.model import Action, ActionKind, Step
from mmcli.replay.aside import StepAside
from mmcli.replay.focus import FocusHandBack
from mmcli.replay.judge import Judge, Match, fewer
from mmcli.screen.fingerprint import Frame
from mmcli.screen.relocate import Offset, moved_point
from mmcli.screen.windows import described_all, focus_taken, keyboard_taken

POLL = 0.03
"""Before the pointer moves on, the screen must have been still this long since the last
action and the last change (the app has reacted to the action)."""
CHECK_QUIET = 0.015
"""A screen is checked once still this long: after the pointer moved, hover effects have
drawn. Checking too early only costs another look; acting needs a match on a still screen."""
CHECK_LIMIT = 0.25
"""At most this long each look waits for a still screen (then the interrupt, the fail-safe
and the timeout are looked at)."""
APPROACH_SETTLE_LIMIT = 1.0
"""At most this long, replay waits for the screen to be still before moving the pointer."""
WAIT_NOTICE = 1.0
"""After this many seconds of waiting for a step's screen, say so."""
KEYBOARD_WAIT = 0.5
"""At most this long, replay waits for the keyboard to come to the window a key step
typed into (the window manager may still be moving the focus after a click)."""
KEYED = {ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY}


def signed(offset: Offset) -> str:
    return f"({offset[0]:+d}, {offset[1]:+d})"


class Looker:
    def __init__(
        self,
        backend: Backend,
        judge: Judge,
        interrupt: Interrupt,
        timeout: float,
        dry_run: bool,
        progress: Callable[[str], None],
        shown: Callable[[Action, Offset], str],
    ) -> None:
        self.backend = backend
        self.judge = judge
        self.interrupt = interrupt
        self.timeout = timeout
        self.dry_run = dry_run
        self.progress = progress
        self.shown = shown
        """An action as progress tells it, with the task at an offset."""
        self.offset: Offset = (0, 0)
        """How far the task has moved from where it was recorded (`--relocate`)."""
        self.focus = FocusHandBack(backend, judge, progress)
        self.aside = StepAside(backend, judge, progress)
        self.found_pointer: tuple[int, int] | None = None
        """Where the pointer was when the current step's look began."""
        self._found: Settled | None = None
        """The screen as found for the coming look (`as_found`), before any input since."""

    def keyboard_taken(self, step: Step) -> str | None:
        """Before a key step: why its keys must not be sent (another window has the
        keyboard: the window manager's active window, `windows.keyboard_taken`, or a
        window that took the input focus itself, `windows.focus_taken`), or None. Known
        only where the recording kept the window it typed into and the window system
        says which has the focus now."""
        if step.window is None or step.action.kind not in KEYED:
            return None
        deadline = time.monotonic() + KEYBOARD_WAIT
        while True:
            why = keyboard_taken(step.window, self.backend.keyboard_window(), self.offset)
            if why is None:
                why = focus_taken(step.window, self.backend.stack())
            if why is None or time.monotonic() >= deadline:
                return why
            time.sleep(POLL)

    def check_abort(self) -> None:
        if self.interrupt.signum is not None:
            raise Aborted("interrupted; stopped between two actions")
        if in_failsafe_corner(self.backend.pointer(), self.backend.size()):
            raise Aborted("fail-safe: pointer in a screen corner; stopped between two actions")

    def as_found(self) -> Frame:
        """The screen as this step finds it, once still (at most
        `APPROACH_SETTLE_LIMIT`), before replay moves the pointer; the look that follows
        begins with it."""
        self._found = self.backend.settle(POLL, APPROACH_SETTLE_LIMIT, windows=True)
        return self._found.frame

    def _screen_as_found(self) -> Settled:
        """`as_found`'s screen if nothing was given input or drawn since, else grabbed now."""
        found, self._found = self._found, None
        log = self.backend.changes()
        if (
            found is None
            or self.backend.input_at > found.at
            or log is None
            or log.changed_at > found.at
        ):
            found = self.backend.settle(POLL, APPROACH_SETTLE_LIMIT, windows=True)
        return found

    def match_as_found(self, children: list[Step]) -> Match | None:
        """The clicks among `children` whose recorded pointer is elsewhere than the
        pointer now, checked on the screen as found: a match there is acted on by a click
        that moves and presses at once (on X11 with every other client held still from
        the check on), so the pointer never rests on the target before the press and no
        hover it brings is judged. Swing drew its Save button's rollover 20-400 ms after
        the pointer arrived, past the recorder's wait: the recorded screen showed the
        button plain, and replay, which had moved there to look, saw the rollover come.
        A target recorded with its hover drawn does not match here: the look moves the
        pointer there and checks it with the hover. None: no match as found."""
        pointer = self.backend.pointer()
        clicks = [
            c
            for c in children
            if c.action.kind is ActionKind.CLICK
            and moved_point(c.fingerprint.pointer, self.offset) not in (None, pointer)
        ]
        if not clicks or self.dry_run:
            self._found = None
            return None
        found = self._screen_as_found()
        if not found.still:
            return None
        match = self.judge.first_match(clicks, found.frame, self.offset, found.stack)
        if match.step is None or match.offset != self.offset:
            return None
        return match

    def _tell_left_out(self, match: Match, depth: int) -> None:
        if match.left_out:
            windows = described_all(match.left_out)
            self.progress(
                f"step {depth + 1}: left out of the check, another app's over no target "
                f"or typed field: {windows}"
            )

    def wait_for_match(self, children: list[Step], depth: int) -> Match:
        """Look until one child matches a still screen (`Backend.settle`).

        Children recorded with the pointer in different places (branches that start with
        clicks on different targets) are each checked with the pointer where they had it,
        so that hover effects compare like with like.
        """
        started = time.monotonic()
        deadline = started + self.timeout
        self.found_pointer = None if self.dry_run else self.backend.pointer()
        found = self.match_as_found(children)
        if found is not None:
            self._tell_left_out(found, depth)
            return found
        groups: dict[tuple[int, int] | None, list[Step]] = {}
        for child in children:
            groups.setdefault(child.fingerprint.pointer, []).append(child)
        best: Match | None = None
        told = False
        handed = self.dry_run  # a dry run changes nothing on the screen
        stepped = self.dry_run
        pointed: set[Offset] = set()
        """The offsets a step's window was found moved to, the pointer brought there."""
        looked = 0.0
        while True:
            if not told and time.monotonic() - started > WAIT_NOTICE:
                told = True
                self.progress(
                    f"step {depth + 1}: waiting for the screen of "
                    f"{self.shown(children[0].action, self.offset)} (up to {self.timeout:g}s)"
                )
            for pointer, group in groups.items():
                self.check_abort()
                self.approach(moved_point(pointer, self.offset))
                settled = self.backend.settle(CHECK_QUIET, CHECK_LIMIT, windows=True)
                looked = settled.at
                match = self.judge.first_match(group, settled.frame, self.offset, settled.stack)
                if match.step is not None and match.offset != self.offset:
                    # Found moved: check again with the pointer where it belongs there.
                    self.offset = match.offset
                    self.progress(
                        f"step {depth + 1}: the task is found moved by {signed(self.offset)} "
                        f"(by {match.found_by}); checking it there"
                    )
                    match = Match(None, match.verdict, match.frame, match.offset)
                    continue
                if (
                    match.step is None
                    and match.found_by == "its window"
                    and match.offset != self.offset
                    and match.offset not in pointed
                ):
                    # The step's window is found moved, but what differs there may be
                    # the pointer's doing (a button recorded under it, hovered): look
                    # again with the pointer where it belongs there.
                    pointed.add(match.offset)
                    self.offset = match.offset
                    continue
                if match.step is not None and (settled.still or self.dry_run):
                    self._tell_left_out(match, depth)
                    return match
                if match.step is None and (best is None or not fewer(best, match)):
                    # Of the looks with the fewest differences, the latest: a refusal
                    # tells the screen that stayed, not a redraw it passed through.
                    best = match
                if match.step is None and not stepped and settled.still:
                    stepped = True  # the pointer is moved aside once a wait at most
                    aside = self.aside.attempt(
                        group, settled, self.offset, depth, self.found_pointer
                    )
                    if aside is not None:
                        return aside
                if match.step is None and not handed and settled.still:
                    given = self.focus.attempt(group, settled, self.offset, depth)
                    handed = self.focus.activated  # the focus is moved once a wait at most
                    if given is not None:
                        return given
            if time.monotonic() >= deadline:
                return best or match
            # Nothing matched: look again once the screen changes.
            self.backend.wait_change(looked, POLL)

    def give_back_pointer(self) -> None:
        """After a divergence, put the pointer back where the step's look found it: the
        agent's first screenshot shows the screen as replay found it, not a tooltip under
        the pointer replay parked on the recorded target."""
        found = self.found_pointer
        if found is not None and self.backend.pointer() != found:
            self.backend.move(*found)

    def approach(self, point: tuple[int, int] | None) -> bool:
        """Put the pointer back where it was when the step was recorded (on the target of
        a click), so hover effects match, and so keys go where they went (with
        focus-follows-mouse, the window under the pointer gets them). True if it moved."""
        if self.dry_run or point is None or point == self.backend.pointer():
            return False
        # The agent moved on once the app had reacted to its last action; moving the
        # pointer while a dialog is still being mapped under it was seen to lose the
        # dialog (Tk, no window manager). So the screen must be still first.
        self.backend.wait_still(POLL, APPROACH_SETTLE_LIMIT)
        self.backend.move(*point)
        return True
