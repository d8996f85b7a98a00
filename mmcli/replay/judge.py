"""Judging a live screen against a node's children: the matcher's verdict for a step,
at the task's current offset, and with `--relocate` at the offset where a moved task is
found; the verdict on a path's outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

from mmcli.backends.base import Backend
from mmcli.model import POINTED, ActionKind, Recording, Step
from mmcli.replay.bystanders import Bystanders
from mmcli.replay.clocks import Clocks, past_clocks
from mmcli.replay.counted import Counted, step_target
from mmcli.replay.screens import RecordedScreens
from mmcli.screen.excuses import inner_workarea, task_window_areas
from mmcli.screen.explain import OWN_APP
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Difference, Policy, Verdict, compare, target_rect
from mmcli.screen.placement import Placed, along, compose, place
from mmcli.screen.relocate import Offset, find_offset, shifted
from mmcli.screen.windows import (
    Over,
    StackedWindow,
    TitleBar,
    WindowRef,
    described_over,
    new_over,
    new_own,
    relocation,
    titles_shown,
)

NEW_WINDOW = "windows"
"""The matcher name of a window over the task's window that the recording did not have."""


@dataclass
class Match:
    step: Step | None
    verdict: Verdict | None
    frame: Frame
    offset: Offset = (0, 0)
    """Where the task stands relative to where it was recorded (`--relocate`)."""
    found_by: str = ""
    """How a moved task was found: "its window" (the window system) or "its pixels"."""
    left_out: tuple[StackedWindow, ...] = ()
    """Windows the check left out (a notification over no target: `windows.left_out`)."""
    stack: list[StackedWindow] | None = None
    """The window system's stack when `frame` was grabbed (None: not known). Replay acts
    only while the windows over the task are still these (`windows.over`)."""


def fewer(a: Match, b: Match) -> bool:
    """`a` is closer to matching than `b` (fewer differences)."""
    na = len(a.verdict.differences) if a.verdict else 1 << 30
    nb = len(b.verdict.differences) if b.verdict else 1 << 30
    return na < nb


def task_area(area: Rect | None, workarea: Rect | None) -> Rect | None:
    """The recorded task area within the desktop's work area: a panel or taskbar that
    changed while the task was recorded (a clock, a new window's button) is never part
    of the task, of the check's "inside the task" nor of `--relocate`'s search."""
    if area is None or workarea is None:
        return area
    return area.intersection(inner_workarea(workarea)) or area


