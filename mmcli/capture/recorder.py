"""Recording: run an agent, capture the screen before each of its actions.

A `Recorder` listens on a Unix socket. The agent's actions reach it either from the
pyautogui hook inside a Python agent (see hook/) or from `mm act` (any language). For
each action the recorder moves the pointer onto the action's target (so that hover
effects are the same at replay, which does the same), waits for the screen to settle,
keeps what the fingerprint needs, and only then lets the action happen (a channel that
gives the input itself finds the pointer back where the agent left it).

When the agent has exited 0, `steps.build_steps` turns the captures into steps.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np

from mmcli.backends.base import ZONE_MARGIN, Backend, ChangeLog, Settled
from mmcli.capture import shim
from mmcli.capture.secrets import typed_text
from mmcli.capture.steps import LEAVES_FIELD, Capture, field_box, focus_point, readable
from mmcli.desktop.clipboard import is_paste, read_clipboard
from mmcli.desktop.input_watch import InputWatch, Observed
from mmcli.model import BUTTONS, MAX_KEY_MS, Action, ActionKind
from mmcli.screen.analysis import (
    changed_regions_fine,
    grow_to_text_run,
    patch_of,
    window_changed_at,
)
from mmcli.screen.carets import (
    CARET_INK,
    CARET_MAX,
    CARET_MIN_HEIGHT,
    CARET_WIDTH,
    ink_columns,
    ink_mask,
)
from mmcli.screen.echoes import Detail
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import (
    MAX_OVER,
    MAX_TITLES,
    Over,
    WindowRef,
    over_window,
    own_windows,
    title_band,
)

DETAIL_BUDGET = 64 * 2**20
"""Bytes of full-resolution detail (`Capture.changed`) one recording keeps at most: a
line of text is a few kB, a dialog ~100 kB; a long task's later steps, past it, look for
echoes downscaled alone."""
SOCKET_ENV = "MM_RECORD_SOCKET"
HOOK_DIR = shim.HOOK_DIR
SETTLE_QUIET = 0.02
SETTLE_LIMIT = 0.6
OUTCOME_QUIET = 1.0
"""The outcome is kept once the screen has been still this long after the agent ended:
an app may draw what the last input did a moment after it was sent (LibreOffice Calc,
measured: its screen still 20 ms after xdotool exited, the typed row not drawn yet), or
close its window a while after its process was told (zenity on a loaded machine: still
for 0.3 s, then unmapped). A caret blinking does not count (`outcome_settle`): a form
that ends with the focus in a field would otherwise wait out `OUTCOME_LIMIT` at every
recording, or 1 s after its latest blink (0.6 s of each 20-action recording on the
example, measured)."""
OUTCOME_LIMIT = 5.0
"""After this long the latest screen is kept, still or not."""
OUTCOME_LOOK = 0.1
"""Without change reports, the screen is looked at this often while the outcome settles."""
SAMPLE_EVERY = 0.25
"""While the agent thinks, the screen is sampled this often to learn what changes alone."""
QUIET_AFTER_ACTION = 1.0
"""Changes within this many seconds of an action are the action's doing, not volatility."""
ANSWER_WAIT = 0.25
"""After an input an app answers on the screen (a click, a key, typed text), the next
screen is kept once it has answered, waiting at most this long from the input: some apps
first draw a while after it (LibreOffice Calc 80-110 ms after a Tab, measured with
DAMAGE), and a screen still until then is the one before the input. An agent that
thought longer than this is captured at once, as before."""
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
APART_WAIT = 0.15
"""A press that would make a double click with the last one waits at most this long from
the last input for the screen to answer it, before the recorder tells whether a window
opened or closed under it (`Recorder.window_changed`): a VNC server sent its first update
20-55 ms after a click, measured."""
APPROACH = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.DRAG}
"""Actions whose target the pointer is moved onto before the screen is captured."""
AT_POINTER = {ActionKind.CLICK, ActionKind.SCROLL}
"""Actions that may come without a point (xdotool `click 1`): they act at the pointer."""


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
    caret's blink after an input that did nothing: `Recorder._note_answer`): a kind
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


def settle(backend: Backend, since: float | None = None, quiet: float = SETTLE_QUIET) -> Frame:
    """The screen once still, as the recorder keeps it: still for `quiet` since its last
    change and since `since`, when the agent's last input was given (in its own process;
    by default just now)."""
    at = time.monotonic() if since is None else since
    return backend.settle(quiet, SETTLE_LIMIT, since=at).frame


