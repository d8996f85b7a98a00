"""Watching the display's input while an agent runs or a person demonstrates.

The X RECORD extension delivers every device event reaching the display -- real input
and input injected through XTEST (pyautogui, xdotool, pynput, nut.js) alike -- to a
connection of our own, in a thread. `InputWatch` accounts for each press against the
actions the recording channels reported (`Ledger`); what no channel reported is either
noted (the run then fails loudly) or, when recording from the display's input, turned
into actions (`ActionBuilder`) with the screen from just before it: a `ScreenKeeper`
grabs the screen in the background and keeps the last settled picture, since the
screen before an unannounced event cannot be captured after the fact.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from mmcli.fingerprint import Frame, patch_of, same_picture
from mmcli.input_events import ActionBuilder, EventKind, InputEvent, Ledger
from mmcli.model import POINTED, Action, ActionKind

SEND_EVENT = 25
"""The core X request that sends an event to a window (XSendEvent)."""
KEEP_EVERY = 0.08
"""How often (s) the screen keeper grabs the screen while recording from input."""
START_TIMEOUT = 5.0


class EventSource(Protocol):
    """Where device events come from (the X RECORD extension, or a test's list)."""

    def start(self, on_event: Callable[[InputEvent], None]) -> None: ...

    def stop(self) -> None: ...


class Grabber(Protocol):
    def grab(self) -> Frame: ...

    def close(self) -> None: ...


# ---- X RECORD ----------------------------------------------------------------------------------

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


def _printable(keysym: int) -> str:
    """The Latin-1 character of a keysym, or ''."""
    return chr(keysym) if 0x20 <= keysym <= 0x7E or 0xA0 <= keysym <= 0xFF else ""


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

    def __init__(self) -> None:
        from Xlib import display

        self._data = display.Display()
        self._control = display.Display()
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
                }
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


# ---- the screen just before -------------------------------------------------------------------


class ScreenKeeper:
    """Grabs the screen in the background; `before()` is the last settled picture."""

    def __init__(self, open_grabber: Callable[[], Grabber], every: float = KEEP_EVERY) -> None:
        self._open = open_grabber
        self._every = every
        self._settled: tuple[Frame, float] | None = None
        self._previous: tuple[Frame, float] | None = None
        self._closing = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mm-keeper", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(START_TIMEOUT)

    def _run(self) -> None:
        grabber = self._open()
        try:
            while not self._closing.is_set():
                grabbed = (grabber.grab(), time.monotonic())
                if self._previous is not None and same_picture(self._previous[0], grabbed[0]):
                    self._settled = self._previous
                elif self._settled is None:
                    self._settled = grabbed
                self._previous = grabbed
                self._ready.set()
                self._closing.wait(self._every)
        finally:
            grabber.close()
            self._ready.set()

    def before(self) -> tuple[Frame, float] | None:
        """The last settled screen and when it was grabbed (monotonic)."""
        return self._settled or self._previous

    def stop(self) -> None:
        self._closing.set()
        self._thread.join(timeout=START_TIMEOUT)


# ---- the watch ---------------------------------------------------------------------------------


@dataclass
class Observed:
    """The screen when an observed action started (what a `Capture` needs of it)."""

    frame_small: Any
    patch: Any
    pointer: tuple[int, int]
    size: tuple[int, int]
    at: datetime
    thumbnail: Any


class InputWatch:
    """Accounts for the display's input and, with `build`, records what no channel did.

    `report(action)` is called by the recorder for each action a channel reports, before
    its input happens. With `demo`, every event is the person's, and the stop chord ends
    the watch (`stopped` is set).
    """

    def __init__(
        self,
        source: EventSource,
        open_grabber: Callable[[], Grabber] | None = None,
        *,
        build: bool = False,
        demo: bool = False,
        on_activity: Callable[[], None] | None = None,
        pointer: tuple[int, int] = (0, 0),
    ) -> None:
        self.source = source
        self.build = build or demo
        self.demo = demo
        self.ledger = Ledger()
        self.builder = ActionBuilder(stop_chord=demo)
        self.unaccounted: list[InputEvent] = []
        self.errors: list[str] = []
        self.observed: list[Observed | None] = []
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._focus: tuple[int, int] | None = None
        self._moves: deque[tuple[float, tuple[int, int]]] = deque([(0.0, pointer)], maxlen=1024)
        self._on_activity = on_activity or (lambda: None)
        self._keeper = ScreenKeeper(open_grabber) if self.build and open_grabber else None
        self._thumbs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mm-ithumb")

    def start(self) -> None:
        if self._keeper is not None:
            self._keeper.start()
        self.source.start(self.handle)

    def stop(self) -> None:
        try:
            self.source.stop()
        finally:
            if self._keeper is not None:
                self._keeper.stop()

    def report(self, action: Action) -> None:
        with self._lock:
            self.ledger.report(action, time.monotonic())
            if action.kind is ActionKind.CLICK:
                self._focus = action.point

    def handle(self, event: InputEvent) -> None:
        try:
            self._handle(event)
        except Exception as e:  # in the X thread: note it, the run must not pass unseen
            self.errors.append(f"{type(e).__name__}: {e}")

    def alive(self) -> bool:
        """False once the source can deliver no more events (the display went away)."""
        return bool(getattr(self.source, "alive", lambda: True)())

    def _handle(self, event: InputEvent) -> None:
        # Any input, motion included, means the screen changes now because of it, not
        # on its own (hover effects of a person's pointer are not volatile regions).
        self._on_activity()
        with self._lock:
            if event.kind is not EventKind.SENT:
                self._moves.append((event.at, (event.x, event.y)))
            accounted = False if self.demo else self.ledger.account(event, event.at)
            if not accounted and not self.build:
                self.unaccounted.append(event)
            if not self.build:
                return
            if self.builder.feed(event, accounted=accounted):
                self.observed.append(self._snapshot(self.builder.actions[-1].action, event))
            if self.builder.stopped:
                self.stopped.set()

    def _snapshot(self, action: Action, event: InputEvent) -> Observed | None:
        before = self._keeper.before() if self._keeper is not None else None
        if action.kind is ActionKind.CLICK:
            self._focus = action.point
        if before is None:
            return None
        frame, grabbed = before
        target = action.point if action.kind in POINTED else self._focus
        # Where the pointer was when that screen was grabbed: replay puts it there before
        # comparing, so hover effects compare like with like.
        pointer = next((p for t, p in reversed(self._moves) if t <= grabbed), (event.x, event.y))
        return Observed(
            frame.small,
            patch_of(frame, *target) if target else None,
            pointer,
            (frame.width, frame.height),
            datetime.now(UTC),
            self._thumbs.submit(_png_of, frame),
        )

    def actions(self) -> list[tuple[Action, Observed | None]]:
        """The actions built from the observed input, each with its screen before."""
        with self._lock:
            pairs = list(zip(self.builder.finish(), self.observed, strict=True))
        for action, observed in pairs:
            if observed is None:
                self.builder.unrecordable.append(f"{action.describe()} (no screen was kept)")
        return pairs

    def close(self) -> None:
        self._thumbs.shutdown(wait=True)


def _png_of(frame: Frame) -> bytes:
    import io

    buf = io.BytesIO()
    frame.thumbnail().save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()
