"""The interface every screen/input backend implements."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from mmcli.model import Action
from mmcli.screen.fingerprint import Frame, Rect, same_picture
from mmcli.screen.windows import StackedWindow, WindowRef, over_the_keyboard

if TYPE_CHECKING:
    from mmcli.backends.rfbproxy import Input, RFBProxy
    from mmcli.desktop.display import CdpAddress
    from mmcli.desktop.input_watch import EventSource, Grabber
    from mmcli.readback.field import FieldText, NotRead
    from mmcli.screen.under import SeenUnder

FAILSAFE_MARGIN = 0
"""How far (px) from a corner the pointer may be and still count as 'in the corner'."""
SETTLE_QUIET = 0.03
"""A screen is still once it has not changed for this long (nor been given input)."""
SETTLE_LIMIT = 1.0
ZONE_MARGIN = 8
"""How far past a quiet zone a reported change may reach and still be the zone's own
(`Backend.quiet_zones`): a repaint is reported for the widget's area, a few pixels wider
than the pixels that changed, which the zone was learned from."""


RECENT_CHANGES = 256
"""How many of the latest changes a `ChangeLog` remembers the time of (`first_after`)."""


class Settled(NamedTuple):
    """The screen grabbed once it was still; `still` is False when `settle` gave up
    waiting (the screen kept changing until its limit)."""

    frame: Frame
    still: bool
    at: float
    """When the frame was grabbed (monotonic)."""
    stack: list[StackedWindow] | None = None
    """With `settle(windows=True)`: the window system's stack (`Backend.stack`), asked
    just before the frame was grabbed. A window mapped in between is in the frame but not
    in the stack, so the pixels judge it; one mapped after the grab is in neither, and the
    stack asked again at the moment of acting differs."""


class ChangeLog:
    """When the screen last changed, as reported by whatever watches it (on X11 the
    DAMAGE extension, from a reader thread); waiters are woken at each report."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.changed_at = time.monotonic()
        self.count = 0
        self._recent: deque[tuple[float, Sequence[Rect] | None]] = deque(maxlen=RECENT_CHANGES)
        self.quiet_zones: tuple[Rect, ...] = ()
        """Regions whose own changes are not noted (`Backend.quiet_zones`)."""

    def note(self, reports: int = 1, areas: Sequence[Rect] | None = None) -> None:
        """The screen changed just now; `areas`, where (None: not known). A change wholly
        inside the quiet zones is not noted."""
        zones = self.quiet_zones
        if areas and zones and all(any(a.inside(z) for z in zones) for a in areas):
            return
        with self._changed:
            self.changed_at = time.monotonic()
            self.count += reports
            self._recent.append((self.changed_at, areas or None))
            self._changed.notify_all()

    def first_after(self, since: float, at: tuple[int, int] | None = None) -> float | None:
        """When the screen first changed after `since` (monotonic), among the last
        `RECENT_CHANGES` changes noted; None if it has not. With `at`, only changes
        reported there count (and those reported without an area)."""
        spot = Rect(*at, 1, 1) if at is not None else None
        with self._changed:
            first = None
            for when, areas in reversed(self._recent):
                if when <= since:
                    break
                if spot is None or areas is None or any(a.intersects(spot) for a in areas):
                    first = when
            return first

    def areas_between(self, start: float, end: float) -> list[Rect] | None:
        """Where the screen changed after `start` and up to `end` (monotonic); None when a
        change there came without its area, or when the changes are older than the log
        remembers."""
        with self._changed:
            if not self._reaches(start):
                return None
            out: list[Rect] = []
            for when, areas in self._recent:
                if start < when <= end:
                    if areas is None:
                        return None
                    out.extend(areas)
            return out

    def _reaches(self, since: float) -> bool:
        """Whether every change after `since` is still remembered."""
        recent = self._recent
        return len(recent) < RECENT_CHANGES or recent[0][0] <= since

    def last_outside(self, since: float, regions: Sequence[Rect]) -> float | None:
        """When the screen last changed after `since` other than wholly inside `regions`;
        `since` when it has not; None when the log does not reach back to `since`."""
        with self._changed:
            if not self._reaches(since):
                return None
            for when, areas in reversed(self._recent):
                if when <= since:
                    break
                if areas is None or not all(any(a.inside(r) for r in regions) for a in areas):
                    return when
            return since

    def wait_still(self, quiet: float, floor: float, deadline: float) -> bool:
        """Wait until neither a change nor `floor` (the last input) is less than `quiet`
        seconds old; False if `deadline` (monotonic) came first."""
        with self._changed:
            while True:
                now = time.monotonic()
                last = max(self.changed_at, floor)
                if now - last >= quiet:
                    return True
                if now >= deadline:
                    return False
                self._changed.wait(min(last + quiet, deadline) - now)

    def wait_change(self, since: float, deadline: float) -> bool:
        """Wait until the screen changes after `since` (monotonic); False at `deadline`."""
        with self._changed:
            while self.changed_at <= since:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True