class Judge:
    def __init__(
        self,
        backend: Backend,
        recording: Recording,
        screens: RecordedScreens,
        policy: Policy,
        ignore: Sequence[Rect],
        relocate: bool,
        values: Mapping[str, str] | None = None,
    ) -> None:
        self.backend = backend
        self.values = dict(values or {})
        """This run's values: a title bar that names them is the recorded one."""
        self.screens = screens
        self.policy = policy
        self.ignore = [*recording.ignore, *ignore]
        """The recording's ignored regions and the run's."""
        self.relocate = relocate
        self.workarea = backend.workarea()
        self.area = task_area(recording.area, self.workarea)
        """Where the task acts: the recorded area, less the desktop's panels."""
        self.task_windows = {s.window for s in recording.steps if s.window}
        """The windows the recording acted and typed in, where they stood."""
        self.task_classes = {w.wm_class for w in self.task_windows}
        """Their classes."""
        self.window_areas = task_window_areas((w.rect for w in self.task_windows), self.workarea)
        """Their client areas, less the desktop's panels: a change anywhere inside them
        is inside the task."""
        self.typed = [
            s.effect for s in recording.steps if s.action.kind is ActionKind.TYPE and s.effect
        ]
        """Where the task types: a window over one of them is never left out."""
        self._stacked: tuple[Frame, list[StackedWindow] | None] | None = None
        """The window system's stack, asked once per live screen."""
        self._left: dict[int, tuple[StackedWindow, ...]] = {}
        self.bystanders = Bystanders(policy, self.task_classes)
        """Other apps' windows: left out, known to this run, laid bare at its end."""
        self.counted = Counted(recording, self.values)
        """The lines that count what was typed, read where a check differs over them."""
        self.clocks = Clocks(self.window_areas)
        """The clocks in the task's windows, read where a check differs over them."""

    def verdict(
        self, step: Step, frame: Frame, offset: Offset = (0, 0), view: Frame | None = None
    ) -> Verdict:
        """The check of `frame` (the live screen) against `step`, shifted back by `offset`
        where the task moved (`view`: that shifted screen, when the caller has it). With
        `--relocate`, the app's other windows the step recorded that stand at offsets of
        their own are judged each where it stands (`screen.placement`)."""
        if self.bystanders.active and self.bystanders.known is None:
            self.bystanders.begin(self._stack(frame))
        window = self.live_window(step, frame, offset) if self.relocate else None
        placed = self.placed(step, frame, window, offset)
        hidden: list[Rect] = []
        if placed:
            stack = self._stack(frame) or []
            moved_along = along(step.own, offset, stack)
            composed = compose(frame, offset, placed, stack, window, moved_along)
            view, hidden = composed.view, composed.hidden
        elif view is None:
            view = shifted(frame, offset) if offset != (0, 0) else frame
        references = self.screens.references(step)
        self._left.pop(step.id, None)

        beyond = [*self.beyond_windows(frame, offset, placed), *hidden]
        moved_windows = [*self.moved_frames(frame, offset), *(p.live.frame for p in placed)]

        def check(leave_out: Sequence[Rect] = ()) -> Verdict:
            return compare(
                step.fingerprint,
                view,
                self.policy,
                [*self.ignore, *beyond],
                area=self.area,
                workarea=self.workarea,
                references=references,
                pointer_step=step.action.kind in POINTED,
                unmoved=frame if offset != (0, 0) else None,
                offset=offset,
                left_out=leave_out,
                moved_windows=moved_windows,
                task_windows=self.window_areas,
            )

        verdict = check()
        if not verdict.ok:
            shown = self.titles_shown(touched(off_target(step), verdict.differences), offset)
            if shown:
                beyond.extend(shown)
                verdict = check()
        if not verdict.ok:
            counted = self.counted.at_step(step, view, verdict.differences, step_target(step))
            if counted:
                beyond.extend(counted)
                verdict = check()
        if not verdict.ok:
            spared = [*filter(None, [step_target(step)]), *self.typed]
            verdict = past_clocks(self.clocks, view, verdict, beyond, check, spared)
        # A window left out never covers the target: asked only when the regions alone differ.
        regions_alone = all(d.matcher == "regions" for d in verdict.differences)
        if not verdict.ok and offset == (0, 0) and references.this is not None and regions_alone:
            harmless = self.windows_left_out(step, frame)
            if harmless:
                self._left[step.id] = tuple(harmless)
                verdict = check([w.frame for w in harmless])
        new = self.new_windows(step, frame, offset, placed)
        if not new:
            if verdict.ok:
                self.bystanders.passed(self._left.get(step.id, ()))
            return verdict
        return Verdict((*new, *verdict.differences), verdict.excused)

    def new_windows(
        self, step: Step, frame: Frame, offset: Offset, placed: Sequence[Placed] = ()
    ) -> list[Difference]:
        """The windows over the step's window on the live screen (`frame`) that were not
        over it when the step was recorded (`windows.new_over`), each a difference the
        pixels need not see; none where the window system or the recording says nothing.
        The app's other windows found where they stand (`placed`) are the recorded ones."""
        if step.window is None:
            return []
        stack = self._stack(frame)
        if stack is None:
            return []
        ref = WindowRef(step.window.wm_class, step.window.rect.moved(*offset))
        patch = step.fingerprint.patch
        protected = [*self.typed]
        if patch is not None:
            protected.append(target_rect(patch).moved(*offset))
        new = new_over(stack, ref, step.above, offset, self.task_classes, protected)
        differences = [Difference(NEW_WINDOW, w.frame, described_over(w), 1, 0) for w in new]
        for w in new_own(stack, ref, [*step.own, *(Over.of(p.live) for p in placed)], offset):
            if w not in new:
                what = f"{described_over(w)}{OWN_APP}"
                differences.append(Difference(NEW_WINDOW, w.frame, what, 1, 0))
        return differences

    def scope(self, offset: Offset) -> Rect | None:
        """Where the task is on the live screen, with it moved by `offset`: its recorded
        area and the client areas of the windows it acted in; None when neither is known
        (the whole screen)."""
        rects = [w.rect.moved(*offset) for w in self.task_windows]
        if self.area is not None:
            rects.append(self.area.moved(*offset))
        return reduce(Rect.union, rects) if rects else None

    def placed(
        self, step: Step, frame: Frame, window: StackedWindow | None, offset: Offset
    ) -> list[Placed]:
        """With `--relocate`, the app's other windows `step` recorded that stand at offsets
        of their own, the step's window found at `offset` (`window`, `live_window`;
        `placement.place`); none otherwise."""
        stack = self._stack(frame)
        if not self.relocate or window is None or not step.own or stack is None:
            return []
        return place(step.own, offset, stack)

    def window_offsets(self) -> list[Offset]:
        """With `--relocate`, the offsets the task's windows are found at now, each the
        one live window of its class and size (`windows.relocation`)."""
        live = self.backend.windows() if self.relocate else None
        if live is None:
            return []
        found = (relocation(w, live) for w in sorted(self.task_windows, key=str))
        return sorted({o for o in found if o is not None})

    def live_window(self, step: Step, frame: Frame, offset: Offset) -> StackedWindow | None:
        """The step's window on the live screen, where it stands with the task at `offset`."""
        if step.window is None:
            return None
        ref = WindowRef(step.window.wm_class, step.window.rect.moved(*offset))
        return next((w for w in self._stack(frame) or () if w.ref == ref), None)

    def beyond_windows(
        self, frame: Frame, offset: Offset, placed: Sequence[Placed] = ()
    ) -> list[Rect]:
        """With the task found moved by its window (`--relocate`, the window system
        telling where its windows stand now), what lies beyond the task's windows, in the
        recording's coordinates: the desktop the shift drags along (a patterned
        wallpaper, the black strips shifting brings in at two edges when the window moved
        right and down) is not the task. What covers the windows is the window system's
        to tell (`new_windows`) and the pixels' inside them. Nothing where the window
        system says nothing (found by its pixels: judged as before)."""
        frames = self.moved_frames(frame, offset) if not placed else self.frames_at(frame, offset)
        recorded = [f.moved(-offset[0], -offset[1]) for f in frames]
        recorded += [p.recorded.frame for p in placed]  # each where it was recorded
        if not recorded:
            return []
        here = reduce(Rect.union, recorded)  # their frames, title bars and borders included
        return Rect(0, 0, frame.width, frame.height).minus(here)

    def titles_shown(self, titles: Sequence[TitleBar], offset: Offset) -> list[Rect]:
        """The recorded title bars that show this run's values (`windows.titles_shown`)."""
        return titles_shown(titles, self.values, self.backend.window_title_at, offset)

    def moved_frames(self, frame: Frame, offset: Offset) -> list[Rect]:
        """Where the windows the task acted in stand on the live screen (`frame`) with
        the task moved by `offset`, their frames as the window system tells them (a
        dialog's step and the main window's alike: the task moved whole); none where it
        is not moved, or they are not known or not found there."""
        if offset == (0, 0):
            return []
        return self.frames_at(frame, offset)

    def frames_at(self, frame: Frame, offset: Offset) -> list[Rect]:
        """The frames of the windows the task acted in that stand on the live screen
        (`frame`) at `offset` from where they were recorded."""
        wanted = {WindowRef(w.wm_class, w.rect.moved(*offset)) for w in self.task_windows}
        return [w.frame for w in self._stack(frame) or () if w.ref in wanted]

    def _stack(self, frame: Frame) -> list[StackedWindow] | None:
        """The window system's stack, asked once per live screen."""
        if self._stacked is None or self._stacked[0] is not frame:
            self._stacked = (frame, self.backend.stack())
        return self._stacked[1]

    def windows_left_out(self, step: Step, frame: Frame) -> list[StackedWindow]:
        """The windows on the live screen (`frame`) that `step`'s check may leave out:
        `windows.left_out` with the step's target and the fields the task types into
        protected. None under `--policy strict`, where the window system says nothing,
        or for a recording that does not know its windows."""
        target = step_target(step)
        if target is None:
            return []
        return self.left_out_of(frame, [target, *self.typed])

    def revealed_at(
        self, frame: Frame, end: Step, changed: list[Rect], protected: list[Rect]
    ) -> list[StackedWindow]:
        """`Bystanders.revealed` on the live screen (`frame`) after `end`."""
        return self.bystanders.revealed(self._stack(frame), end, changed, protected)

    def left_out_of(self, frame: Frame, protected: list[Rect] | None) -> list[StackedWindow]:
        """`Bystanders.left_out` on the live screen (`frame`) with `protected`."""
        if not self.bystanders.active:
            return []
        return self.bystanders.left_out(self._stack(frame), protected)

    def first_match(
        self,
        children: list[Step],
        frame: Frame,
        offset: Offset,
        stack: list[StackedWindow] | None = None,
    ) -> Match:
        """The first child that matches `frame` with the task at `offset`, or (moved with
        `--relocate`) where it is found; else the closest look. `stack`: the window
        system's stack asked with the frame (`Settled.stack`), kept in the match."""
        if stack is not None:
            self._stacked = (frame, stack)
        match = self._first_match(children, frame, offset)
        match.stack = stack
        return match

    def _first_match(self, children: list[Step], frame: Frame, offset: Offset) -> Match:
        closest: Verdict | None = None
        view = shifted(frame, offset) if offset != (0, 0) else frame
        for child in children:
            verdict = self.verdict(child, frame, offset, view)
            if verdict.ok:
                return Match(child, verdict, frame, offset, left_out=self._left.get(child.id, ()))
            if closest is None or len(verdict.differences) < len(closest.differences):
                closest = verdict
        best = Match(None, closest, frame, offset)
        if self.relocate:
            found = self._relocated(children, frame, offset)
            if found is not None and (found.step is not None or fewer(found, best)):
                return found
        return best

    def _relocated(self, children: list[Step], frame: Frame, current: Offset) -> Match | None:
        """A child that matches in full once the live screen is shifted back by the offset
        at which its recorded task area is found (the window moved). Failing that, the
        closest check made at an offset where the task was found: the task moved *and*
        differs, and what differs there is the reason to report."""
        area = self.area
        closest: Match | None = None
        live = self.backend.windows()
        for child in children:
            if child.window is not None and live is not None:
                # The window system knows the task's window: where it is now, exactly.
                offset, found_by = relocation(child.window, live), "its window"
            else:
                reference = self.screens.reference(child)
                if area is None or reference is None:
                    continue
                offset, found_by = find_offset(reference, area, frame), "its pixels"
            if offset is None or offset == current:
                continue
            verdict = self.verdict(child, frame, offset)
            match = Match(child if verdict.ok else None, verdict, frame, offset, found_by)
            if verdict.ok:
                return match
            if closest is None or fewer(match, closest):
                closest = match
        return closest


def touched(bars: Sequence[TitleBar], differences: Sequence[Difference]) -> list[TitleBar]:
    """The title bars some difference touches: the only ones worth asking the window
    system about (a title asked costs about as much as a grab), and only once the pixels
    alone have failed."""
    return [b for b in bars if any(d.region.intersects(b.rect) for d in differences)]


def off_target(step: Step) -> list[TitleBar]:
    """`step`'s title bars but one it acts on (a click on a title bar: its pixels are
    the target's, checked)."""
    point = step.fingerprint.pointer if step.action.kind in POINTED else None
    if point is None:
        return list(step.titles)
    return [t for t in step.titles if not t.rect.holds(*point)]