def is_caret(before: Frame, after: Frame, region: Rect) -> bool:
    """A region that changed between two frames is a caret blinking: caret-sized, what
    changed at full resolution one run of columns at most `CARET_WIDTH` px wide, with no
    ink there in one of the frames (the off phase). A clock digit changing part of its
    strokes has ink on both sides; a field border beside the caret does not change."""
    if region.w > CARET_MAX[0] or region.h > CARET_MAX[1]:
        return False
    x0, y0 = max(region.x, 0), max(region.y, 0)
    x1, y1 = min(region.right, after.width), min(region.bottom, after.height)
    if x1 <= x0 or y1 <= y0:
        return False
    a = before.pixels[y0:y1, x0:x1, :3].astype(np.int16)
    b = after.pixels[y0:y1, x0:x1, :3].astype(np.int16)
    differs = np.abs(a - b).max(axis=2) > CARET_INK
    changed = np.flatnonzero(differs.any(axis=0))
    rows = np.flatnonzero(differs.any(axis=1))
    if changed.size == 0 or changed[-1] - changed[0] >= CARET_WIDTH:
        return False
    if rows[-1] - rows[0] + 1 < CARET_MIN_HEIGHT:  # a caret spans a line of text
        return False
    bar = Rect(x0 + int(changed[0]), y0, int(changed[-1] - changed[0]) + 1, y1 - y0)
    ink = [ink_columns(before, bar), ink_columns(after, bar)]
    if any(columns is not None and not columns.any() for columns in ink):
        return True
    return _caret_on_a_glyph(before, after, bar, differs[:, changed[0] : changed[-1] + 1])


GLYPH_EDGE = 0.2
"""At most this share of a caret's pixels may hold ink in its off phase (the glyph's edge
it covers: 3 of 34 pixels measured, Tk's caret after "Núñez")."""


def _caret_on_a_glyph(before: Frame, after: Frame, bar: Rect, differs: np.ndarray) -> bool:
    """A caret drawn against the last glyph typed ("Núñez|": the z reaches into the
    caret's columns, so they hold ink in both phases): what changed is ink in one frame
    and ground in the other, and from its first row to its last every row of the bar
    either changed or is ink in both frames (the glyph under the caret). A digit's
    strokes changing leave a row of ground in both between them (the 3 -> 8 waist)."""
    was, now = ink_mask(before, bar), ink_mask(after, bar)
    if was is None or now is None or was.shape != differs.shape:
        return False
    # The bar is all ink in its on phase; in its off phase, ground but where it covered
    # the glyph's anti-aliased edge (a grey pixel or two): not ink on both sides, as a
    # glyph replaced by another is.
    if not any(
        on[differs].all() and off[differs].mean() <= GLYPH_EDGE
        for on, off in ((was, now), (now, was))
    ):
        return False
    rows = np.flatnonzero(differs.any(axis=1))
    span = slice(rows[0], rows[-1] + 1)
    covered = differs[span].any(axis=1) | (was & now)[span].any(axis=1)
    return bool(covered.all())


def beyond_carets(before: Frame, after: Frame, zones: Sequence[Rect] = ()) -> bool:
    """Whether `after` differs from `before` by more than a blinking caret (`is_caret`),
    leaving out what changed inside `zones`."""
    changed = changed_regions_fine(before, after)
    return not all(
        is_caret(before, after, r) for r in changed if not any(r.inside(z) for z in zones)
    )


def outcome_settle(backend: Backend, quiet: float, limit: float) -> Settled:
    """The screen once nothing but a blinking caret (`is_caret`) has changed on it for
    `quiet` seconds (changes inside the backend's quiet zones never count); after `limit`
    seconds of other changes, the latest screen, not still. Each change is looked at once
    the screen is still again for `SETTLE_QUIET`: a caret's blink is one repaint, a window
    closing or a row drawn late is a change of another shape and starts the wait again.

    The quiet counts from the last change reported before the wait (an agent that waited
    for the app before it ended has waited part of it), and that change may have been the
    caret's blink too: once a blink has been seen, where it was reported tells the
    changes before the wait that were the same blink (`caret_areas`), and the quiet
    counts from the last other change (never from before the last input)."""
    deadline = time.monotonic() + limit
    settled = backend.settle(SETTLE_QUIET, limit)
    base, looked = settled.frame, settled.at
    log = backend.changes()
    still_from = settled.at if log is None else max(log.changed_at, backend.input_at)
    if not settled.still:
        return settled
    latest = settled
    zones = [z.grow(ZONE_MARGIN) for z in backend.current_quiet_zones()]
    judged = backend.input_at
    """When a change was last seen to be more than a caret's blink."""
    carets: list[Rect] = []
    while True:
        end = min(still_from + quiet, deadline)
        left = end - time.monotonic()
        if left <= 0:
            return Settled(latest.frame, still_from + quiet <= deadline, latest.at)
        backend.wait_change(looked, left if log is not None else min(left, OUTCOME_LOOK))
        if time.monotonic() >= end:
            continue
        before = looked
        latest = backend.settle(SETTLE_QUIET, max(deadline - time.monotonic(), 0.0))
        looked = latest.at
        if not latest.still:
            return latest
        if beyond_carets(base, latest.frame, zones):
            base, still_from = latest.frame, latest.at
            judged = latest.at
        elif log is not None and (blinked := caret_areas(log, before, looked)):
            carets.extend(blinked)
            other = log.last_outside(backend.input_at, carets)
            if other is not None:
                still_from = max(other, judged)


