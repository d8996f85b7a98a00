"""The recorder's waits before it keeps a screen, and what they learn of the app's pace.

Before each action is captured, the screen must have answered the last input (a click, a
key, typed text: `Waits.await_answer`) and drawn the hover effect the pointer's move onto
the target brings (`Waits.await_hover`). How long an app took is learned per kind of
input and window class (`AnswerTimes`): an app that answers in 5 ms is not waited on for
250 ms when an input changes nothing."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from mmcli.backends.base import Backend
from mmcli.capture.settling import SETTLE_QUIET, beyond_carets
from mmcli.capture.steps import Capture
from mmcli.model import Action, ActionKind
from mmcli.screen.analysis import window_changed_at
from mmcli.screen.fingerprint import Frame
from mmcli.screen.windows import WindowRef

ANSWER_WAIT = 0.25
"""After an input an app answers on the screen (a click, a key, typed text), the next
screen is kept once it has answered, waiting at most this long from the input: some apps
first draw a while after it (LibreOffice Calc 80-110 ms after a Tab, measured with
DAMAGE), and a screen still until then is the one before the input. An agent that
thought longer than this is captured at once, as before."""
TYPED_WAIT = 2.0
"""Typed text that shows is always drawn: the screen after it is kept once it shows more
than a caret's blink, waiting at most this long from the last key, whatever the app's
answers were before. Wine's notepad over VNC, with the CPU taken by other work, drew
"Ada Lovelace, 1200" later than `ANSWER_WAIT`: the step after it was kept with the field
empty, and every replay diverged on the text (safely, but needlessly)."""
ANSWER_SEEN = 2
"""Once an app has answered a kind of input this many times in a recording, the wait for
its answer is bounded by how fast it answered (`AnswerTimes`), not `ANSWER_WAIT`: an
input that changes nothing (End with the caret at the end, a click into the field that
has the keyboard) would otherwise cost the whole `ANSWER_WAIT` each time."""
ANSWER_MARGIN = 3.0
"""... by this many times its slowest answer to that kind of input in that window class,"""
ANSWER_FLOOR = 0.05
"""... and never less than this (s)."""
HOVER_WAIT = 0.06
"""After the pointer moved onto a click's target, the screen is kept once the app has drawn
its hover effect there, waiting at most this long from the move: a browser draws it on
its next frame (Firefox, measured: a Save button kept without its hover 20 ms after the
move, in 1 of 7 recordings, and every replay of that recording diverged on it). An app
that has drawn `ANSWER_SEEN` hover effects is waited on for three times its slowest
(`AnswerTimes`; at least `HOVER_FLOOR`); a target that draws none costs the whole wait,
since a field without a hover effect says nothing of the button beside it."""
HOVER_FLOOR = 0.04
"""The least a learned hover wait is. Chromium drew its Save button's hover 4-15 ms after
the move on an idle machine (20 moves, measured), and past 20 ms with the CPU taken by
three busy loops: two hovers drawn at once had made the wait 20 ms, and twice in about 60
Chromium recordings the third was drawn after it (every replay of those recordings
diverged on the button)."""
ANSWERED = {ActionKind.CLICK, ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY}
KEYS = {ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY}
ANSWER_QUIET = 0.06
"""Within `ANSWER_WAIT` of keyboard input the screen must be still this long, not
`SETTLE_QUIET`: an app may draw its answer to keys in stages (Calc draws typed text in its
cell at once and in its input line 30-40 ms later, measured)."""

APART_WAIT = 0.2
"""A press that would make a double click with the last one is held at most this long
from the last input (well inside the 400-500 ms in which apps take two presses for a
double click) while the recorder looks, on each change, for a window that opened or
closed under it (`window_changed`): a VNC server sent its first update 20-55 ms after a
click, measured, and the dialog's closing may come only with a later one."""
APPROACH = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.DRAG}
"""Actions whose target the pointer is moved onto before the screen is captured."""


class Answer(NamedTuple):
    """The first change after an input: which (kind, window class), and how long after."""

    key: tuple[ActionKind, str]
    seconds: float

    @staticmethod
    def key_of(kind: ActionKind, window: WindowRef | None) -> tuple[ActionKind, str]:
        """Answers are told apart by kind of input and window class ("": no window)."""
        return (kind, window.wm_class if window is not None else "")


