"""The outcome step of a replay: after the last action, wait for the screen to settle on
an outcome the recording trusts.

A replay is "done" only when the live screen after its last action shows the outcome its
path recorded (or another outcome the recording trusts: several paths may end alike).
Apps take a moment to save, so the check looks again as the screen changes, up to the
step timeout; a screen still showing something else then ("Upload failed") is a run
whose steps were performed but whose result differs. Nothing is performed here, and the
agent is not called: the last action, the one that commits, has already been performed.

`OutcomeJudge` judges a screen against an outcome with the step judge's masks, ignored
regions, task area and windows; another app's window over part of what the last action
changed is waited out (`await_outcome`), never left out, but where what it covers is a
title bar the window system names (its text known without its pixels), or where the
windows under it are seen from their own pixels (`screen.under`: a compositing manager
keeps them): the app's error under a notification is seen there, not guessed.

The screen is judged as found first; only a still screen that does not show the outcome
has the pointer put back where it was and is looked at again (`replay.pointer_place`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from mmcli.backends.base import Backend
from mmcli.model import Step
from mmcli.replay.clocks import past_clocks
from mmcli.replay.judge import Judge, touched
from mmcli.replay.pointer_place import PointerLook, outcome_pointer, pointer_explains
from mmcli.screen.analysis import PIXEL_THRESHOLD, changed_regions, changed_regions_fine
from mmcli.screen.excuses import inner_workarea
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Verdict
from mmcli.screen.outcome import judge_outcome
from mmcli.screen.relocate import Offset, shifted
from mmcli.screen.windows import StackedWindow, TitleBar, described_all

QUIET = 0.1
"""The outcome is judged on a screen still this long: the app has finished drawing."""
LOOK_LIMIT = 0.5
"""At most this long each look waits for a still screen."""
POLL = 0.05
COVER_WAIT = 10.0
"""How much longer than the step timeout the outcome is looked at while another app's
window (a notification, a tooltip) covers part of what the last action changed: a
notification goes after a few seconds (dunst's default: 10 s)."""


@dataclass(frozen=True)
class OutcomeSeen:
    matched: Step | None
    """The step whose outcome the screen shows (None: none of them)."""
    verdict: Verdict | None
    """Against the path's own outcome, the last look (why it does not match)."""
    frame: Frame
    covered_by: tuple[StackedWindow, ...] = ()
    """Another app's windows over part of what the path's last action changed, at the
    last look: the outcome was not seen whole."""
    seen_under: tuple[StackedWindow, ...] = ()
    """Another app's windows over part of what the last action changed that the outcome
    was seen under (`matched`), from the windows' own pixels."""
    pointer_only: bool = False
    """The outcome was seen but for what the pointer's place shows (`matched`): the screen
    as found and the screen with the pointer put back differ from it in separate places,
    each where the pointer's move changed the screen."""

    def how(self) -> str:
        """How the outcome was seen, where not plainly: under another app's window, or but
        for what the pointer's place shows."""
        if self.pointer_only:
            return ", but for what the pointer's place shows (as found and put back)"
        if not self.seen_under:
            return ""
        return f", seen under {described_all(self.seen_under)} in the windows' own pixels"

    def reason(self) -> str:
        """Why the screen was not taken for the path's outcome."""
        differs = self.verdict.summary() if self.verdict else "not judged"
        if self.covered_by:
            windows = described_all(self.covered_by)
            return (
                f"{windows} covers part of what the last action changed or a field typed "
                "into, so the outcome "
                f"could not be seen whole: {differs}"
            )
        return (
            f"the screen after the last step does not show the recorded outcome{self.how()}: "
            f"{differs}"
        )


class OutcomeJudge:
    """The outcome check of a replay: the live screen against the outcome a path recorded,
    with `judge`'s masks, ignored regions, task area and windows."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self._changes: dict[int, list[Rect] | None] = {}

    def pointer_for(self, end: Step) -> tuple[int, int] | None:
        """Where the pointer belongs for `end`'s outcome (`outcome_pointer`), the window
        system asked once."""
        if end.outcome is None or end.outcome.under is None:
            return None
        return outcome_pointer(end.outcome, self.judge.backend.windows(), self.judge.relocate)

    def verdict(
        self, end: Step, frame: Frame, offset: Offset, hidden: Sequence[Rect] = ()
    ) -> Verdict:
        """`frame` against the outcome recorded after `end`, with the task at `offset`
        (moved, `--relocate`); `hidden`: places no app's pixels are known in (the
        wallpaper under a notification `frame` was seen under), left out. A task whose
        window closed at the end leaves no window to find moved: a screen that shows the
        recorded outcome as it was recorded, unshifted, is that outcome too; and where the
        last step acted in a window that stood at an offset of its own (a dialog the
        window manager placed apart), the outcome is looked for at each offset the task's
        windows are found at now. Not found: the verdict at the offset where the least of
        the screen differs (what to tell)."""
        offsets = self._offsets(offset)
        verdict = self._outcome_at(end, frame, next(offsets), hidden)
        if verdict.ok:
            return verdict
        for other in offsets:
            found = self._outcome_at(end, frame, other, hidden)
            if found.ok:
                return found
            if _differing(found) < _differing(verdict):
                verdict = found
        return verdict

    def _offsets(self, offset: Offset) -> Iterator[Offset]:
        """Where an outcome is looked for: `offset`, then, where the task moved or may have
        (`--relocate`), unshifted and at each offset its windows stand at now."""
        yield offset
        if offset == (0, 0) and not self.judge.relocate:
            return
        for other in dict.fromkeys([(0, 0), *self.judge.window_offsets()]):
            if other != offset:
                yield other

    def pointer_only(self, end: Step, found: Frame, frame: Frame, offset: Offset) -> bool:
        """Whether `found` (the screen as found, the pointer where the last action left
        it) and `frame` (the pointer since put where it was when `end`'s outcome was
        recorded) differ from that outcome only in what the pointer's place shows
        (`pointer_explains`), not in the task's result, at any of `verdict`'s offsets."""
        return any(self._pointer_only_at(end, found, frame, o) for o in self._offsets(offset))

    def _pointer_only_at(self, end: Step, found: Frame, frame: Frame, offset: Offset) -> bool:
        before = self._outcome_at(end, found, offset)
        after = self._outcome_at(end, frame, offset)
        if before.ok or after.ok:
            return False
        if offset != (0, 0):
            found, frame = shifted(found, offset), shifted(frame, offset)
        return pointer_explains(before, after, changed_regions_fine(found, frame))

    def _outcome_at(
        self, end: Step, frame: Frame, offset: Offset, hidden: Sequence[Rect] = ()
    ) -> Verdict:
        """The outcome check at one offset. Another app's window a step's check would
        leave out (a notification, a dock, a tooltip, a window beside the task's) that
        covers none of what the last action changed when it was recorded (`task_change`;
        a change inside a title bar the window system names as recorded is known by its
        text) nor the fields the task typed into is left out, as in a step's check."""
        assert end.outcome is not None
        reference = self.judge.screens.outcome(end)
        bars = end.outcome.titles
        beyond = [*self.judge.beyond_windows(frame, offset), *hidden]

        def check(leave_out: Sequence[Rect] = ()) -> Verdict:
            assert end.outcome is not None
            return judge_outcome(
                end.outcome.fingerprint,
                reference,
                frame,
                policy=self.judge.policy,
                ignore=[*self.judge.ignore, *beyond],
                area=self.judge.area,
                workarea=self.judge.workarea,
                offset=offset,
                left_out=leave_out,
                moved_windows=self.judge.moved_frames(frame, offset),
                task_windows=self.judge.window_areas,
            )

        asked: dict[TitleBar, list[Rect]] = {}

        def titles_shown(wanted: Sequence[TitleBar]) -> list[Rect]:
            """`Judge.titles_shown`, each bar asked once in this check."""
            for bar in wanted:
                if bar not in asked:
                    asked[bar] = self.judge.titles_shown([bar], offset)
            return [r for bar in wanted for r in asked[bar]]

        verdict = check()
        if not verdict.ok:
            # Title bars are asked only once the pixels alone fail, and only those touched.
            shown = titles_shown(touched(bars, verdict.differences))
            if shown:
                beyond.extend(shown)
                verdict = check()
        if not verdict.ok:
            view = shifted(frame, offset) if offset != (0, 0) else frame
            counted = self.judge.counted.at_end(end, view, verdict.differences)
            if counted:
                beyond.extend(counted)
                verdict = check()
            if not verdict.ok:
                clocks = self.judge.clocks
                verdict = past_clocks(clocks, view, verdict, beyond, check, self.judge.typed)
        if verdict.ok or offset != (0, 0) or reference is None:
            return verdict
        if any(d.matcher != "regions" for d in verdict.differences):
            return verdict
        changed = _outside(self.task_change(end), titles_shown(bars))
        if changed is None:  # what the last action changed is not known: nothing is left out
            return verdict
        harmless = [
            *self.judge.left_out_of(frame, [*changed, *self.judge.typed]),
            *self.judge.revealed_at(frame, end, changed, list(self.judge.typed)),
        ]
        if not harmless:
            return verdict
        return check([w.frame for w in harmless])

    def task_change(self, end: Step) -> list[Rect] | None:
        """`last_change` less what it changed in the desktop's panels (a taskbar button,
        Xfce's pager redrawing its miniature of the window a dialog closed in)."""
        changed = self.last_change(end)
        if changed is None or self.judge.workarea is None:
            return changed
        inner = inner_workarea(self.judge.workarea)
        return [c for r in changed if (c := r.intersection(inner)) is not None]

    def obscured(self, end: Step, frame: Frame) -> list[StackedWindow]:
        """The windows on the live screen (`frame`) that a step's check would leave out
        (another app's notification, tooltip, or window beside the task) but that cover
        part of what `end`'s action changed when recorded, or a field the task typed
        into: while one stays, the outcome cannot be seen whole (an error the app shows
        there would be hidden). A title bar the window system's title confirms
        (`Judge.titles_shown`) hides nothing: its text is known without its pixels."""
        assert end.outcome is not None
        titled = self.judge.titles_shown(end.outcome.titles, (0, 0))
        changed = _outside(self.task_change(end), titled) or []
        typed = list(self.judge.typed)
        if not changed and not typed:
            return []
        # No target: nothing is acted on after the last action; a typed field is hidden
        # by what covers it as what the last action changed is.
        free = self.judge.left_out_of(frame, [])
        bare = (
            {w.xid for w in self.judge.revealed_at(frame, end, changed, typed)}
            if changed
            else set()
        )
        return [
            w
            for w in free
            if any(w.frame.intersects(c) for c in [*changed, *typed])
            and not (w.xid and w.xid in bare)
        ]

    def last_change(self, end: Step) -> list[Rect] | None:
        """What `end`'s action changed on the screen when it was recorded: the regions
        where its outcome differs from the screen before it (kept per step), found inside
        the desktop's work area (a taskbar button that changed beside a title bar that
        did is no part of the task, and joins none of it: Xfce's window buttons run along
        the top of the screen), else the step's effect; None when neither is known."""
        if end.id not in self._changes:
            before, after = self.judge.screens.reference(end), self.judge.screens.outcome(end)
            if before is not None and after is not None:
                inner = (
                    inner_workarea(self.judge.workarea) if self.judge.workarea is not None else None
                )
                self._changes[end.id] = changed_regions(
                    before, after, PIXEL_THRESHOLD, within=inner
                )
            else:
                self._changes[end.id] = [end.effect] if end.effect is not None else None
        return self._changes[end.id]


def _outside(changed: list[Rect] | None, known: Sequence[Rect]) -> list[Rect] | None:
    """`changed` less the regions wholly inside one of `known` (title bars whose text the
    window system confirms): what is left is seen only in pixels."""
    if changed is None:
        return None
    return [c for c in changed if not any(c.inside(k) for k in known)]


def _differing(verdict: Verdict) -> int:
    """How much of the screen `verdict` found differing (px)."""
    return sum(d.region.w * d.region.h for d in verdict.differences)


def await_outcome(
    backend: Backend,
    ends: Sequence[Step],
    judge: Callable[[Step, Frame, Sequence[Rect]], Verdict],
    timeout: float,
    check_abort: Callable[[], None],
    obscured: Callable[[Step, Frame], list[StackedWindow]] | None = None,
    progress: Callable[[str], None] | None = None,
    pointer: PointerLook | None = None,
) -> OutcomeSeen:
    """Look until a still screen shows the outcome of one of `ends` (the path's own
    first), or `timeout` seconds pass; `COVER_WAIT` more while `obscured` says another
    app's window covers part of what the path's last action changed (it is waited out,
    never left out: what it hides may be the app's error). A still screen so covered is
    judged as it is under those windows where the backend keeps each window's own pixels
    (`Backend.seen_under`): the app's pixels there are seen, not left out, and nothing is
    waited out. What the backend was asked to keep for that is let go at the end.

    The first still screen is judged as found; not the outcome, the pointer is put back
    (`pointer`) and the next still screen is judged alone and, against the path's own
    outcome, with the one found (`PointerLook.pointer_only`)."""
    try:
        deadline = time.monotonic() + timeout
        waited = False
        found: Frame | None = None
        """The still screen as found, while the first look after the pointer's move is due."""
        while True:
            check_abort()
            settled = backend.settle(QUIET, LOOK_LIMIT)
            first: Verdict | None = None
            for end in ends:
                verdict = judge(end, settled.frame, ())
                if verdict.ok and settled.still:
                    return OutcomeSeen(end, verdict, settled.frame)
                if first is None:
                    first = verdict
            if settled.still and pointer is not None:
                if found is not None:
                    if pointer.pointer_only(ends[0], found, settled.frame):
                        return OutcomeSeen(ends[0], first, settled.frame, pointer_only=True)
                    pointer = None
                elif pointer.approach():
                    found = settled.frame
                    continue
                else:
                    pointer = None
            covered: tuple[StackedWindow, ...] = ()
            under: OutcomeSeen | None = None
            if obscured is not None and (settled.still or time.monotonic() >= deadline):
                covered = tuple(obscured(ends[0], settled.frame))
            if covered and settled.still:
                under = _seen_under(backend, ends, judge, settled.frame, covered)
                if under is not None and under.matched is not None:
                    return under
            if time.monotonic() >= deadline:
                if under is not None:  # seen whole under them: nothing to wait out
                    return under
                if not covered or waited:
                    return OutcomeSeen(None, first, settled.frame, covered)
                waited = True
                deadline = time.monotonic() + COVER_WAIT
                if progress is not None:
                    windows = described_all(covered)
                    progress(
                        f"outcome: {windows} covers part of what the last action changed "
                        "or a field typed into; "
                        f"waiting up to {COVER_WAIT:g}s for it to go"
                    )
            backend.wait_change(settled.at, POLL)
    finally:
        backend.release_kept()


def _seen_under(
    backend: Backend,
    ends: Sequence[Step],
    judge: Callable[[Step, Frame, Sequence[Rect]], Verdict],
    frame: Frame,
    covered: tuple[StackedWindow, ...],
) -> OutcomeSeen | None:
    """What `frame` shows under `covered`, from the windows' own pixels, judged against
    each of `ends` (not matched: against the path's own); None where they are not kept."""
    under = backend.seen_under(frame, covered)
    if under is None:
        return None
    first: Verdict | None = None
    for end in ends:
        verdict = judge(end, under.frame, under.hidden)
        if verdict.ok:
            return OutcomeSeen(end, verdict, under.frame, seen_under=covered)
        if first is None:
            first = verdict
    return OutcomeSeen(None, first, under.frame, seen_under=covered)


def pending_reason(name: str, step: Step) -> str:
    """Why replay does not follow a matching branch that awaits approval."""
    return (
        f"The screen matches branch {step.id}, which the agent learned in a "
        "run that ended on an outcome the recording had not seen: it is pending. Check that "
        f"run's result, then `mm approve {name} {step.id}` (or replay with --trust-new)"
    )