CARET_AREA_HEIGHT = 64
"""The tallest area a change reported for a caret's blink may cover: a toolkit repaints
the caret's cell, or its whole field (Tk: the entry, 300 x 23 on the example form), one
line tall; a taller area seen with a blink is something else redrawn as it was, and tells
nothing of the changes before."""


def caret_areas(log: ChangeLog, start: float, end: float) -> list[Rect]:
    """Where the changes between `start` and `end` were reported, when every area is a
    caret's size (the caller has seen the screen differ by a caret's blink alone over
    that time); else none."""
    areas = log.areas_between(start, end)
    if not areas or any(a.h > CARET_AREA_HEIGHT for a in areas):
        return []
    return areas


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


def _slower(a: Action, b: Action) -> int | None:
    """The pace of text typed in two chunks: the slower one's (None if neither is known)."""
    known = [x.key_ms for x in (a, b) if x.key_ms is not None]
    return max(known) if known else None


def action_from_json(data: Mapping[str, Any]) -> Action:
    """Parse an action sent by the hook or `mm act` (trusted local input, still checked)."""
    kind = ActionKind(str(data["kind"]))
    button = str(data.get("button", "left"))
    if button not in BUTTONS:
        raise ValueError(f"mouse button {button!r} cannot be recorded (only {', '.join(BUTTONS)})")

    def opt_int(key: str) -> int | None:
        return None if data.get(key) is None else int(data[key])

    return Action(
        kind=kind,
        x=opt_int("x"),
        y=opt_int("y"),
        x2=opt_int("x2"),
        y2=opt_int("y2"),
        button=button,
        clicks=int(data.get("clicks", 1)),
        text=str(data.get("text", "")),
        keys=tuple(str(k) for k in data.get("keys", ())),
        amount=int(data.get("amount", 0)),
        key_ms=None if (ms := opt_int("key_ms")) is None else min(max(ms, 0), MAX_KEY_MS),
    )


def action_to_json(action: Action) -> dict[str, Any]:
    return {
        "kind": str(action.kind),
        "x": action.x,
        "y": action.y,
        "x2": action.x2,
        "y2": action.y2,
        "button": action.button,
        "clicks": action.clicks,
        "text": action.text,
        "keys": list(action.keys),
        "amount": action.amount,
        "key_ms": action.key_ms,
    }


def _png(image_fn: Callable[[], Any]) -> bytes:
    buf = io.BytesIO()
    image_fn().save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


LOCAL_X_ON_VNC = "input on the local X display (pyautogui or xdotool) on a VNC desktop"
"""What an agent that gives X input while the display is `vnc://` did: that input goes to
the local X display, never to the VNC desktop the task is on."""
VNC_CHANNELS = "on a vnc:// display act through the VNC endpoint in MM_VNC_ADDRESS or mm act"