@dataclass
class AnswerTimes:
    """How long each app took to answer each kind of input during this recording: the
    first change of the screen after the input (after a key's or a button's press), per
    (kind, window class). An app that answered typed text in 5 ms twice is not waited on
    for 250 ms when a key changes nothing; one that took 100 ms (Calc after a Tab) is
    waited on for all of `ANSWER_WAIT`. Only answers seen on the display count (not a
    caret's blink after an input that did nothing: `Waits.note_answer`): a kind
    answered fewer than `ANSWER_SEEN` times gets the whole wait. The hover effects of
    the pointer's moves are counted the same way, apart (`HOVER_WAIT`)."""

    wait: float = 0.0
    """The wait before `ANSWER_SEEN` answers, and the most ever waited."""
    floor: float = 0.0
    """The least waited once answers are known."""
    slowest: dict[tuple[ActionKind, str], float] = field(default_factory=dict)
    seen: Counter[tuple[ActionKind, str]] = field(default_factory=Counter)

    def note(self, key: tuple[ActionKind, str], seconds: float) -> None:
        self.slowest[key] = max(self.slowest.get(key, 0.0), seconds)
        self.seen[key] += 1

    def news(self, key: tuple[ActionKind, str], seconds: float) -> bool:
        """Whether an answer this fast would change the limit (else it need not be
        told from a caret's blink)."""
        return self.seen[key] < ANSWER_SEEN or seconds > self.slowest[key]

    def limit(self, key: tuple[ActionKind, str]) -> float:
        """How long after an input of this kind to this window class to wait for an answer."""
        if self.seen[key] < ANSWER_SEEN:
            return self.wait
        return min(self.wait, max(self.floor, ANSWER_MARGIN * self.slowest[key]))


def approach(backend: Backend, action: Action) -> bool:
    """Put the pointer where the action will happen, as pyautogui itself would first. A
    pointer already there is not moved: a move is input, which the screen must then be
    still after (`xdotool click 1` after the agent's own `mousemove` waits for nothing).
    True if it moved."""
    point = action.point
    if action.kind in APPROACH and point is not None and backend.pointer() != point:
        backend.move(*point)
        return True
    return False


