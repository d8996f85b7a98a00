"""The display's device events from the X RECORD extension (see `input_watch`).

RECORD delivers every device event reaching the X server -- real input and input injected
through XTEST alike -- and, here, the SendEvent requests that carry key and button events
to a window. Each becomes an `InputEvent` with pyautogui's key names and the character it
typed, read with the keymap as it was at that moment: the ChangeKeyboardMapping requests
of every client are recorded too, in the same stream (xdotool types a character missing
from the keymap by binding it to a spare key for the instant of its press).
"""

from __future__ import annotations

import functools
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from mmcli.desktop.input_events import EventKind, InputEvent

SEND_EVENT = 25
"""The core X request that sends an event to a window (XSendEvent)."""
CHANGE_KEYBOARD_MAPPING = 100
"""The core X request that rebinds keycodes to keysyms."""
START_TIMEOUT = 5.0

X_NAMES = {
    "Return": "enter",
    "KP_Enter": "enter",
    "Tab": "tab",
    "ISO_Left_Tab": "tab",
    "Escape": "esc",
    "BackSpace": "backspace",
    "Delete": "delete",
    "KP_Delete": "delete",
    "Insert": "insert",
    "Home": "home",
    "End": "end",
    "Prior": "pageup",
    "Next": "pagedown",
    "Left": "left",
    "Right": "right",
    "Up": "up",
    "Down": "down",
    "Pause": "pause",
    "Print": "printscreen",
    "Menu": "apps",
    "Scroll_Lock": "scrolllock",
    "space": "space",
    "Shift_L": "shift",
    "Shift_R": "shift",
    "Control_L": "ctrl",
    "Control_R": "ctrl",
    "Alt_L": "alt",
    "Alt_R": "alt",
    "Meta_L": "alt",
    "Meta_R": "alt",
    "Super_L": "win",
    "Super_R": "win",
    "Hyper_L": "win",
    "Hyper_R": "win",
    "ISO_Level3_Shift": "altgr",
    "Mode_switch": "altgr",
    "Caps_Lock": "capslock",
    "Num_Lock": "numlock",
}


UNICODE_KEYSYM = 0x1000000
"""Keysyms from here on are a Unicode code point plus this (X11's keysym encoding)."""
EURO_SIGN = 0x20AC


def _printable(keysym: int) -> str:
    """The character a keysym types (Latin-1, the euro sign, or a Unicode keysym), or ''."""
    if 0x20 <= keysym <= 0x7E or 0xA0 <= keysym <= 0xFF:
        return chr(keysym)
    if keysym == EURO_SIGN:
        return "€"
    if UNICODE_KEYSYM + 0xA0 <= keysym <= UNICODE_KEYSYM + 0x10FFFF:
        char = chr(keysym - UNICODE_KEYSYM)
        return char if char.isprintable() else ""
    return ""


def remapped(request: bytes) -> dict[int, list[int]]:
    """The keycodes a ChangeKeyboardMapping request (as RECORD gives it, in the client's
    byte order, which must be the server's) binds, with their keysyms; {} for another."""
    if len(request) < 8 or request[0] != CHANGE_KEYBOARD_MAPPING:
        return {}
    count, first, per = request[1], request[4], request[5]
    if per == 0 or len(request) < 8 + 4 * count * per:
        return {}
    keysyms = struct.unpack_from(f"={count * per}I", request, 8)
    return {first + i: list(keysyms[i * per : (i + 1) * per]) for i in range(count)}


def key_names(keysym0: int, keysym1: int, shifted: bool, x_name: str) -> tuple[str, str]:
    """(pyautogui key name, character typed) for a key whose keysyms are given."""
    if x_name in X_NAMES:
        name = X_NAMES[x_name]
        return name, " " if name == "space" else ""
    if x_name.startswith("F") and x_name[1:].isdigit():
        return x_name.lower(), ""
    base = _printable(keysym0)
    char = _printable(keysym1 if shifted and keysym1 else keysym0)
    return base.lower() if base.isalpha() else base, char


@functools.cache
def _keysym_names() -> dict[int, str]:
    """X's names of keysyms ('Return', 'Shift_L', 'a'), from python-xlib's tables."""
    from Xlib import XK

    names: dict[int, str] = {}
    for attr in dir(XK):
        if attr.startswith("XK_"):
            names.setdefault(getattr(XK, attr), attr[3:])
    return names


