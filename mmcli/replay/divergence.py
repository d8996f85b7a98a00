"""Saying where and why a replay stopped: the divergence in one sentence and the checks
that failed, with the live screen kept beside the recorded one (masked as the step is)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mmcli.capture.gauges import GAUGE_MAX, steps_places
from mmcli.errors import StoreError
from mmcli.model import Recording, Step
from mmcli.replay.judge import Judge, Match
from mmcli.replay.look import signed
from mmcli.replay.report import Divergence
from mmcli.screen.analysis import grow_to_text_run
from mmcli.screen.explain import bare, headline
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Verdict
from mmcli.screen.paint import CROP_MARGIN, area_png, blank_png
from mmcli.screen.relocate import Offset, find_offset
from mmcli.store.recordings import Store
from mmcli.store.storefs import new_token


def gauge_like(match: Match, step: Step, recording: Recording) -> list[Rect]:
    """Where a refusal's only differences are a few glyphs' worth of pixels away from
    what the task acts on, with the task where it was recorded: those text runs (grown
    as the idle watch grows what changes alone, `analysis.grow_to_text_run`), for the
    user to say whether they change on their own. None otherwise: a window, a moved task,
    a bigger change, or one on or near any step's target or a field the task types into
    (text already in the field: never a gauge to leave out)."""
    verdict = match.verdict
    if verdict is None or match.offset != (0, 0) or not 0 < len(verdict.differences) <= 2:
        return []
    for d in verdict.differences:
        if d.matcher != "regions" or d.region.w > GAUGE_MAX[0] or d.region.h > GAUGE_MAX[1]:
            return []
    runs = [grow_to_text_run(match.frame.small, d.region) for d in verdict.differences]
    acted = acted_on(recording, step)
    if any(run.intersects(place) for run in runs for place in acted):
        return []
    return list(dict.fromkeys(runs))


def acted_on(recording: Recording, step: Step) -> list[Rect]:
    """What the task acts on, from any of its steps (`step`'s own among them, whatever
    the recording holds): `gauges.steps_places`."""
    return steps_places((step, *recording.steps))


def moved_to(judge: Judge, step: Step, frame: Frame) -> Offset | None:
    """Where `step`'s task area stands on the live screen when it has moved (to suggest
    --relocate); None when it has not, or cannot be told."""
    reference = judge.screens.reference(step)
    if judge.area is None or reference is None:
        return None
    return find_offset(reference, judge.area, frame)


def differed(verdict: Verdict | None) -> tuple[Rect, ...]:
    """The regions of the screen a verdict found different (kept in the history, so the
    report can outline them)."""
    return tuple(d.region for d in verdict.differences) if verdict else ()


class Diagnosis:
    def __init__(
        self,
        store: Store,
        recording: Recording,
        judge: Judge,
        relocate: bool,
        progress: Callable[[str], None],
    ) -> None:
        self.store = store
        self.recording = recording
        self.judge = judge
        self.relocate = relocate
        self.progress = progress

    def diverged(
        self,
        children: list[Step],
        match: Match,
        depth: int,
        reason: str | None = None,
        next: str | None = None,
    ) -> Divergence:
        """No child matched at `depth` (`match` is the closest look), or `reason` says why
        none could be checked or acted on (`next`: what fits it to do)."""
        said = "screen differs" if reason is None else "not acted on"
        if reason is None:
            reason, next = self._why(children, match)
        masks = children[0].fingerprint.masks
        thumb = self.keep_live_thumbnail(match.frame, depth, masks)
        live_area, live_box = self.keep_live_area(match.frame, depth, masks, match.offset)
        self.progress(f"step {depth + 1}: {said}: {reason}")
        return Divergence(
            depth,
            children[0].action.describe(),
            reason,
            thumb,
            children[0].thumbnail,
            differed(match.verdict),
            self.judge.area,
            match.offset,
            live_area,
            live_box,
            next,
        )

    def _why(self, children: list[Step], match: Match) -> tuple[str, str | None]:
        """A divergence as one sentence, then the checks that failed; and what fits it to
        do, where that is not to let the agent finish (`Divergence.next`)."""
        reason = match.verdict.summary() if match.verdict else "no step to compare"
        if match.offset != (0, 0) and match.verdict is not None:
            reason = (
                f"the task is found moved by {signed(match.offset)}, but differs there "
                f"(regions as recorded): {reason}"
            )
        found_at = None if self.relocate else moved_to(self.judge, children[0], match.frame)
        no_window = self._no_window(children, match.frame)
        sentence = headline(
            match.verdict,
            children[0].action.kind,
            match.offset,
            found_at,
            no_window=no_window,
            window=self.recording.window_title,
        )
        name = self.recording.name
        next = None
        windows = match.verdict is not None and any(
            d.matcher == "windows" for d in match.verdict.differences
        )
        if windows:  # what the headline names first: a window over the task, or the app's
            next = f"close that window, then mm replay {name} again"
        elif found_at is not None and found_at != (0, 0):
            next = f"mm replay {name} --relocate (with this run's params) to act where it is now"
        elif no_window:
            next = f"start the app, then mm replay {name} again"
        elif spots := gauge_like(match, children[0], self.recording):
            where = " and ".join(f"{r.x},{r.y},{r.w},{r.h}" for r in spots)
            flags = " ".join(f"--ignore-region {r.x},{r.y},{r.w},{r.h}" for r in spots)
            next = (
                f"if the text at {where} changes on its own (a clock, a gauge in a status "
                f"bar), leave it out: mm replay {name} {flags}; else replay "
                "without --no-agent to let the agent finish from here"
            )
        return f"{sentence}. {reason}", next

    def _no_window(self, children: list[Step], frame: Frame) -> bool:
        """The live task area is bare background where the recorded one was not: the app
        is not running, or its window is closed or minimized."""
        area = self.judge.area
        if not bare(frame.small, area):
            return False
        reference = self.judge.screens.reference(children[0])
        return reference is None or not bare(reference, area)

    def keep_live_thumbnail(self, frame: Frame, depth: int, masks: Sequence[Rect]) -> str | None:
        """Save the live screen for diagnostics, with the step's masked regions (typed
        params and secrets among them) painted over."""
        buf = io.BytesIO()
        frame.thumbnail().save(buf, format="PNG")
        return self._keep(blank_png(buf.getvalue(), list(masks)), depth, "")

    def keep_live_area(
        self, frame: Frame, depth: int, masks: Sequence[Rect], offset: tuple[int, int]
    ) -> tuple[str | None, Rect | None]:
        """Save the live task area at the screen's own resolution, where the task was
        found (moved by `offset`), masks painted, so the report shows text as it read.
        Not for a recording that types a secret: a secret shown at full size outside the
        painted regions could be read there (its quarter-scale thumbnail stays the
        record); nor without a task area."""
        area = self.judge.area
        if self.recording.secrets or area is None:
            return None, None
        dx, dy = offset
        screen = Rect(0, 0, frame.width, frame.height)
        box = area.moved(dx, dy).grow(CROP_MARGIN).intersection(screen)
        if box is None:
            return None, None
        painted = [m.moved(dx, dy) for m in masks]
        name = self._keep(area_png(frame, box, painted), depth, "-area")
        return (name, box) if name else (None, None)

    def _keep(self, data: bytes, depth: int, suffix: str) -> str | None:
        name = f"live-{datetime.now(UTC):%Y%m%dT%H%M%S}-{new_token()}-step{depth + 1}{suffix}.png"
        try:
            self.store.thumbs.write(self.recording.name, name, data)
        except (OSError, StoreError):  # a full disk, or a link where the folder should be
            return None
        return name
