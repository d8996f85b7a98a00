"""Watching the display's input while an agent runs or a person demonstrates.

An `EventSource` (on X11, `backends.xrecord`: the RECORD extension) delivers every input
event reaching the display -- real input and input injected through XTEST (pyautogui,
xdotool, pynput, nut.js) alike -- in a thread of its own. `InputWatch` accounts for each
press against the actions the recording channels reported (`Ledger`); what no channel
reported is either noted (the run then fails loudly) or, when recording from the
display's input, turned into actions (`ActionBuilder`) with the screen from just before
it: a `ScreenKeeper` grabs the screen in the background and keeps the last settled
picture, since the screen before an unannounced event cannot be captured after the fact.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from mmcli.desktop.input_events import ActionBuilder, EventKind, InputEvent, Ledger
from mmcli.model import POINTED, Action, ActionKind
from mmcli.screen.analysis import patch_of, window_changed_at
from mmcli.screen.fingerprint import Frame, same_picture

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
        on_activity: Callable[[bool], None] | None = None,
        pointer: tuple[int, int] = (0, 0),
    ) -> None:
        self.source = source
        self.build = build or demo
        self.demo = demo
        self.ledger = Ledger()
        self.builder = ActionBuilder(stop_chord=demo, apart=self._apart)
        self.unaccounted: list[InputEvent] = []
        self.errors: list[str] = []
        self.observed: list[Observed | None] = []
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._focus: tuple[int, int] | None = None
        self._moves: deque[tuple[float, tuple[int, int]]] = deque([(0.0, pointer)], maxlen=1024)
        self._on_activity = on_activity or (lambda pressed: None)
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
        self._on_activity(event.kind in (EventKind.KEY, EventKind.PRESS))
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

    def _apart(self, first: InputEvent, event: InputEvent) -> bool:
        """A window opened or closed under the pointer between the screen kept before the
        last press and one settled after it, before this press (`ActionBuilder.apart`)."""
        last = self.observed[-1] if self.observed else None
        now = self._keeper.before() if self._keeper is not None else None
        if last is None or now is None or not first.at < now[1] <= event.at:
            return False
        return window_changed_at(last.frame_small, now[0].small, (event.x, event.y))

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
