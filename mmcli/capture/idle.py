"""What changes on the screen on its own (a clock, a spinner), learned while the recording
runs: watched on the idle screen before the agent starts (`IdleWatch.observe`), and
sampled between actions once the app has reacted to the last (`IdleWatch.sample`).
Every step masks it, and it does not keep a capture waiting for a still screen.

A change seen once is an answer as often as not: between actions, the last action's late
answer (a server's round trip: the confirmation and the status line came 1.5 s after
Submit, and, learned as changing alone, masked a dialog over the form at replay, which
clicked under it); before the agent starts, the app finishing its start (a "Connecting"
box that closes itself, a page drawn in parts). Only a region that changes again,
`REPEAT_APART` or more later with no action between, changes on its own. The idle watch
goes on past its time, up to `OBSERVE_GRACE`, while a change it saw once could still
come again (a clock's seconds seen ticking once). What changes once after each of
several actions, to another value each time, is an app's gauge (`gauges`)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mmcli.backends.base import Backend
from mmcli.capture.gauges import Gauges
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
UNEVEN = 0.4
"""Each wait between samples is `SAMPLE_EVERY` (or its half) give or take this much of it,
at random: at a fixed pace an animation whose period is a multiple of the pace is seen in
the same few phases each time (a bar sweeping its canvas every 0.5 s, sampled every 0.25
s, was learned over part of its sweep, and the replay's outcome saw it past that part:
exit 6)."""
OBSERVE_GRACE = 2 * REPEAT_APART + 0.25
"""The idle watch goes on this much past its time at most, while a change it saw once
has not had `REPEAT_APART` and a sample more to come again: a clock's second ticks
seen 0.9 s apart (the samples' grain) are learned at the third tick."""

_pace = random.Random()


def uneven(seconds: float) -> float:
    """`seconds`, give or take `UNEVEN` of it."""
    return seconds * _pace.uniform(1 - UNEVEN, 1 + UNEVEN)


@dataclass
class IdleWatch:
    backend: Backend
    volatile: list[Rect] = field(default_factory=list)
    """The regions seen changing on their own."""
    gauges: Gauges = field(default_factory=Gauges)
    """What changed once between actions, and the app's gauges it makes (`gauges`)."""
    _zones_kept: tuple[Rect, ...] | None = None
    """The backend's quiet zones before the observation added the volatile regions."""

    def observe(self, seconds: float) -> None:
        """Watch the idle screen before the agent starts, `seconds` and then as long as
        a change seen once could still come again (`OBSERVE_GRACE` at most): what
        changes again changes alone."""
        start = time.monotonic()
        deadline, limit = start + seconds, start + seconds + OBSERVE_GRACE
        previous = self.backend.grab()
        once: list[tuple[float, Rect]] = []
        while (now := time.monotonic()) < limit and (now < deadline or self._pending(once)):
            pause = uneven(SAMPLE_EVERY / 2)
            time.sleep(pause if now >= deadline else min(pause, deadline - now))
            current = self.backend.grab()
            once = self.note_repeated(once, changes(previous, current))
            previous = current
        # What changes alone is masked in every step: it does not keep a capture waiting
        # for a still screen either (a spinner would, at every action).
        if self._zones_kept is None:
            self._zones_kept = self.backend.quiet_zones(())
        self.backend.quiet_zones([*self._zones_kept, *self.volatile])

    def note_volatile(self, before: Frame, after: Frame) -> None:
        """Learn every change from `before` to `after` as changing alone (a caller that
        knows it does)."""
        self.volatile.extend(changes(before, after))

    def _known(self, region: Rect) -> bool:
        """Whether `region` lies within what is already learned as changing alone."""
        return any(region.inside(known) for known in self.volatile)

    def _pending(self, once: list[tuple[float, Rect]]) -> bool:
        """Whether a change seen once, not learned, could still come again."""
        now = time.monotonic()
        return any(
            now - seen < REPEAT_APART + SAMPLE_EVERY
            and not any(region.intersects(v) for v in self.volatile)
            for seen, region in once
        )

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
            time.sleep(uneven(SAMPLE_EVERY))
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
                    runs = changed_runs(previous, current)
                    once = self.note_repeated(once, [run for _, run in runs])
                    fresh = [(raw, run) for raw, run in runs if not self._known(run)]
                    self.gauges.note(count, previous, current, fresh)
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
    return [run for _, run in changed_runs(before, after)]


def changed_runs(before: Frame, after: Frame) -> list[tuple[Rect, Rect]]:
    """`changes`, each with the difference it was grown from."""
    return [
        (region, grow_to_text_run(after.small, region))
        for region in changed_regions_fine(before, after)
        if not is_caret(before, after, region)
    ]
