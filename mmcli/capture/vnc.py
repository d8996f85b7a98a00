"""The VNC channel: an agent that acts through any VNC client, recorded unmodified.

On a VNC display the agent is given an endpoint of its own (`MM_VNC_ADDRESS`, with the
run's password in `MM_VNC_PASSWORD`): `backends.rfbproxy` in front of the real server.
Each pointer and key event the agent sends reaches `VncChannel.on_input` before the
server: it becomes an `InputEvent` and feeds the same `ActionBuilder` that builds actions
from the display's input, and where an event starts a new action (a press, the first key
of typed text, a chord) the recorder keeps the screen first -- still since the agent's
last input, the server's lag included -- and only then is the event passed on. Later
events may still change that action (more characters, the second click of a double
click, the release that makes a drag); the actions are final when the agent has exited.

Text the agent put on the remote clipboard and then pasted (Ctrl+V, Shift+Insert) is
recorded as typed text, as a paste on an X display is. Keys with no name mm knows, a
button other than the three and the wheel, and RFB messages the endpoint cannot read
fail the run (nothing is saved), as input the X channels cannot record does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mmcli.backends.rfbproxy import CutText, Input, KeyInput, PointerInput, ProxyOpener
from mmcli.backends.vnc import KEYSYMS, PASSWORD_ENV, PASSWORD_FILE_ENV
from mmcli.capture.built import Built, Pending
from mmcli.desktop.clipboard import is_paste
from mmcli.desktop.input_events import EventKind, InputEvent
from mmcli.model import Action, ActionKind

if TYPE_CHECKING:
    from mmcli.backends.base import Backend
    from mmcli.capture.recorder import Recorder
    from mmcli.capture.steps import Capture

ADDRESS_ENV = "MM_VNC_ADDRESS"
MASK_BUTTONS = ((1, 1), (2, 2), (4, 3), (8, 4), (16, 5), (32, 6), (64, 7))
"""RFB's button mask bits and the X buttons they are (4/5 the wheel, 6/7 sideways)."""
EXTRA_KEYSYMS = {0xFFE7: "alt", 0xFFE8: "altright", 0xFE03: "altgr", 0xFF8D: "enter"}
"""Meta (which PC keyboards send as Alt), AltGr, keypad Enter."""


def _key_names() -> dict[int, str]:
    names: dict[int, str] = {}
    for name, sym in KEYSYMS.items():
        if len(name) > 1:  # "\n" and "\t" are characters, not names
            names.setdefault(sym, name)
    return {**names, **EXTRA_KEYSYMS}


KEY_NAMES = _key_names()


def key_of(keysym: int) -> tuple[str, str]:
    """(mm's name of the key, the character it types or '') of an X keysym; ('', '') for
    one mm cannot name."""
    char = ""
    if 0x20 <= keysym <= 0x7E or 0xA0 <= keysym <= 0xFF:
        char = chr(keysym)
    elif 0x01000100 <= keysym <= 0x0110FFFF:
        char = chr(keysym - 0x01000000)
    if keysym in KEY_NAMES:
        return KEY_NAMES[keysym], char
    return (char.lower(), char) if char else ("", "")


class VncChannel:
    """Records an agent's VNC input for `recorder`; `env()` is what the agent is given.
    `open(recorder, backend)` is None on a display that is not reached over VNC."""

    @classmethod
    def open(cls, recorder: Recorder, backend: Backend) -> VncChannel | None:
        if not backend.takes_vnc_clients:
            return None
        return cls(recorder, backend.open_proxy)

    def __init__(self, recorder: Recorder, open_proxy: ProxyOpener) -> None:
        self.recorder = recorder
        self.built = Built(recorder)
        self.dropped: list[str] = []
        self._mask = 0
        self._pointer = (0, 0)
        self._clipboard: str | None = None
        self._lock = threading.Lock()
        self.clock: Callable[[], float] = time.monotonic
        proxy = open_proxy(self.on_input, self._refused, self.dropped.append)
        if proxy is None:
            raise ValueError("this display takes no VNC client")
        self.proxy = proxy

    def env(self) -> dict[str, str]:
        """The endpoint and its password; the real server's password file is not passed
        on (the agent has no need of it)."""
        return {ADDRESS_ENV: self.proxy.address, PASSWORD_ENV: self.proxy.token,
                PASSWORD_FILE_ENV: ""}  # fmt: skip

    def __enter__(self) -> VncChannel:
        self.proxy.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.proxy.close()

    def _refused(self, why: str) -> None:
        self.recorder.unsupported.append(why)

    # ---- input --------------------------------------------------------------------------

    def on_input(self, received: Input) -> None:
        with self._lock:
            if isinstance(received, CutText):
                self._clipboard = received.text
                return
            for event in self._events(received):
                self.built.feed(event, self._clipboard)
            self.recorder.note_activity()  # the input happens now: the screen follows it

    def _events(self, received: PointerInput | KeyInput) -> list[InputEvent]:
        now = self.clock()
        if isinstance(received, KeyInput):
            key, char = key_of(received.keysym)
            kind = EventKind.KEY if received.down else EventKind.KEY_UP
            x, y = self._pointer
            return [InputEvent(kind, x, y, now, key=key, char=char)]
        x, y = received.x, received.y
        events = []
        if (x, y) != self._pointer:
            events.append(InputEvent(EventKind.MOTION, x, y, now))
        for bit, button in MASK_BUTTONS:
            was, now_held = bool(self._mask & bit), bool(received.buttons & bit)
            if now_held != was:
                kind = EventKind.PRESS if now_held else EventKind.RELEASE
                events.append(InputEvent(kind, x, y, now, button=button))
        if received.buttons & 0x80:
            self.recorder.unsupported.append("button 8 of the pointer (over VNC)")
        self._mask, self._pointer = received.buttons, (x, y)
        return events

    # ---- the end ------------------------------------------------------------------------

    def finish(self) -> list[Capture]:
        """The agent has exited: each action final, with the screen kept before it."""
        with self._lock:
            return self.built.finish(self._final)

    @staticmethod
    def _final(action: Action, pending: Pending) -> tuple[Action, str]:
        """Text the agent put on the clipboard and pasted is typed text."""
        if action.kind is ActionKind.HOTKEY and is_paste(action.keys) and pending.clipboard:
            return Action(ActionKind.TYPE, text=pending.clipboard), "pasted from the clipboard"
        return action, ""
