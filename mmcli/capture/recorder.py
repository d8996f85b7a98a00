"""Recording: run an agent, capture the screen before each of its actions.

A `Recorder` is told each of the agent's actions before it happens: on its socket
(`channel`: the pyautogui hook inside a Python agent, see hook/, the `xdotool` shim, or
`mm act` from any language), or from the display's input (`input_watch`, the VNC
endpoint). For each action the recorder moves the pointer onto the action's target (so
that hover effects are the same at replay), waits for the screen to settle, keeps what
the fingerprint needs, and only then lets the action happen (a channel that gives the
input itself finds the pointer back where the agent left it).

The parts: `answers` (the waits before a capture and the app's pace they learn),
`settling` (when a screen is still, a caret's blink aside), `details` (what is kept at
full resolution where typed text may echo), `windowing` (what the window system tells of
an action's window), `idle` (what changes on its own; `gauges`, an app's own gauges),
`channel` (the socket). When the agent has exited 0, `steps.build_steps` turns the
captures into steps.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from mmcli.backends.base import Backend
from mmcli.capture.answers import APART_WAIT, Waits, approach, window_changed
from mmcli.capture.channel import Channel
from mmcli.capture.counts import CountBands
from mmcli.capture.details import Details
from mmcli.capture.idle import IdleWatch
from mmcli.capture.landing import read_back
from mmcli.capture.settling import (
    OUTCOME_LIMIT,
    OUTCOME_QUIET,
    as_given,
    outcome_settle,
    settle,
)
from mmcli.capture.steps import Capture, FinalScreen, focus_point, join_chunk
from mmcli.capture.windowing import (
    around,
    last_titles,
    titles,
    under_pointer,
    vacated,
    window_of,
)
from mmcli.desktop.clipboard import is_paste, read_clipboard
from mmcli.desktop.input_watch import InputWatch, Observed
from mmcli.model import Action, ActionKind
from mmcli.screen.analysis import patch_of
from mmcli.screen.fingerprint import Frame, Rect

AT_POINTER = {ActionKind.CLICK, ActionKind.SCROLL}
"""Actions that may come without a point (xdotool `click 1`): they act at the pointer."""


STILL_CHANGING = (
    f"the screen was still changing {OUTCOME_LIMIT:g}s after the last action (an "
    "animation?); the outcome is the screen as it was then, and replay will judge its own "
    "last screen against it"
)
"""Said when the outcome is kept from a screen that did not settle."""


@dataclass
class Recorder:
    """Captures the agent's actions, each with the screen before it, while the agent runs."""

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
    final: FinalScreen | None = None
    """The screen the run ended on (`capture_final`)."""
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
        self.waits = Waits(self.backend)
        self.idle = IdleWatch(self.backend)
        self.channel = Channel(self)
        self._threads: list[threading.Thread] = []
        self._closing = False
        self._unannounced: int | None = None
        self.held: Capture | None = None
        """A mouse button pressed (xdotool mousedown) and not released yet: the screen
        before the press, to become a drag (or a click) at the release."""
        self.details = Details()
        self.count_bands = CountBands()

    @property
    def volatile(self) -> list[Rect]:
        """The regions seen changing on their own (`IdleWatch`)."""
        return self.idle.volatile

    def env(self) -> dict[str, str]:
        """Environment for the agent: the display (`Backend.agent_env`) and its channels
        to the recorder (`Channel.env`)."""
        return {**self.backend.agent_env(), **self.channel.env()}

    def observe(self, seconds: float) -> None:
        """Watch the idle screen before the agent starts (`IdleWatch.observe`)."""
        self.idle.observe(seconds)

    # ---- capturing ---------------------------------------------------------------------

    def capture(self, action: Action, *, keep_pointer: bool = False) -> None:
        """Keep the screen before `action`; with `keep_pointer`, the pointer is back where
        it was afterwards (see `_pointer_kept`)."""
        with self._lock:
            action = at_pointer(self.backend, action)
            if self.watch is not None:  # before the answer: the input follows it
                self.watch.report(action)
            if self.held is not None:
                self.unsupported.append("input while a mouse button is held (mousedown)")
            action, note = pasted(action, self._warn)
            with self._pointer_kept(keep_pointer):
                self._append(self._shoot(action, note))

    def shoot(self, action: Action) -> Capture:
        """The screen before `action`, kept but not added yet (a channel that builds its
        actions from input events adds them once they are final: `add_captures`)."""
        with self._lock:
            return self._shoot(action)

    def window_changed(self, capture: Capture, point: tuple[int, int]) -> bool:
        """Whether a window opened or closed under `point` since the screen kept in
        `capture` (`answers.window_changed`), until `APART_WAIT` after the last input."""
        deadline = self._last_input() + APART_WAIT
        return window_changed(self.backend, self._grab, capture.small, point, deadline)

    def _grab(self) -> Frame:
        with self._lock:
            return self.backend.grab()

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
        last = self.captures[-1] if self.captures else None
        quiet, answer = self.waits.await_answer(action, last, self._last_input())
        window = window_of(self.backend, action)
        above, own, frames = around(self.backend, window)
        moved = approach(self.backend, action)
        self.waits.await_hover(
            action, window, moved, last.action if last else None, self._last_input()
        )
        # The agent's last input came after the last capture was answered (each action
        # waits for its answer) or is the latest the display's input watch saw: the
        # screen need be still only since then. An agent that thought for a second
        # before this action is captured at once, not 20 ms later.
        kept = settle(self.backend, since=self._last_capture, quiet=quiet)
        kept_titles = titles(self.backend, window)
        read_back(self.backend, self.captures, kept.frame, action)
        frame = as_given(self.backend, kept, quiet)
        self.waits.note_answer(answer, frame)
        target = focus_point(action, self._focus)
        if action.kind is ActionKind.CLICK:
            self._focus = action.point
        changed = self.details.changed(self.captures, frame)
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
            frames=frames,
            typed=self.details.typed(self.captures, frame, changed),
            changed=changed,
            titles=kept_titles,
            counts=self.count_bands.crops(self.captures, frame),
        )

    def _last_input(self) -> float:
        """When the display was last given input (monotonic): the agent's, as a channel
        noted it (`note_activity`), or mm's own (the pointer's approach)."""
        return max(self._last_capture, self.backend.input_at)

    def _append(self, capture: Capture) -> None:
        """Keep a capture; text typed right after text (an agent typing in chunks) joins
        the previous step, which keeps the screen before the first chunk, unless that
        text left its field (ended with Tab or Return): the next field's text is a step
        of its own, checked before it is typed."""
        if not join_chunk(self.captures[-1] if self.captures else None, capture):
            self._announce_typed()
            self.captures.append(capture)
        self.note_activity()
        if capture.action.kind is ActionKind.TYPE:
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

    def perform(self, action: Action) -> None:
        """`mm act`: the action performed through the recorder's own backend, once
        captured."""
        with self._lock:
            self.backend.perform(at_pointer(self.backend, action))

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
            self.waits.pressed_at = self._last_capture
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

    def capture_final(self) -> None:
        """The screen after the last action: what that action changed, and the outcome
        the run ended on (kept as the path's last screen, with a thumbnail)."""
        with self._lock:
            settled = outcome_settle(self.backend, OUTCOME_QUIET, OUTCOME_LIMIT)
            frame = settled.frame
            if not settled.still:
                self._warn(STILL_CHANGING)
            read_back(self.backend, self.captures, frame, None)
            changed = self.details.changed(self.captures, frame)
            pointer = self.backend.pointer()
            self.final = FinalScreen(
                frame,
                _png(frame.thumbnail),
                typed=self.details.typed(self.captures, frame, changed),
                changed=changed,
                titles=last_titles(self.backend, self.captures),
                counts=self.count_bands.crops(self.captures, frame),
                vacated=vacated(self.backend, self.captures[-1] if self.captures else None),
                pointer=pointer,
                under=under_pointer(self.backend, pointer, self.captures),
            )

    # ---- the run ----------------------------------------------------------------------

    def __enter__(self) -> Recorder:
        self._threads.append(self.channel.open())
        if self.learn:
            sampler = threading.Thread(
                target=self.idle.sample,
                args=(self._lock, lambda: self._closing, self._activity_seen),
                name="mm-sampler",
                daemon=True,
            )
            sampler.start()
            self._threads.append(sampler)
        return self

    def _activity_seen(self) -> tuple[float, int]:
        """When the last action was, and how many there were (`IdleWatch.sample`)."""
        return self._last_capture, self._activity

    def __exit__(self, *exc: object) -> None:
        self._closing = True
        self.channel.closing = True
        with self._lock:  # let a sample or capture in progress finish
            pass
        self.idle.restore()
        self.channel.close()
        self._thumbs.shutdown(wait=True)
        self.waits.close()


def at_pointer(backend: Backend, action: Action) -> Action:
    """An action that came without a point (xdotool `click 1`), at the pointer."""
    if action.kind in AT_POINTER and action.point is None:
        x, y = backend.pointer()
        return replace(action, x=x, y=y)
    return action


def pasted(action: Action, warn: Callable[[str], None]) -> tuple[Action, str]:
    """A paste chord becomes the text it pastes (read from the clipboard now), with a
    note saying so; `warn` is told when the clipboard cannot be read."""
    if action.kind is not ActionKind.HOTKEY or not is_paste(action.keys):
        return action, ""
    text = read_clipboard()
    if not text:
        warn(
            f"{'+'.join(action.keys)}: the clipboard is empty or unreadable; recorded "
            "as a key chord (replay pastes whatever the clipboard holds then)"
        )
        return action, ""
    return Action(ActionKind.TYPE, text=text), "pasted from the clipboard"


def _png(image_fn: Callable[[], Any]) -> bytes:
    buf = io.BytesIO()
    image_fn().save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()
