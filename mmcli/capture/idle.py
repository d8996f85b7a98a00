"""What changes on the screen on its own (a clock, a spinner), learned while the recording
runs: watched on the idle screen before the agent starts (`IdleWatch.observe`), and
sampled between actions once the app has reacted to the last (`IdleWatch.sample`).
Every step masks it, and it does not keep a capture waiting for a still screen."""

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
        for region in changed_regions_fine(before, after):
            if is_caret(before, after, region):
                # A blinking caret: the matcher knows carets where they are harmless;
                # masking it (let alone the text run beside it) would hide its field.
                continue
            self.volatile.append(grow_to_text_run(after.small, region))

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
        while not closing():
            time.sleep(SAMPLE_EVERY)
            with lock:
                last, count = activity()
                quiet = time.monotonic() - last >= QUIET_AFTER_ACTION
                if not quiet or closing():
                    previous = None
                    continue
                current = self.backend.grab()
                if previous is not None and seen == count:
                    self.note_volatile(previous, current)
                previous, seen = current, count

    def restore(self) -> None:
        """Give the backend back the quiet zones it had before `observe`."""
        if self._zones_kept is not None:
            self.backend.quiet_zones(self._zones_kept)