class Waits:
    """The waits before a capture (the caller holds the recorder's lock), with the answer
    and hover times they learn."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.pressed_at = 0.0
        """When a key or a button was last pressed since the last capture, as the input
        watch saw it (monotonic; 0: none)."""
        self._answers = AnswerTimes(ANSWER_WAIT, ANSWER_FLOOR)
        self._hovers = AnswerTimes(HOVER_WAIT, HOVER_FLOOR)
        self._learning = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mm-answers")
        self._learned: Future[None] | None = None
        """Whether the last capture's screen was an answer, being told apart from a
        caret's blink off the agent's path (`note_answer`)."""
        self._frame: Frame | None = None
        """The screen kept at the last capture, whole (`note_answer`)."""

    def await_answer(
        self, action: Action, last: Capture | None, last_input: float
    ) -> tuple[float, Answer | None]:
        """Before `action` is captured, wait until the screen has answered the last action
        (`last`, captured before), when that was input an app answers given a short while
        ago: until it changed since (at most until `AnswerTimes.limit` after the input:
        `ANSWER_WAIT`, or less for an app that has shown it answers faster). The answer
        is looked for from the last key's or button's press, as the input watch saw it
        (`pressed_at`; else `last_input`): an app draws a typed letter, a focus change or
        a menu before the release, and the next change after the release may be the
        caret's next blink, 0.25 s away. Returns how long the screen must then be still
        (`ANSWER_QUIET` after recent keys, else `SETTLE_QUIET`) and, if the screen changed
        within `ANSWER_WAIT` of the input, how long it took (`note_answer` notes it if the
        screen shows an answer). Text typed right after text joins its step, whose screen
        is the one before the first chunk: no wait. With no change reports, the settling
        alone decides (two grabs that agree)."""
        log = self.backend.changes()
        if last is None or last.action.kind not in ANSWERED or log is None:
            return SETTLE_QUIET, None
        kind = last.action.kind
        if kind is ActionKind.TYPE and action.kind is ActionKind.TYPE:
            return SETTLE_QUIET, None
        since = self.pressed_at or last_input
        key = Answer.key_of(kind, last.window)
        left = since + self.answer_times().limit(key) - time.monotonic()
        if left > 0:
            self.backend.wait_change(since, left)
        if kind is ActionKind.TYPE and (last.action.text or "").strip():
            self._await_text(since + TYPED_WAIT)
        first = log.first_after(since)
        answer = Answer(key, first - since) if first and first - since <= ANSWER_WAIT else None
        if left <= 0:
            return SETTLE_QUIET, answer
        return (ANSWER_QUIET if kind in KEYS else SETTLE_QUIET), answer

    def _await_text(self, deadline: float) -> None:
        """Wait until the screen differs from the one kept before typed text by more than
        a caret's blink (`beyond_carets`), looked at on each change, until `deadline`."""
        before = self._frame
        if before is not None:
            await_screen(
                self.backend,
                self.backend.grab,
                lambda now: now.small.shape != before.small.shape or beyond_carets(before, now),
                deadline,
            )

    def await_hover(
        self,
        action: Action,
        window: WindowRef | None,
        moved: bool,
        last: Action | None,
        last_input: float,
    ) -> None:
        """Before a click is captured, wait for the hover effect the pointer's move onto
        its target may draw there (a change reported at the target), at most until
        `AnswerTimes.limit` after the move (`HOVER_WAIT` at first), and learn how long the
        app took if it drew one. The move is mm's approach (`moved`) or the agent's own,
        the action before (`last`), onto the same point."""
        log = self.backend.changes()
        point = action.point
        if log is None or point is None or action.kind not in APPROACH:
            return
        if moved:
            since = self.backend.input_at
        elif last is not None and last.kind is ActionKind.MOVE and last.point == point:
            since = last_input
        else:
            return
        key = Answer.key_of(ActionKind.MOVE, window)
        deadline = since + self._hovers.limit(key)
        while (first := log.first_after(since, point)) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.backend.wait_change(max(log.changed_at, since), left)
        if first is not None and first - since <= HOVER_WAIT:
            self._hovers.note(key, first - since)

    def note_answer(self, answer: Answer | None, frame: Frame) -> None:
        """Learn how fast the app answered (`AnswerTimes`) when `frame` differs from the
        screen before the last action by more than a caret's blink: a change after an
        input that did nothing visible (the next blink) is not an answer. Telling the two
        apart compares two whole screens at full resolution (a few ms): it is done on a
        worker thread once the agent has its reply, and the next capture waits for it
        before it reads the times (`answer_times`)."""
        before, self._frame = self._frame, frame
        self.pressed_at = 0.0  # the presses of the action captured now come after this
        if answer is None or before is None or before.small.shape != frame.small.shape:
            return
        times = self.answer_times()
        if not times.news(*answer):
            times.note(*answer)
            return

        def judge() -> None:
            if beyond_carets(before, frame):
                times.note(answer.key, answer.seconds)

        self._learned = self._learning.submit(judge)

    def answer_times(self) -> AnswerTimes:
        """How fast the app answered each kind of input so far, every capture's answer
        told (`note_answer`)."""
        learned, self._learned = self._learned, None
        if learned is not None:
            learned.result()
        return self._answers

    def close(self) -> None:
        self._learning.shutdown(wait=True)


def window_changed(
    backend: Backend,
    grab: Callable[[], Frame],
    kept: np.ndarray,
    point: tuple[int, int],
    deadline: float,
) -> bool:
    """Whether the screen differs from `kept` (a downscaled screen) by a window that
    opened or closed under `point` (`analysis.window_changed_at`), looked at each time the
    screen changes until `deadline` (monotonic): the first change to arrive may be the
    button drawn pressed, and the dialog it closes only the next (over VNC, 8 ms and then
    60 ms after the click on a loaded machine)."""
    return await_screen(
        backend, grab, lambda now: window_changed_at(kept, now.small, point), deadline
    )


def await_screen(
    backend: Backend, grab: Callable[[], Frame], shows: Callable[[Frame], bool], deadline: float
) -> bool:
    """Whether the screen (`grab`) `shows` what is waited for, looked at now and again on
    each change the backend reports until `deadline` (monotonic); without change reports,
    looked at once."""
    log = backend.changes()
    while True:
        looked = time.monotonic()
        if shows(grab()):
            return True
        if log is None or not log.wait_change(looked, deadline):
            return False
