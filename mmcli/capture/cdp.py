"""The DevTools channel: an agent that drives the browser through DevTools itself
(selenium with `debuggerAddress`, Playwright's `connect_over_cdp`, browser-use's
`cdp_url`), recorded unmodified.

On a `cdp://` display the agent is given an endpoint of its own (`MM_CDP_URL`,
`http://127.0.0.1:PORT`): `backends.cdpproxy` in front of the browser. Each input command
the agent sends (`Input.dispatchMouseEvent`, `Input.dispatchKeyEvent`,
`Input.insertText`) reaches `CdpChannel.on_command` before the browser: it becomes
`InputEvent`s that feed the same `ActionBuilder` that builds actions from a display's
input, and where one starts a new action (a press, the first key of typed text, a chord)
the recorder keeps the screen first, through mm's own DevTools connection, and only then
is the command passed on. The actions are final when the agent has exited.

Input mm cannot replay as recorded (touch events, drag-and-drop events, IME
composition, a mouse button other than the three) fails the run; nothing is saved.
Script the agent runs in the page (`Runtime.evaluate`) is passed on and not recorded: an
agent that clicks through script (`element.click()`) acts without input, which replay
would not repeat (docs/cdp.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mmcli.capture.built import Built
from mmcli.capture.landing import read_back
from mmcli.desktop.input_events import EventKind, InputEvent
from mmcli.model import Action, ActionKind

if TYPE_CHECKING:
    from mmcli.backends.base import Backend, BrowserPage
    from mmcli.backends.cdpproxy import CdpProxy
    from mmcli.capture.recorder import Recorder
    from mmcli.capture.steps import Capture

ADDRESS_ENV = "MM_CDP_URL"
BUTTONS = {"left": 1, "middle": 2, "right": 3}
WHEEL_STEP = 100
"""Pixels of a wheel event that make one scroll click."""
KEY_NAMES = {
    "Enter": "enter", "Tab": "tab", "Escape": "esc", "Backspace": "backspace",
    "Delete": "delete", "Insert": "insert", "Home": "home", "End": "end",
    "PageUp": "pageup", "PageDown": "pagedown", "ArrowLeft": "left", "ArrowUp": "up",
    "ArrowRight": "right", "ArrowDown": "down", "Control": "ctrl", "Shift": "shift",
    "Alt": "alt", "Meta": "win", " ": "space",
    **{f"F{n}": f"f{n}" for n in range(1, 13)},
}  # fmt: skip
"""DevTools' key names as mm's."""
NAVIGATION_CAUSE = 2.0
"""A navigation this long after the agent's last input may be that input's doing (a click
on a link, Enter in a form); one later than that, after the first input, had none."""
UNRECORDABLE = {
    "Input.dispatchTouchEvent": "touch events",
    "Input.emulateTouchFromMouseEvent": "touch events",
    "Input.synthesizeTapGesture": "touch events",
    "Input.synthesizePinchGesture": "touch gestures",
    "Input.synthesizeScrollGesture": "scroll gestures",
    "Input.dispatchDragEvent": "drag-and-drop events",
    "Input.imeSetComposition": "IME composition",
}
"""Input commands replay cannot give as they were recorded."""


def key_events(params: dict[str, Any], x: int, y: int, at: float) -> list[InputEvent]:
    """`Input.dispatchKeyEvent` as input events: a press (with the character it types)
    or a release; its "char" half types nothing more."""
    kind = params.get("type")
    name = str(params.get("key", ""))
    key = KEY_NAMES.get(name, name.lower() if len(name) == 1 else "")
    text = str(params.get("text", ""))
    char = text if len(text) == 1 and text.isprintable() else ""
    if kind in ("keyDown", "rawKeyDown"):
        return [InputEvent(EventKind.KEY, x, y, at, key=key, char=char)]
    if kind == "keyUp":
        return [InputEvent(EventKind.KEY_UP, x, y, at, key=key)]
    return []


class CdpChannel:
    """Records an agent's DevTools input for `recorder`; `env()` is what the agent is
    given. `open(recorder, backend)` is None on a display that is not a browser's."""

    @classmethod
    def open(cls, recorder: Recorder, backend: Backend) -> CdpChannel | None:
        page = backend.page()
        if page is None or page.address.socket is not None:
            return None  # (a page's own socket URL: no discovery to stand in front of)
        return cls(recorder, page)

    def __init__(self, recorder: Recorder, page: BrowserPage) -> None:
        from mmcli.backends.cdpproxy import CdpProxy

        self.recorder = recorder
        self.page = page
        self.built = Built(recorder, before=self._read_typed)
        self.dropped: list[str] = []
        self._inputs: list[float] = []
        """When each input command came (monotonic)."""
        self._pointer = (0, 0)
        self._lock = threading.Lock()
        self.clock: Callable[[], float] = time.monotonic
        self.proxy: CdpProxy = CdpProxy(page.address, self.on_command)

    def env(self) -> dict[str, str]:
        return {ADDRESS_ENV: self.proxy.address}

    def __enter__(self) -> CdpChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proxy.close()

    # ---- input --------------------------------------------------------------------------

    def on_command(self, method: str, params: dict[str, Any], target: str | None = None) -> None:
        if not method.startswith("Input."):
            return
        with self._lock:
            self._inputs.append(self.clock())
            if target is not None and target != self.page.id:
                self.recorder.unsupported.append(
                    "input to another tab or window of the browser: mm drives one page"
                )
                return
            if method in UNRECORDABLE:
                self.recorder.unsupported.append(f"{UNRECORDABLE[method]} ({method})")
                return
            try:
                for event in self._events(method, params):
                    self.built.feed(event)
            except Exception as e:  # the command still goes on; the recording fails
                self.recorder.unsupported.append(
                    f"a DevTools input command ({method}) whose screen could not be kept: {e}"
                )
            self.recorder.note_activity()

    def _events(self, method: str, params: dict[str, Any]) -> list[InputEvent]:
        now = self.clock()
        if method == "Input.insertText":
            x, y = self._pointer
            events = []
            for char in str(params.get("text", "")):
                events.append(InputEvent(EventKind.KEY, x, y, now, key=char.lower(), char=char))
                events.append(InputEvent(EventKind.KEY_UP, x, y, now, key=char.lower()))
            return events
        if method == "Input.dispatchKeyEvent":
            return key_events(params, *self._pointer, now)
        if method != "Input.dispatchMouseEvent":
            return []
        x, y = round(float(params.get("x", 0))), round(float(params.get("y", 0)))
        events = []
        if (x, y) != self._pointer:
            events.append(InputEvent(EventKind.MOTION, x, y, now))
        self._pointer = (x, y)
        kind = params.get("type")
        button = params.get("button", "none")
        if kind in ("mousePressed", "mouseReleased"):
            number = BUTTONS.get(str(button))
            if number is None:
                if button != "none":
                    self.recorder.unsupported.append(f"the {button} mouse button (DevTools)")
                return events
            pressed = EventKind.PRESS if kind == "mousePressed" else EventKind.RELEASE
            events.append(InputEvent(pressed, x, y, now, button=number))
        elif kind == "mouseWheel":
            for delta, ahead, back in (("deltaY", 5, 4), ("deltaX", 7, 6)):
                amount = float(params.get(delta, 0))
                clicks = max(1, round(abs(amount) / WHEEL_STEP)) if amount else 0
                for _ in range(clicks):
                    number = ahead if amount > 0 else back
                    events.append(InputEvent(EventKind.PRESS, x, y, now, button=number))
                    events.append(InputEvent(EventKind.RELEASE, x, y, now, button=number))
        return events

    def _read_typed(self, coming: Action) -> None:
        """Before the action that follows typed text is passed on, read the field the
        text went to (the page's focused field, `CdpBackend.read_field`) onto the typing's
        capture, as the recorder does for its own channels (`steps.read_back`)."""
        built = self.built.builder.actions
        pending = self.built.pending
        if len(built) < 2 or not pending or built[-2].action.kind is not ActionKind.TYPE:
            return
        typing = pending[-1].capture
        typing.action = built[-2].action
        read_back(self.recorder.backend, [typing], self.recorder.backend.grab(), coming)

    # ---- the end ------------------------------------------------------------------------

    def finish(self) -> list[Capture]:
        """The agent has exited: each action final, with the screen kept before it. A
        navigation of the page during the task that no input of the agent's came shortly
        before (a form submitted or a link followed by script, `page.goto` midway) is
        what replay would not repeat: the recording fails."""
        with self._lock:
            for at in unexplained(self.page.navigations, self._inputs):
                self.recorder.unsupported.append(
                    "the page went to another document with no input from the agent before "
                    f"it ({at - self._inputs[0]:.1f}s into the task: a script that clicks or "
                    "submits, or a navigation by URL): replay would not do it"
                )
                break
            return self.built.finish()


def unexplained(navigations: list[float], inputs: list[float]) -> list[float]:
    """The navigations after the first input that no input came within
    `NAVIGATION_CAUSE` before."""
    if not inputs:
        return []
    return [
        at
        for at in navigations
        if at > inputs[0] and not any(at - NAVIGATION_CAUSE <= i <= at for i in inputs)
    ]