class BrowserPage(NamedTuple):
    """The browser page a display is (`--display cdp://`), as an agent's own DevTools
    endpoint needs it (`capture.cdp`)."""

    address: CdpAddress
    """The browser's DevTools, as given."""
    id: str
    """The DevTools id of the page driven."""
    navigations: list[float]
    """When the page's main frame went to another document (monotonic), growing."""


class Backend(ABC):
    """One display: its pixels, its pointer, its keyboard and mouse."""

    input_at: float = 0.0
    """When this backend last gave the display input (monotonic); `settle` counts the
    screen as still only from then on."""

    @abstractmethod
    def size(self) -> tuple[int, int]: ...

    @abstractmethod
    def grab(self) -> Frame: ...

    @abstractmethod
    def pointer(self) -> tuple[int, int]: ...

    @abstractmethod
    def move(self, x: int, y: int) -> None: ...

    def valid_key(self, key: str) -> bool:
        """Whether a press or hotkey of `key` does something (else it would do nothing)."""
        return True

    def agent_env(self) -> dict[str, str]:
        """What an agent spawned on this display is given to reach it (an X display's
        `DISPLAY`); nothing where it reaches the display another way."""
        return {}

    @abstractmethod
    def perform(self, action: Action) -> None:
        """Perform `action` (already rendered: no placeholders left)."""

    def grab_rect(self, rect: Rect) -> np.ndarray:
        """The full-resolution BGRX pixels of a rectangle of the screen, (h, w, 4); works
        inside `perform_checked`'s check."""
        return self.grab().pixels[rect.y : rect.bottom, rect.x : rect.right]

    def perform_checked(self, action: Action, unchanged: Callable[[], bool]) -> bool:
        """Perform `action` only if `unchanged()` holds at the moment of acting; False if it
        did not (nothing was done). Backends that can hold the display still between the
        check and the action do so; this default only narrows the gap."""
        if not unchanged():
            return False
        self.perform(action)
        return True

    def changes(self) -> ChangeLog | None:
        """Reports of every change to the screen as it happens, when the display can give
        them (None: `settle` samples the screen instead)."""
        return None

    _quiet_zones: tuple[Rect, ...] = ()

    def quiet_zones(self, zones: Sequence[Rect]) -> tuple[Rect, ...]:
        """Regions whose own changes do not make the screen busy for `settle`: the regions
        a recording learned change alone (a clock, a spinner) and those the run ignores.
        The checks leave them out, so a screen that changes only there is still: without
        this, an animation anywhere on the screen would keep it from ever being still.
        Returns the zones before (to put back)."""
        before, self._quiet_zones = self._quiet_zones, tuple(zones)
        log = self.changes()
        if log is not None:
            log.quiet_zones = tuple(z.grow(ZONE_MARGIN) for z in self._quiet_zones)
        return before

    def current_quiet_zones(self) -> tuple[Rect, ...]:
        """The zones `quiet_zones` set last."""
        return self._quiet_zones

    def settle(
        self,
        quiet: float = SETTLE_QUIET,
        limit: float = SETTLE_LIMIT,
        since: float = 0.0,
        windows: bool = False,
    ) -> Settled:
        """The screen once it has been still for `quiet` seconds, counted from its last
        change and from the last input (this backend's own, or `since` for input given
        elsewhere); after `limit` seconds of changes, the latest screen, not still. With
        `windows`, the window system's stack too, asked just before the grab
        (`Settled.stack`).

        With change reports the wait ends within a few ms of the app's last repaint;
        without, two grabs `quiet` apart must agree."""
        log = self.changes()
        deadline = time.monotonic() + limit
        if log is None:
            return self._settle_sampling(quiet, deadline, windows)
        floor = max(self.input_at, since)
        while True:
            still = log.wait_still(quiet, floor, deadline)
            count = log.count
            stack = self.stack() if windows else None
            at = time.monotonic()
            frame = self.grab()
            if not still or log.count == count:
                return Settled(frame, still, at, stack)
            # A change was reported while grabbing: the frame may be half drawn.

    def wait_still(self, quiet: float = SETTLE_QUIET, limit: float = SETTLE_LIMIT) -> bool:
        """`settle` without the screen: with change reports, no grab at all."""
        log = self.changes()
        if log is None:
            return self.settle(quiet, limit).still
        return log.wait_still(quiet, self.input_at, time.monotonic() + limit)

    def _settle_sampling(self, quiet: float, deadline: float, windows: bool) -> Settled:
        frame = self.grab()
        while True:
            time.sleep(quiet)
            stack = self.stack() if windows else None
            at = time.monotonic()
            latest = self.grab()
            if same_picture(frame, latest, leave_out=self._quiet_zones):
                return Settled(latest, True, at, stack)
            if time.monotonic() >= deadline:
                return Settled(latest, False, at, stack)
            frame = latest

    def wait_change(self, since: float, timeout: float) -> None:
        """Return once the screen has changed after `since` (monotonic), or after `timeout`
        seconds (without change reports: after `timeout`)."""
        log = self.changes()
        if log is None:
            time.sleep(timeout)
        else:
            log.wait_change(since, time.monotonic() + timeout)

    def workarea(self) -> Rect | None:
        """The part of the screen windows may use, less the desktop's panels (None: the
        whole screen, or not known)."""
        return None

    def windows(self) -> list[WindowRef] | None:
        """The application windows on the screen (`screen.windows`), as the window
        manager lists them; None where the window system cannot tell."""
        return None

    def stack(self) -> list[StackedWindow] | None:
        """Every window on the screen, bottom to top, with what it is (its EWMH type,
        transient-for, override-redirect, the input focus): the window system's account,
        for judging a window new since the recording. None where it cannot tell (no
        window manager, a remote desktop)."""
        return None

    def window_at(self, x: int, y: int) -> WindowRef | None:
        """The application window whose client area is topmost at (x, y), if known."""
        return None

    def keyboard_window(self) -> WindowRef | None:
        """The application window that has the keyboard (the window manager's active
        window), if known: where typed keys go."""
        return None

    def activate(self, xid: int) -> bool:
        """Make the client window `xid` (`StackedWindow.xid`) the one with the keyboard,
        as a click into it would (click-to-focus); True once the window system says it
        is. Backends without a window manager to ask do nothing."""
        return False

    def window_title_at(self, x: int, y: int) -> str | None:
        """The title of the application window at (x, y), to name it in messages; None
        where there is none or it cannot be told."""
        return None

    def read_field(
        self, box: Rect | None, frame: Frame | None = None, prefer: str = ""
    ) -> FieldText | NotRead:
        """The text of the field typed text went to: where the display can tell it, the
        focused field's own text (the accessibility tree); else OCR of `box` on `frame`
        (None: the screen now). `prefer` "ocr": the pixels alone."""
        from mmcli.readback.field import NotRead
        from mmcli.readback.reader import read_pixels

        if box is None:
            return NotRead("ocr", "the field's place on the screen is not known")
        return read_pixels(frame or self.grab(), box, over_the_keyboard(self.stack() or []))

    def seen_under(self, frame: Frame, covering: Sequence[StackedWindow]) -> SeenUnder | None:
        """`frame` with the places of `covering` (another app's notification over the
        task, with its shade) painted from the windows under them, from each window's own
        pixels (`screen.under`); None where the display keeps no window's pixels but on
        the screen (no compositing manager, a remote desktop, a browser's page)."""
        return None

    def release_kept(self) -> None:  # noqa: B027 - optional hook
        """End what `seen_under` asked the display to keep, if anything (the windows' own
        pixels, kept from the first look under a window on)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def open_grabber(self) -> Grabber:
        """Something with `grab()` and `close()` for another thread to grab the screen
        with (the backend's own grabber may not be shared between threads)."""
        return _SharedGrabber(self)

    def input_source(self) -> EventSource | None:
        """A source of the display's device events (`input_watch.EventSource`), or None
        where input cannot be watched. Raises `DisplayError` when it should be possible
        but fails."""
        return None

    takes_vnc_clients: bool = False
    """The display is reached over VNC: an agent acts on it through a VNC client of its
    own, given an endpoint in front of it (`open_proxy`)."""
    takes_local_input: bool = True
    """Input given on the local X display (pyautogui, xdotool) reaches this display. Not
    so for a remote one (VNC, a browser's DevTools): an agent acts there through mm's
    own connection (`mm act`) or an endpoint in front of it."""

    def page(self) -> BrowserPage | None:
        """The browser page this display is; None for a desktop's display."""
        return None

    def open_proxy(
        self,
        on_input: Callable[[Input], None],
        on_refused: Callable[[str], None],
        on_dropped: Callable[[str], None],
    ) -> RFBProxy | None:
        """An endpoint for an agent's VNC client in front of this display (see
        `rfbproxy.RFBProxy`), not yet listening; None where there is none."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def in_failsafe_corner(point: tuple[int, int], size: tuple[int, int]) -> bool:
    """True when the pointer is in a screen corner: the user's way to stop a replay."""
    x, y = point
    w, h = size
    m = FAILSAFE_MARGIN
    near_x = x <= m or x >= w - 1 - m
    near_y = y <= m or y >= h - 1 - m
    return near_x and near_y


class _SharedGrabber:
    def __init__(self, backend: Backend) -> None:
        self.grab = backend.grab

    def close(self) -> None:
        pass