class XRecordSource:
    """Device events from the X RECORD extension, on two connections of its own."""

    def __init__(self, name: str | None = None) -> None:
        from Xlib import display

        self._data = display.Display(name)
        self._control = display.Display(name)
        if not self._control.has_extension("RECORD"):
            self._data.close()
            self._control.close()
            raise RuntimeError("the X server has no RECORD extension")
        first = self._control.display.info.min_keycode
        count = self._control.display.info.max_keycode - first + 1
        self._keymap = {
            first + i: row for i, row in enumerate(self._control.get_keyboard_mapping(first, count))
        }
        self._shift: set[int] = set()
        self._context: int | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._on_event: Callable[[InputEvent], None] = lambda e: None
        self.failed: str | None = None

    def start(self, on_event: Callable[[InputEvent], None]) -> None:
        from Xlib import X
        from Xlib.ext import record

        self._on_event = on_event
        self._context = self._control.record_create_context(
            0,
            [record.AllClients],
            [
                {
                    "core_requests": (SEND_EVENT, SEND_EVENT),
                    "core_replies": (0, 0),
                    "ext_requests": (0, 0, 0, 0),
                    "ext_replies": (0, 0, 0, 0),
                    "delivered_events": (0, 0),
                    "device_events": (X.KeyPress, X.MotionNotify),
                    "errors": (0, 0),
                    "client_started": False,
                    "client_died": False,
                },
                {
                    "core_requests": (CHANGE_KEYBOARD_MAPPING, CHANGE_KEYBOARD_MAPPING),
                    "core_replies": (0, 0),
                    "ext_requests": (0, 0, 0, 0),
                    "ext_replies": (0, 0, 0, 0),
                    "delivered_events": (0, 0),
                    "device_events": (0, 0),
                    "errors": (0, 0),
                    "client_started": False,
                    "client_died": False,
                },
            ],
        )
        self._control.sync()
        self._thread = threading.Thread(target=self._run, name="mm-input", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise RuntimeError(self.failed or "the RECORD extension did not start")

    def _run(self) -> None:
        try:
            self._data.record_enable_context(self._context, self._receive)
        except Exception as e:  # the connection went away: no more events
            self.failed = f"{type(e).__name__}: {e}"
            self._ready.set()

    def _receive(self, reply: Any) -> None:
        from Xlib.ext import record
        from Xlib.protocol import rq

        if reply.category == record.StartOfData:
            self._ready.set()
            return
        if reply.client_swapped or not reply.data:
            return
        if reply.category == record.FromClient:
            self._keymap.update(remapped(reply.data))
            sent = self._sent(reply.data)
            if sent is not None:
                self._on_event(sent)
            return
        if reply.category != record.FromServer:
            return
        data = reply.data
        while len(data) >= 32:
            event, data = rq.EventField(None).parse_binary_value(
                data, self._data.display, None, None
            )
            converted = self._convert(event)
            if converted is not None:
                self._on_event(converted)

    def _sent(self, request: bytes) -> InputEvent | None:
        """A key or button press inside a SendEvent request (opcode, propagate, length,
        destination, mask, then the 32-byte event)."""
        from Xlib import X

        if len(request) < 44 or request[0] != SEND_EVENT:
            return None
        kind, detail = request[12] & 0x7F, request[13]
        now = time.monotonic()
        if kind == X.ButtonPress:
            return InputEvent(EventKind.SENT, 0, 0, now, button=detail)
        if kind != X.KeyPress:
            return None
        row = self._keymap.get(detail, [0, 0])
        keysym0 = row[0] if row else 0
        name, _ = key_names(keysym0, 0, False, _keysym_names().get(keysym0, ""))
        return InputEvent(EventKind.SENT, 0, 0, now, key=name)

    def _convert(self, event: Any) -> InputEvent | None:
        from Xlib import X

        kinds = {
            X.ButtonPress: EventKind.PRESS,
            X.ButtonRelease: EventKind.RELEASE,
            X.KeyPress: EventKind.KEY,
            X.KeyRelease: EventKind.KEY_UP,
            X.MotionNotify: EventKind.MOTION,
        }
        kind = kinds.get(event.type)
        if kind is None:
            return None
        now = time.monotonic()
        if kind in (EventKind.PRESS, EventKind.RELEASE, EventKind.MOTION):
            button = event.detail if kind is not EventKind.MOTION else 0
            return InputEvent(kind, event.root_x, event.root_y, now, button=button)
        row = self._keymap.get(event.detail, [0, 0])
        keysym0 = row[0] if row else 0
        keysym1 = row[1] if len(row) > 1 else 0
        x_name = _keysym_names().get(keysym0, "")
        name, char = key_names(keysym0, keysym1, bool(self._shift), x_name)
        if name == "shift":
            if kind is EventKind.KEY:
                self._shift.add(event.detail)
            else:
                self._shift.discard(event.detail)
        return InputEvent(kind, event.root_x, event.root_y, now, key=name, char=char)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        if self._context is not None:
            # Input the agent sent just before it exited may still be queued in the
            # server: a round trip first, then the server flushes what it recorded.
            self._control.sync()
            time.sleep(0.05)
            self._control.record_disable_context(self._context)
            self._control.sync()
        if self._thread is not None:
            self._thread.join(timeout=START_TIMEOUT)
        if self._context is not None:
            self._control.record_free_context(self._context)
            self._control.sync()
        self._control.close()
        self._data.close()