@dataclass
class Recorder:
    """Captures actions reported over a Unix socket while an agent runs."""

    backend: Backend
    start_focus: tuple[int, int] | None = None
    captures: list[Capture] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Why the connection to a remote display dropped while the agent was connected."""
    on_action: Callable[[int, Action, str], None] | None = None
    """Called with each step's index, action and a note, once the step is complete (typed
    text when the next action shows that no more text follows)."""
    on_warning: Callable[[str], None] | None = None
    final: np.ndarray | None = None
    final_frame: Frame | None = None
    final_typed: Detail | None = None
    """After a run of typing that ended the task: what it changed, at full resolution."""
    final_changed: Detail | None = None
    """What the final screen changed since the last capture (`Capture.changed`)."""
    final_thumbnail: bytes | None = None
    final_titles: tuple[tuple[Rect, str], ...] = ()
    """The title bars of the task's windows on the final screen (`Capture.titles`)."""
    volatile: list[Rect] = field(default_factory=list)
    learn: bool = True
    """Sample the screen between actions to learn regions that change on their own."""
    watch: InputWatch | None = None
    """The display's input, watched: told of each reported action before it happens."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._last_capture = time.monotonic()
        self._activity = 0
        self._focus = self.start_focus
        self._thumbs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mm-thumb")
        self._learning = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mm-answers")
        self._learned: Future[None] | None = None
        """Whether the last capture's screen was an answer, being told apart from a
        caret's blink off the agent's path (`_note_answer`)."""
        self._dir = tempfile.mkdtemp(prefix="mm-rec-")
        self.socket_path = os.path.join(self._dir, "recorder.sock")
        self._server: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._closing = False
        self._unannounced: int | None = None
        self.held: Capture | None = None
        """A mouse button pressed (xdotool mousedown) and not released yet: the screen
        before the press, to become a drag (or a click) at the release."""
        self._zones_kept: tuple[Rect, ...] | None = None
        """The backend's quiet zones before the observation added the volatile regions."""
        self._typed_yet = False
        self._detail_left = DETAIL_BUDGET
        self._answers = AnswerTimes(ANSWER_WAIT, ANSWER_FLOOR)
        self._hovers = AnswerTimes(HOVER_WAIT, HOVER_FLOOR)
        self._pressed_at = 0.0
        """When a key or a button was last pressed since the last capture, as the input
        watch saw it (monotonic; 0: none)."""
        self._frame: Frame | None = None
        """The screen kept at the last capture, whole (`_note_answer`)."""

    # ---- capturing ---------------------------------------------------------------------

    def capture(self, action: Action, *, keep_pointer: bool = False) -> None:
        """Keep the screen before `action`; with `keep_pointer`, the pointer is back where
        it was afterwards (see `_pointer_kept`)."""
        with self._lock:
            action = self._at_pointer(action)
            if self.watch is not None:  # before the answer: the input follows it
                self.watch.report(action)
            if self.held is not None:
                self.unsupported.append("input while a mouse button is held (mousedown)")
            action, note = self._pasted(action)
            with self._pointer_kept(keep_pointer):
                self._append(self._shoot(action, note))

    def shoot(self, action: Action) -> Capture:
        """The screen before `action`, kept but not added yet (a channel that builds its
        actions from input events adds them once they are final: `add_captures`)."""
        with self._lock:
            return self._shoot(action)

    def window_changed(self, capture: Capture, point: tuple[int, int]) -> bool:
        """Whether the screen differs from the one kept in `capture` by a window that
        opened or closed under `point` (`analysis.window_changed_at`), once it has answered
        the last input (waiting at most until `APART_WAIT` after it)."""
        since = self._last_input()
        left = since + APART_WAIT - time.monotonic()
        if left > 0 and self.backend.changes() is not None:
            self.backend.wait_change(since, left)
        with self._lock:
            frame = self.backend.grab()
        return window_changed_at(capture.small, frame.small, point)

    @contextlib.contextmanager
    def _pointer_kept(self, keep: bool = True) -> Iterator[None]:
        """Put the pointer back where it was once the screen is kept, for a channel that
        then gives the input itself: its own move must find the pointer where the agent
        left it. `xdotool mousemove --sync X Y click 1` waits for the pointer to move and
        would wait out its 15 s timeout on a pointer already put on X Y by `approach`."""
        where = self.backend.pointer() if keep else None
        try:
            yield
        finally:
            if where is not None and self.backend.pointer() != where:
                self.backend.move(*where)

    def _shoot(self, action: Action, note: str = "") -> Capture:
        """The screen before `action` (the caller holds the lock)."""
        quiet, answer = self._await_answer(action)
        window = self._window_of(action)
        above, own = self._around(window)
        moved = approach(self.backend, action)
        self._await_hover(action, window, moved)
        # The agent's last input came after the last capture was answered (each action
        # waits for its answer) or is the latest the display's input watch saw: the
        # screen need be still only since then. An agent that thought for a second
        # before this action is captured at once, not 20 ms later.
        frame = settle(self.backend, since=self._last_capture, quiet=quiet)
        titles = self._titles(window)
        self._read_back(frame, action)
        self._note_answer(answer, frame)
        self._pressed_at = 0.0  # the presses of the action captured now come after this
        target = focus_point(action, self._focus)
        if action.kind is ActionKind.CLICK:
            self._focus = action.point
        changed = self._changed(frame)
        return Capture(
            action=action,
            small=frame.small,
            patch=patch_of(frame, *target) if target else None,
            pointer=self.backend.pointer(),
            size=(frame.width, frame.height),
            at=datetime.now(UTC),
            thumbnail=self._thumbs.submit(_png, frame.thumbnail),
            note=note,
            window=window,
            above=above,
            own=own,
            typed=self._typed(frame, changed),
            changed=changed,
            titles=titles,
        )

    def _typed(self, frame: Frame, changed: Detail | None) -> Detail | None:
        """After a run of typing actions, what it changed on `frame` since the screen
        before its first, at full resolution (`Capture.typed`); None after anything else.
        A run of one action changed what `frame` changed since the last capture
        (`changed`, from `_changed`): that is taken as it is."""
        first = None
        for capture in reversed(self.captures):
            if typed_text(capture.action) is None:
                break
            first = capture
        if first is None:
            return None
        if first is self.captures[-1] and changed is not None:
            return changed
        return Detail.of(first.small, frame)

    def _changed(self, frame: Frame) -> Detail | None:
        """What changed on `frame` since the last capture, at full resolution
        (`Capture.changed`), once the task typed anything: where an echo of typed text
        may appear. Up to `DETAIL_BUDGET` bytes over the recording; after that, echoes
        are looked for downscaled alone."""
        if self.captures and typed_text(self.captures[-1].action) is not None:
            self._typed_yet = True
        if not self._typed_yet or self._detail_left <= 0:
            return None
        detail = Detail.of(self.captures[-1].small, frame)
        if detail is not None:
            self._detail_left -= detail.nbytes
        return detail

    def _await_answer(self, action: Action) -> tuple[float, Answer | None]:
        """Before `action` is captured, wait until the screen has answered the last action,
        when that was input an app answers given a short while ago: until it changed
        since (at most until `AnswerTimes.limit` after the input: `ANSWER_WAIT`, or less
        for an app that has shown it answers faster). The answer is looked for from the
        last key's or button's press, as the input watch saw it: an app draws a typed
        letter, a focus change or a menu before the release, and the next change after
        the release may be the caret's next blink, 0.25 s away. Returns how long the
        screen must then be still (`ANSWER_QUIET` after recent keys, else
        `SETTLE_QUIET`) and, if the screen changed within `ANSWER_WAIT` of the input, how
        long it took (`_shoot` notes it if the screen shows an answer). Text typed right
        after text joins its step, whose screen is the one before the first chunk: no
        wait. With no change reports, the settling alone decides (two grabs that
        agree)."""
        last = self.captures[-1] if self.captures else None
        log = self.backend.changes()
        if last is None or last.action.kind not in ANSWERED or log is None:
            return SETTLE_QUIET, None
        kind = last.action.kind
        if kind is ActionKind.TYPE and action.kind is ActionKind.TYPE:
            return SETTLE_QUIET, None
        since = self._pressed_at or self._last_input()
        key = Answer.key_of(kind, last.window)
        left = since + self.answer_times().limit(key) - time.monotonic()
        if left > 0:
            self.backend.wait_change(since, left)
        first = log.first_after(since)
        answer = Answer(key, first - since) if first and first - since <= ANSWER_WAIT else None
        if left <= 0:
            return SETTLE_QUIET, answer
        return (ANSWER_QUIET if kind in KEYS else SETTLE_QUIET), answer

    def _await_hover(self, action: Action, window: WindowRef | None, moved: bool) -> None:
        """Before a click is captured, wait for the hover effect the pointer's move onto
        its target may draw there (a change reported at the target), at most until
        `AnswerTimes.limit` after the move (`HOVER_WAIT` at first), and learn how long the
        app took if it drew one. The move is mm's approach (`moved`) or the agent's own,
        the action before, onto the same point."""
        log = self.backend.changes()
        point = action.point
        if log is None or point is None or action.kind not in APPROACH:
            return
        last = self.captures[-1].action if self.captures else None
        if moved:
            since = self.backend.input_at
        elif last is not None and last.kind is ActionKind.MOVE and last.point == point:
            since = self._last_input()
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

    def _note_answer(self, answer: Answer | None, frame: Frame) -> None:
        """Learn how fast the app answered (`AnswerTimes`) when `frame` differs from the
        screen before the last action by more than a caret's blink: a change after an
        input that did nothing visible (the next blink) is not an answer. Telling the two
        apart compares two whole screens at full resolution (a few ms): it is done on a
        worker thread once the agent has its reply, and the next capture waits for it
        before it reads the times (`answer_times`)."""
        before, self._frame = self._frame, frame
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
        told (`_note_answer`)."""
        learned, self._learned = self._learned, None
        if learned is not None:
            learned.result()
        return self._answers

    def _last_input(self) -> float:
        """When the display was last given input (monotonic): the agent's, as a channel
        noted it (`note_activity`), or mm's own (the pointer's approach)."""
        return max(self._last_capture, self.backend.input_at)

    def _window_of(self, action: Action) -> WindowRef | None:
        """The window an action went to: the one under its point, or, for keys, the one
        that had the keyboard."""
        if action.point is not None:
            return self.backend.window_at(*action.point)
        return self.backend.keyboard_window()

    def _read_back(self, frame: Frame, action: Action | None) -> None:
        """Once the app has drawn typed text (`frame`: the screen before the next action
        `action`, or the final one), read its field back onto the typing's capture (see
        `steps.landed_of`); text typed right after joins it and is read after its last
        piece."""
        last = self.captures[-1] if self.captures else None
        if last is None or last.read is not None or not readable(last.action):
            return
        if action is not None and action.kind is ActionKind.TYPE:
            return
        last.field_box = field_box(last, frame)
        last.read = self.backend.read_field(last.field_box, frame)

    def _around(self, window: WindowRef | None) -> tuple[tuple[Over, ...], tuple[Over, ...]]:
        """The windows over part of `window` now, and the other windows of its app, as
        the window system stacks them (`Step.above`, `Step.own`)."""
        stack = self.backend.stack() if window is not None else None
        if stack is None or window is None:
            return (), ()
        above = over_window(stack, window) or []
        own = own_windows(stack, window)
        return (
            tuple(Over.of(w) for w in above[:MAX_OVER]),
            tuple(Over.of(w) for w in own[:MAX_OVER]),
        )

    def _titles(self, window: WindowRef | None) -> tuple[tuple[Rect, str], ...]:
        """The title bars of `window` and its app's other windows, with their titles as
        the window system tells them (`Capture.titles`)."""
        stack = self.backend.stack() if window is not None else None
        if stack is None or window is None:
            return ()
        task = [w for w in stack if w.ref == window]
        found = []
        for w in [*task, *own_windows(stack, window)][:MAX_TITLES]:
            band = title_band(w)
            if band is None:
                continue
            title = self.backend.window_title_at(band.x + band.w // 2, band.y + band.h // 2)
            if title:
                found.append((band, title))
        return tuple(found)

    def _append(self, capture: Capture) -> None:
        """Keep a capture; text typed right after text (an agent typing in chunks) joins
        the previous step, which keeps the screen before the first chunk, unless that
        text left its field (ended with Tab or Return): the next field's text is a step
        of its own, checked before it is typed."""
        last = self.captures[-1] if self.captures else None
        action = capture.action
        if (
            last is not None
            and last.action.kind is action.kind is ActionKind.TYPE
            and not last.action.text.endswith(LEAVES_FIELD)
        ):
            last.action = replace(
                last.action,
                text=last.action.text + action.text,
                key_ms=_slower(last.action, action),
            )
            last.note = last.note or capture.note
            if capture.thumbnail is not None:
                capture.thumbnail.cancel()
        else:
            self._announce_typed()
            self.captures.append(capture)
        self.note_activity()
        if action.kind is ActionKind.TYPE:
            self._unannounced = len(self.captures) - 1
        else:
            self._announce(len(self.captures) - 1)

    def _announce_typed(self) -> None:
        if self._unannounced is not None:
            self._announce(self._unannounced)
            self._unannounced = None

    def _announce(self, index: int) -> None:
        cap = self.captures[index]
        if self.on_action is not None:
            self.on_action(index, cap.action, cap.note)

    def _at_pointer(self, action: Action) -> Action:
        if action.kind in AT_POINTER and action.point is None:
            x, y = self.backend.pointer()
            return replace(action, x=x, y=y)
        return action

    def _pasted(self, action: Action) -> tuple[Action, str]:
        """A paste chord becomes the text it pastes (read from the clipboard now)."""
        if action.kind is not ActionKind.HOTKEY or not is_paste(action.keys):
            return action, ""
        text = read_clipboard()
        if not text:
            self._warn(
                f"{'+'.join(action.keys)}: the clipboard is empty or unreadable; recorded "
                "as a key chord (replay pastes whatever the clipboard holds then)"
            )
            return action, ""
        return Action(ActionKind.TYPE, text=text), "pasted from the clipboard"

    def _warn(self, message: str) -> None:
        if self.on_warning is not None:
            self.on_warning(message)

    def press(self, button: str, at: tuple[int, int] | None) -> None:
        """A mouse button goes down (xdotool mousedown): keep the screen before it (the
        pointer put back where it was, as in `capture`)."""
        with self._lock, self._pointer_kept():
            if self.held is not None:
                self.unsupported.append("mousedown while a button is already held")
                return
            point = at or self.backend.pointer()
            if self.watch is not None:  # the press the display will see
                self.watch.report(Action(ActionKind.CLICK, x=point[0], y=point[1], button=button))
            action = Action(ActionKind.DRAG, x=point[0], y=point[1], x2=point[0],
                            y2=point[1], button=button)  # fmt: skip
            self.held = self._shoot(action)

    def release(self, button: str, at: tuple[int, int] | None) -> None:
        """The held button comes up: a drag from the press to here, or a click in place."""
        with self._lock:
            held, self.held = self.held, None
            if held is None or held.action.button != button:
                self.unsupported.append(f"mouseup of {button} without its mousedown")
                return
            x2, y2 = at or self.backend.pointer()
            action = held.action
            if (x2, y2) == action.point:
                held.action = Action(ActionKind.CLICK, x=action.x, y=action.y, button=button)
            else:
                held.action = replace(action, x2=x2, y2=y2)
            self._append(held)

    def finish(self) -> None:
        """The agent has exited: announce the last step; a button still held is input
        that cannot be recorded."""
        with self._lock:
            self._announce_typed()
            if self.held is not None:
                self.unsupported.append("a mouse button left held (mousedown, no mouseup)")
                self.held = None

    def note_activity(self, pressed: bool = False) -> None:
        """An action happened (reported, or seen on the display): the changes around now
        are its doing, not the screen changing on its own. `pressed`: it was a key's or a
        button's press (`_await_answer` looks for the answer from there)."""
        self._last_capture = time.monotonic()
        if pressed:
            self._pressed_at = self._last_capture
        self._activity += 1

    def add_observed(self, observed: list[tuple[Action, Observed | None]]) -> int:
        """Add the actions built from the display's input, in time order with the
        reported ones; return how many were added (those without a screen are not)."""
        added = [
            Capture(a, o.frame_small, o.patch, o.pointer, o.size, o.at, o.thumbnail)
            for a, o in observed
            if o is not None
        ]
        self.captures = sorted([*self.captures, *added], key=lambda c: c.at)
        return len(added)

    def add_captures(self, captures: list[Capture]) -> None:
        """Add the final captures of a channel that built its actions from input events,
        in time order with the others, each announced."""
        with self._lock:
            self._announce_typed()
            self.captures = sorted([*self.captures, *captures], key=lambda c: c.at)
            added = {id(c) for c in captures}
            for index, capture in enumerate(self.captures):
                if id(capture) in added:
                    self._announce(index)

    def observe(self, seconds: float) -> None:
        """Watch the idle screen before the agent starts: what changes now changes alone."""
        deadline = time.monotonic() + seconds
        previous = self.backend.grab()
        while time.monotonic() < deadline:
            time.sleep(min(SAMPLE_EVERY / 2, max(deadline - time.monotonic(), 0)))
            current = self.backend.grab()
            self._note_volatile(previous, current)
            previous = current
        # What changes alone is masked in every step: it does not keep a capture waiting
        # for a still screen either (a spinner would, at every action).
        if self._zones_kept is None:
            self._zones_kept = self.backend.quiet_zones(())
        self.backend.quiet_zones([*self._zones_kept, *self.volatile])

    def _note_volatile(self, before: Frame, after: Frame) -> None:
        for region in changed_regions_fine(before, after):
            if is_caret(before, after, region):
                # A blinking caret: the matcher knows carets where they are harmless;
                # masking it (let alone the text run beside it) would hide its field.
                continue
            self.volatile.append(grow_to_text_run(after.small, region))

    def _sample(self) -> None:
        """Background: between actions, once the app has reacted, note spontaneous changes."""
        previous: Frame | None = None
        seen = -1
        while not self._closing:
            time.sleep(SAMPLE_EVERY)
            with self._lock:
                quiet = time.monotonic() - self._last_capture >= QUIET_AFTER_ACTION
                if not quiet or self._closing:
                    previous = None
                    continue
                current = self.backend.grab()
                if previous is not None and seen == self._activity:
                    self._note_volatile(previous, current)
                previous, seen = current, self._activity

    def capture_final(self) -> None:
        """The screen after the last action: what that action changed, and the outcome
        the run ended on (kept as the path's last screen, with a thumbnail)."""
        with self._lock:
            settled = outcome_settle(self.backend, OUTCOME_QUIET, OUTCOME_LIMIT)
            frame = settled.frame
            if not settled.still:
                self._warn(
                    f"the screen was still changing {OUTCOME_LIMIT:g}s after the last action "
                    "(an animation?); the outcome is the screen as it was then, and replay "
                    "will judge its own last screen against it"
                )
            self._read_back(frame, None)
            self.final = frame.small
            self.final_frame = frame
            self.final_changed = self._changed(frame)
            self.final_typed = self._typed(frame, self.final_changed)
            self.final_thumbnail = _png(frame.thumbnail)
            # The last window the task acted in that is still there (a dialog's OK
            # closed the dialog: its main window's title bar is the outcome's).
            asked: set[WindowRef] = set()
            for capture in reversed(self.captures):
                if capture.window is None or capture.window in asked:
                    continue
                asked.add(capture.window)
                self.final_titles = self._titles(capture.window)
                if self.final_titles:
                    break

    # ---- the socket ----------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for the agent: where to report, the pyautogui hook on PYTHONPATH
        and the recording `xdotool` first on PATH."""
        path = os.environ.get("PYTHONPATH", "")
        return {
            SOCKET_ENV: self.socket_path,
            "PYTHONPATH": str(HOOK_DIR) + (os.pathsep + path if path else ""),
            "PATH": self._bin + os.pathsep + os.environ.get("PATH", os.defpath),
        }

    @property
    def _bin(self) -> str:
        return os.path.join(self._dir, "bin")

    def __enter__(self) -> Recorder:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(8)
        self._server = server
        shim.write(self._bin)
        t = threading.Thread(target=self._accept, name="mm-recorder", daemon=True)
        t.start()
        self._threads.append(t)
        if self.learn:
            sampler = threading.Thread(target=self._sample, name="mm-sampler", daemon=True)
            sampler.start()
            self._threads.append(sampler)
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing = True
        with self._lock:  # let a sample or capture in progress finish
            pass
        if self._zones_kept is not None:
            self.backend.quiet_zones(self._zones_kept)
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        self._thumbs.shutdown(wait=True)
        self._learning.shutdown(wait=True)

    def _accept(self) -> None:
        assert self._server is not None
        while not self._closing:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as f:
            for line in f:
                reply = self._handle(line)
                try:
                    f.write(json.dumps(reply).encode() + b"\n")
                    f.flush()
                except OSError:
                    return

    def _handle(self, line: bytes) -> dict[str, Any]:
        if self._closing:
            return {"ok": False, "error": "the recording has ended"}
        try:
            message = json.loads(line)
            op = message.get("op")
            if op in ("act", "button") and self.backend.takes_vnc_clients:
                # The pyautogui hook and the xdotool shim act on the local X display:
                # the task on the VNC desktop would not get the input at all.
                self.unsupported.append(LOCAL_X_ON_VNC)
                return {"ok": False, "error": f"{LOCAL_X_ON_VNC}; {VNC_CHANNELS}"}
            if op in ("act", "perform"):
                action = action_from_json(message["action"])
                # The pointer moving while a button is held is part of the drag.
                # A channel that acts itself (the pyautogui hook, the xdotool shim)
                # moves the pointer itself; `mm act` is acted for by the backend here.
                if self.held is None or action.kind is not ActionKind.MOVE:
                    self.capture(action, keep_pointer=op == "act")
                if op == "perform":  # `mm act`: acts through the recorder's own backend
                    with self._lock:
                        self.backend.perform(self._at_pointer(action))
                return {"ok": True}
            if op == "button":
                at = message.get("x"), message.get("y")
                point = None if None in at else (int(at[0]), int(at[1]))
                button = str(message.get("button", "left"))
                if message.get("state") == "down":
                    self.press(button, point)
                else:
                    self.release(button, point)
                return {"ok": True}
            if op == "unsupported":
                self.unsupported.append(str(message.get("name")))
                return {"ok": True}
            return {"ok": False, "error": f"unknown request {op!r}"}
        except Exception as e:  # the agent gets the reason; the recording stays consistent
            return {"ok": False, "error": f"{type(e).__name__}: {e}"}
