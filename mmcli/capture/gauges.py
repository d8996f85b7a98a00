"""An app's own activity gauge (jEdit's memory "182/388Mb" in its status bar), learned
while the recorded run works.

A gauge that moves only while its app works is never seen changing on the idle screen,
and changes once after an action, a moment later: the way an action's late answer comes
too (`idle`). What tells them apart is that a gauge shows another value each time: a few
glyphs' worth of pixels (`GAUGE_MAX`) that changed on their own, with no input for
`idle.QUIET_AFTER_ACTION`, after two or more of the run's actions at the same place,
each time to a value that place had not shown before or after an earlier change. A late
answer that comes back the same ("Saved", "Done") is not learned, nor is a blinker
(a block cursor: two values in turn), and nothing is learned on or
near what the task acts on (`away_from_task`): text in a field typed into, or beside a
target, is never a gauge.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mmcli.capture.steps import Capture, field_of
from mmcli.model import Step
from mmcli.screen.fingerprint import Frame, Patch, Rect
from mmcli.screen.matcher import target_rect

GAUGE_MAX = (64, 32)
"""A difference at most this big (px, each way) is the size of a few glyphs: what a clock
or an app's gauge ("182/388Mb") changes between runs."""
RUN_MAX = (160, 32)
"""The text run such a difference stands on is learned only up to this size (px): a
gauge and its label, not a status bar's whole line."""
TARGET_REACH = 32
"""A difference this near a step's target (px) may be the target's own widget drawn
hovered past the target's patch (Swing's Save button, its rollover at the button's right
end): never a gauge."""
INK = 24
"""A pixel shows another value when one of its channels moved by more than this much..."""
OTHER_VALUE = 3
"""... and a place shows another value when this many of its pixels did."""
MAX_SHOWN = 256
"""The changes kept to compare with (the latest; at most 30 KB each)."""


@dataclass(frozen=True)
class _Shown:
    gap: int
    """The count of actions before the change (each gap between actions its own)."""
    run: Rect
    values: tuple[np.ndarray, np.ndarray]
    """What `run` showed before the change and after it (full resolution)."""


@dataclass
class Gauges:
    """The changes seen between the run's actions, and the gauges they make."""

    shown: deque[_Shown] = field(default_factory=lambda: deque(maxlen=MAX_SHOWN))
    """The latest changes seen (a spinner's would otherwise pile up for as long as the
    run goes on)."""
    learned: list[Rect] = field(default_factory=list)

    def note(
        self, gap: int, before: Frame, after: Frame, changed: Sequence[tuple[Rect, Rect]]
    ) -> None:
        """Note what changed on its own from `before` to `after` after the `gap`-th
        action: each a raw difference and the text run it stands on. A run that changed
        after an earlier action too, each time to a value not shown before, is learned."""
        for raw, run in changed:
            if raw.w > GAUGE_MAX[0] or raw.h > GAUGE_MAX[1]:
                continue
            if run.w > RUN_MAX[0] or run.h > RUN_MAX[1]:
                continue
            if any(run.inside(known) for known in self.learned):
                continue
            earlier = [s for s in self.shown if s.run.intersects(run)]
            if any(s.gap != gap for s in earlier) and all(_other_value(s, after) for s in earlier):
                self.learned.extend([*(s.run for s in earlier), run])
            was, now = _crop(before, run), _crop(after, run)
            if was is not None and now is not None:
                self.shown.append(_Shown(gap, run, (was, now)))


def _crop(frame: Frame, rect: Rect) -> np.ndarray | None:
    if rect.x < 0 or rect.y < 0 or rect.right > frame.width or rect.bottom > frame.height:
        return None
    return frame.pixels[rect.y : rect.bottom, rect.x : rect.right, :3].copy()


def _other_value(shown: _Shown, after: Frame) -> bool:
    """Whether `after` shows at `shown.run` another value than `shown` did, before its
    change or after it."""
    now = _crop(after, shown.run)
    if now is None:
        return True
    return all(_differ(now, value) for value in shown.values)


def _differ(a: np.ndarray, b: np.ndarray) -> bool:
    moved = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > INK
    return int(moved.sum()) >= OTHER_VALUE


def task_places(patches: Iterable[Patch | None], fields: Iterable[Rect | None]) -> list[Rect]:
    """What a task acts on: each target with `TARGET_REACH` around it, and each field
    typed into, where it was read back."""
    places = [target_rect(p).grow(TARGET_REACH) for p in patches if p is not None]
    return places + [f for f in fields if f is not None]


def steps_places(steps: Iterable[Step]) -> list[Rect]:
    """`task_places` of a recording's steps: their targets, and their fields typed into
    where they were read back."""
    steps = list(steps)
    return task_places(
        (step.fingerprint.patch for step in steps),
        (step.landed.box if step.landed is not None else None for step in steps),
    )


def clear_of_run(gauges: Iterable[Rect], captures: Sequence[Capture]) -> list[Rect]:
    """`gauges` clear of what a run's `captures` act on (`task_places`)."""
    fields = (field_of(c) for c in captures)
    return away_from_task(gauges, task_places((c.patch for c in captures), fields))


def away_from_task(gauges: Iterable[Rect], places: Sequence[Rect]) -> list[Rect]:
    """The gauges clear of every place the task acts on (`task_places`)."""
    return [g for g in gauges if not any(g.intersects(p) for p in places)]
