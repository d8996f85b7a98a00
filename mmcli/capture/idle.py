"""What changes on the screen on its own (a clock, a spinner), learned while the recording
runs: watched on the idle screen before the agent starts (`IdleWatch.observe`), and
sampled between actions once the app has reacted to the last (`IdleWatch.sample`).
Every step masks it, and it does not keep a capture waiting for a still screen.

Between actions, a change seen once is the last action's late answer as often as not (a
server's round trip: the confirmation and the status line came 1.5 s after Submit, and,
learned as changing alone, masked a dialog over the form at replay, which clicked under
it). Only a region that changes again, `REPEAT_APART` or more later with no action
between, changes on its own there."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mmcli.backends.base import Backend
from mmcli.capture.settling import is_caret
from mmcli.screen.analysis import changed_regions_fine, grow_to_text_run
from mmcli.screen.fingerprint import Frame, Rect

SAMPLE_EVERY = 0.25
"""While the agent thinks, the screen is sampled this often to learn what changes alone."""
QUIET_AFTER_ACTION = 1.0
"""Changes within this many seconds of an action are the action's doing, not volatility."""
REPEAT_APART = 1.0
"""Between actions, a region changes on its own when seen changing twice this far apart
(a clock's seconds, a spinner): an answer that comes late, drawn in a few frames (a
fade, a page drawn in parts), comes once."""


@dataclass
class IdleWatch:
    backend: Backend
    volatile: list[Rect] = field(default_factory=list)
    """The regions seen changing on their own."""
    _zones_kept: tuple[Rect, ...] | None = None
    """The backend's quiet zones before the observation added the volatile regions."""

    def observe(self, seconds: float) -> None:
        """Watch the idle screen before the agent starts: what changes now changes alone."""
        deadline = time.monotonic() + seconds
        previous = self.backend.grab()
        while time.monotonic() < deadline:
            time.sleep(min(SAMPLE_EVERY / 2, max(deadline - time.monotonic(), 0)))
            current = self.backend.grab()
            self.note_volatile(previous, current)
            previous = current
        # What changes alone is masked in every step: it does not keep a capture waiting
        # for a still screen either (a spinner would, at every action).
        if self._zones_kept is None:
            self._zones_kept = self.backend.quiet_zones(())
        self.backend.quiet_zones([*self._zones_kept, *self.volatile])

    def note_volatile(self, before: Frame, after: Frame) -> None:
        self.volatile.extend(changes(before, after))

    def sample(
        self,
        lock: threading.Lock,
        closing: Callable[[], bool],
        activity: Callable[[], tuple[float, int]],
    ) -> None:
        """A thread's body: between actions, once the app has reacted (no action for
        `QUIET_AFTER_ACTION`: `activity` tells when the last was, and how many so far),
        note the changes the screen makes on its own, until `closing`."""
        previous: Frame | None = None
        seen = -1
        once: list[tuple[float, Rect]] = []
        """The changes seen since the last action, and when."""
        while not closing():
            time.sleep(SAMPLE_EVERY)
            with lock:
                last, count = activity()
                quiet = time.monotonic() - last >= QUIET_AFTER_ACTION
                if not quiet or closing():
                    previous = None
                    continue
                current = self.backend.grab()
                if seen != count:
                    once = []
                elif previous is not None:
                    once = self.note_repeated(once, changes(previous, current))
                previous, seen = current, count

    def note_repeated(
        self, once: list[tuple[float, Rect]], regions: list[Rect]
    ) -> list[tuple[float, Rect]]:
        """Keep as changing on its own each of `regions` that changed before, at least
        `REPEAT_APART` earlier, since the last action (`once`: those changes, and when);
        return `once` with `regions` added."""
        now = time.monotonic()
        for region in regions:
            earlier = [r for t, r in once if now - t >= REPEAT_APART and r.intersects(region)]
            if earlier:
                self.volatile.extend([*earlier, region])
        return [*once, *((now, r) for r in regions)]

    def restore(self) -> None:
        """Give the backend back the quiet zones it had before `observe`."""
        if self._zones_kept is not None:
            self.backend.quiet_zones(self._zones_kept)


def changes(before: Frame, after: Frame) -> list[Rect]:
    """What changed from `before` to `after`, each grown to its text run (a clock's
    digits, the line they stand on), a blinking caret aside: the matcher knows carets
    where they are harmless; masking it (let alone the text run beside it) would hide
    its field."""
    return [
        grow_to_text_run(after.small, region)
        for region in changed_regions_fine(before, after)
        if not is_caret(before, after, region)
    ]
