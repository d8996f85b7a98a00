"""`mm replay`: walk a recording's tree, acting only on screens that match.

At each node the replayer waits (polling, up to the timeout) until the live screen matches
one of the node's children and has settled, then performs that child's action. When no
child matches in time the screen has diverged: with an agent, the agent takes over from
that step under the recorder and what it does becomes a new branch (saved only if it
exits 0); without one, replay stops before acting.
"""

from __future__ import annotations

import io
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from mmcli.backends.base import Backend, in_failsafe_corner
from mmcli.capture.integrate import FinishedRun, Into, integrate
from mmcli.capture.record import check_recordable, run_recorded
from mmcli.capture.stale import stale_value
from mmcli.capture.steps import blank_png, focus_point
from mmcli.desktop.agent import Interrupt
from mmcli.errors import (
    Aborted,
    DisplayError,
    ExitCode,
    MMError,
    NotSaved,
    Outcome,
    StoreError,
    UsageError,
    closest,
)
from mmcli.model import POINTED, Action, ActionKind, Recording, Step, render_text
from mmcli.params import Values
from mmcli.replay.outcome import await_outcome, pending_reason
from mmcli.screen.explain import bare, headline
from mmcli.screen.fingerprint import SCALE, Frame, Rect, blank
from mmcli.screen.matcher import Difference, Policy, References, Verdict, compare, target_rect
from mmcli.screen.outcome import judge_outcome
from mmcli.screen.relocate import Offset, find_offset, moved, moved_point, shifted
from mmcli.screen.windows import relocation
from mmcli.store.inuse import in_use
from mmcli.store.recordings import Store
from mmcli.store.storefs import new_token
from mmcli.store.thumbnails import describe, load_outcome, load_reference

POLL = 0.03
"""Before the pointer moves on, the screen must have been still this long since the last
action and the last change (the app has reacted to the action)."""
CHECK_QUIET = 0.015
"""A screen is checked once still this long: after the pointer moved, hover effects have
drawn. Checking too early only costs another look; acting needs a match on a still screen."""
CHECK_LIMIT = 0.25
"""At most this long each look waits for a still screen (then the interrupt, the fail-safe
and the timeout are looked at)."""
APPROACH_SETTLE_LIMIT = 1.0
"""At most this long, replay waits for the screen to be still before moving the pointer."""
CONFIRM_RETRIES = 5
"""How often the target may change between the check and the action before replay gives
up on the step (a divergence)."""
ACT_THRESHOLD = 24
"""Colour levels by which a target pixel may differ from the checked screen at the moment
of acting (anti-aliasing noise), no more."""
AGENT_TIMEOUT = 600.0
"""Default limit for a fallback agent: a hung agent must not hold the display forever."""
WAIT_NOTICE = 1.0
"""After this many seconds of waiting for a step's screen, say so."""
SEEN_REACH = 48
"""The seen-state rule looks this many steps up and down the recorded path, no further:
a step's check costs the same in a recording of any length."""
DECODED = 2 * SEEN_REACH + 16
"""Recorded screens kept decoded (the ones around the step being replayed)."""
PREPARED = 16
"""Steps whose masked references are kept (the children of the last few nodes)."""
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Divergence:
    step: int
    """0-based position on the path where no recorded step matched (its depth in the tree;
    people are told `step + 1`, the number replay's progress gives that step)."""
    expected: str
    """The action that would have been performed."""
    reason: str
    thumbnail: str | None = None
    """The live screen at the divergence, beside the recording."""
    recorded: str | None = None
    """The recorded screen of the step that did not match."""

    def as_json(self) -> dict[str, Any]:
        return {
            "step": self.step + 1,
            "depth": self.step,
            "expected": self.expected,
            "reason": self.reason,
            "thumbnail": self.thumbnail,
            "recorded": self.recorded,
        }


@dataclass
class ReplayOptions:
    timeout: float = 10.0
    policy: Policy = Policy.DEFAULT
    dry_run: bool = False
    agent: Sequence[str] | None = None
    """Command that takes over on divergence, with `{{key}}` where this run's values go;
    None = no agent."""
    agent_cwd: str | None = None
    """The folder the agent runs in (the recording's, for its recorded command); None:
    the caller's."""
    agent_timeout: float | None = AGENT_TIMEOUT
    """Seconds before a fallback agent is stopped (exit 4); None: no limit."""
    ignore: Sequence[Rect] = ()
    relocate: bool = False
    """Act on the task where it moved to, when it is found intact at another position."""
    record_input: bool = False
    """Record the agent's input that no channel reports from the display's input events."""
    trust_new: bool = False
    """Follow branches still pending approval (they ended on a new outcome)."""
    before_commit: Callable[[], None] | None = None
    """Called before each committing step (the last `commit_steps` actions on the path)
    and before a hand-over (the agent may commit); raising there acts on nothing more (a
    fleet's claim: `mmcli.fleet.claims`)."""
    commit_steps: int = 1


@dataclass
class ReplayReport:
    name: str
    outcome: Outcome
    steps_replayed: int = 0
    steps_total: int = 0
    divergence: Divergence | None = None
    agent_steps: int = 0
    agent_returncode: int | None = None
    seconds: float = 0.0
    path: list[int] = field(default_factory=list)
    detail: str = ""
    """Why the agent is said to have failed, or why what it did was not saved."""
    outcome_seen: bool | None = None
    """After the last action the screen settled on a recorded outcome (None: not checked:
    a dry run, a divergence, a heal, or a path recorded without one)."""
    pending_branch: int | None = None
    """A heal's branch saved pending approval: the id of its first step."""

    @property
    def exit_code(self) -> ExitCode:
        return self.outcome.exit_code

    def as_json(self) -> dict[str, Any]:
        d = self.divergence
        return {
            "name": self.name,
            "outcome": str(self.outcome),
            "exit_code": int(self.exit_code),
            "steps_replayed": self.steps_replayed,
            "steps_total": self.steps_total,
            "agent_steps": self.agent_steps,
            "agent_returncode": self.agent_returncode,
            "seconds": round(self.seconds, 3),
            "divergence": None if d is None else d.as_json(),
            "detail": self.detail,
            "outcome_seen": self.outcome_seen,
            "pending_branch": self.pending_branch,
        }


@dataclass
class Match:
    step: Step | None
    verdict: Verdict | None
    frame: Frame
    offset: Offset = (0, 0)
    """Where the task stands relative to where it was recorded (`--relocate`)."""
    found_by: str = ""
    """How a moved task was found: "its window" (the window system) or "its pixels"."""


def _signed(offset: Offset) -> str:
    return f"({offset[0]:+d}, {offset[1]:+d})"


def _fewer(a: Match, b: Match) -> bool:
    """`a` is closer to matching than `b` (fewer differences)."""
    na = len(a.verdict.differences) if a.verdict else 1 << 30
    nb = len(b.verdict.differences) if b.verdict else 1 << 30
    return na < nb


def _typed_by(step: Step) -> list[Rect]:
    """Where the step's own typing changed the screen."""
    if step.action.kind is ActionKind.TYPE and step.effect is not None:
        return [step.effect]
    return []


def _with(typed: tuple[Rect, ...], more: list[Rect]) -> tuple[Rect, ...]:
    """`typed` and `more`, each rectangle once (a task types into few fields, often)."""
    new = tuple(r for r in dict.fromkeys(more) if r not in typed)
    return typed + new if new else typed


class _MaskedScreens(Sequence[np.ndarray]):
    """The recorded screens of some steps, decoded and masked when looked at (most checks
    never look at them: only a changed region does); not kept masked, to bound memory."""

    def __init__(self, replayer: Replayer, steps: list[Step], masks: list[Rect]) -> None:
        self._replayer = replayer
        self._steps = steps
        self._masks = masks

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        screen = self._replayer._reference(self._steps[i])
        return _MISSING if screen is None else blank(screen, self._masks)

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self._steps)))


_MISSING = np.zeros((0, 0, 3), np.uint8)
"""A step whose thumbnail is gone: a screen of no size, which `_seen` skips."""


def task_area(area: Rect | None, workarea: Rect | None) -> Rect | None:
    """The recorded task area within the desktop's work area: a panel or taskbar that
    changed while the task was recorded (a clock, a new window's button) is never part
    of the task, of the check's "inside the task" nor of `--relocate`'s search."""
    if area is None or workarea is None:
        return area
    return area.intersection(workarea.within_grid(SCALE) or workarea) or area


def check_geometry(recording: Recording, backend: Backend) -> None:
    if not recording.steps:
        return
    fp = recording.steps[0].fingerprint
    size = backend.size()
    if (fp.width, fp.height) != size:
        raise DisplayError(
            f"screen is {size[0]}x{size[1]} but {recording.name!r} was recorded at "
            f"{fp.width}x{fp.height}; replay on a screen of the recorded size"
        )


def check_values(recording: Recording, values: Values) -> None:
    missing = values.missing(recording.params)
    if missing:
        flags = " ".join(
            f"--secret {k}" if k in recording.secrets else f"--param {k}=..." for k in missing
        )
        # A key given that is no param of the recording, close to a missing one: a typo.
        typos = [
            f"unknown param {k!r}, did you mean {close!r}? "
            for k in values.all
            if k not in recording.params and (close := closest(k, missing)) is not None
        ]
        raise UsageError(f"{''.join(typos)}recording {recording.name!r} needs {flags}")


class Replayer:
    def __init__(
        self,
        store: Store,
        backend: Backend,
        recording: Recording,
        values: Values,
        options: ReplayOptions,
        progress: Progress | None = None,
    ) -> None:
        self.store = store
        self.backend = backend
        self.recording = recording
        self.values = values
        self.options = options
        self.progress = progress or (lambda message: None)
        self.interrupt = Interrupt()
        self.ignore = list(options.ignore)
        self._references: OrderedDict[int, np.ndarray | None] = OrderedDict()
        self._problems: dict[int, str] = {}
        """Steps whose thumbnail cannot serve as their recorded screen, and why."""
        self._warned: set[int] = set()
        self._prepared: OrderedDict[int, References] = OrderedDict()
        self._kids: dict[int | None, list[Step]] = {}
        self._by_id: dict[int, Step] = {}
        for s in recording.steps:
            self._kids.setdefault(s.parent, []).append(s)
            self._by_id[s.id] = s
        for kids in self._kids.values():
            kids.sort(key=lambda s: s.pending)  # trusted branches are looked at first
        self._chain_lengths: dict[int, int] = {}
        self._outcomes: dict[int, np.ndarray | None] = {}
        self.offset: Offset = (0, 0)
        """How far the task has moved from where it was recorded (`--relocate`)."""
        self.workarea = backend.workarea()
        self.area = task_area(recording.area, self.workarea)
        """Where the task acts: the recorded area, less the desktop's panels."""

    # ---- waiting for the screen ------------------------------------------------------------

    def _check_abort(self) -> None:
        if self.interrupt.signum is not None:
            raise Aborted("interrupted; stopped between two actions")
        if in_failsafe_corner(self.backend.pointer(), self.backend.size()):
            raise Aborted("fail-safe: pointer in a screen corner; stopped between two actions")

    def wait_for_match(self, children: list[Step], depth: int) -> Match:
        """Look until one child matches a still screen (`Backend.settle`).

        Children recorded with the pointer in different places (branches that start with
        clicks on different targets) are each checked with the pointer where they had it,
        so that hover effects compare like with like.
        """
        started = time.monotonic()
        deadline = started + self.options.timeout
        groups: dict[tuple[int, int] | None, list[Step]] = {}
        for child in children:
            groups.setdefault(child.fingerprint.pointer, []).append(child)
        best: Match | None = None
        told = False
        refocused = False
        looked = 0.0
        while True:
            if not told and time.monotonic() - started > WAIT_NOTICE:
                told = True
                self.progress(
                    f"step {depth + 1}: waiting for the screen of "
                    f"{self._shown(children[0].action)} (up to {self.options.timeout:g}s)"
                )
            for pointer, group in groups.items():
                self._check_abort()
                self._approach(moved_point(pointer, self.offset))
                settled = self.backend.settle(CHECK_QUIET, CHECK_LIMIT)
                looked = settled.at
                match = self._first_match(group, settled.frame)
                if match.step is not None and match.offset != self.offset:
                    # Found moved: check again with the pointer where it belongs there.
                    self.offset = match.offset
                    self.progress(
                        f"step {depth + 1}: the task is found moved by {_signed(self.offset)} "
                        f"(by {match.found_by}); checking it there"
                    )
                    match = Match(None, match.verdict, match.frame, match.offset)
                    continue
                if match.step is not None and (settled.still or self.options.dry_run):
                    return match
                if match.step is None and (best is None or _fewer(match, best)):
                    best = match
                if match.step is None and not refocused and self._refocus(group, depth):
                    refocused = True
            if time.monotonic() >= deadline:
                return best or match
            # Nothing matched: look again once the screen changes.
            self.backend.wait_change(looked, POLL)

    def _refocus(self, group: list[Step], depth: int) -> bool:
        """Before a click, a window that lost the focus to another window is given it back,
        as the click itself would (click-to-focus), so that the screen is compared as the
        recording saw it: active title bar, focus rings. Only the window at the click's
        target is ever activated, and the check that follows is the full one: a different
        window at the target still diverges."""
        if self.options.dry_run or not all(c.action.kind is ActionKind.CLICK for c in group):
            return False
        point = moved_point(group[0].action.point, self.offset)
        if point is None or not self.backend.focus_window_at(*point):
            return False
        self.progress(
            f"step {depth + 1}: the window at the click had lost the focus to another "
            "window; gave it back, as the click would"
        )
        return True

    def _reference(self, step: Step) -> np.ndarray | None:
        """The recorded downscaled screen of `step`, from its thumbnail (None if gone);
        the last `DECODED` are kept."""
        if step.id in self._references:
            self._references.move_to_end(step.id)
            return self._references[step.id]
        loaded = load_reference(self.store, self.recording.name, step)
        image = loaded.screen
        if loaded.problem is not None:
            self._problems[step.id] = loaded.problem
        self._references[step.id] = image
        if len(self._references) > DECODED:
            self._references.popitem(last=False)
        return image

    def _children(self, node: int | None) -> list[Step]:
        return self._kids.get(node, [])

    def _checkable(self, children: list[Step], depth: int) -> list[Step]:
        """The children that may be acted on. One whose thumbnail is missing or unreadable
        can be checked with the coarse grid only: that is said once for each, and under
        `--policy strict` such a child is never acted on."""
        strict = self.options.policy is Policy.STRICT
        out = []
        for child in children:
            self._reference(child)
            problem = self._problems.get(child.id)
            if problem is not None and child.id not in self._warned:
                self._warned.add(child.id)
                then = (
                    "--policy strict does not act on it"
                    if strict
                    else "checking with the coarse grid only"
                )
                what = describe(self.recording.name, child, problem)
                self.progress(f"warning: step {depth + 1}: {what}; {then}")
            if problem is None or not strict:
                out.append(child)
        return out

    def _chain_below(self, step: Step, limit: int | None = None) -> list[Step]:
        """The steps that followed `step` first when it was recorded (the first `limit`)."""
        chain: list[Step] = []
        kids = self._children(step.id)
        while kids and (limit is None or len(chain) < limit):
            chain.append(kids[0])
            kids = self._children(kids[0].id)
        return chain

    def _chain_length(self, step: Step) -> int:
        """len(self._chain_below(step)), remembered."""
        if step.id not in self._chain_lengths:
            chain = self._chain_below(step)
            for i, below in enumerate([step, *chain]):
                self._chain_lengths.setdefault(below.id, len(chain) - i)
        return self._chain_lengths[step.id]

    def _path_through(self, step: Step) -> list[tuple[Step, list[Rect]]]:
        """The other steps of the recorded path through `step` (its ancestors and the
        steps that followed it first, the nearest `SEEN_REACH` each way), each with where
        the task typed between that step's screen and `step`'s."""
        path: list[tuple[Step, list[Rect]]] = []
        typed: tuple[Rect, ...] = ()
        parent = step.parent
        while parent is not None and len(path) < SEEN_REACH:
            ancestor = self._by_id[parent]
            typed = _with(typed, _typed_by(ancestor))
            path.append((ancestor, list(typed)))
            parent = ancestor.parent
        typed = _with((), _typed_by(step))
        for below in self._chain_below(step, SEEN_REACH):
            path.append((below, list(typed)))
            typed = _with(typed, _typed_by(below))
        return path

    def references(self, step: Step) -> References:
        """Recorded screens for the `regions` matcher, masked as the step is (the last
        `PREPARED` kept). The path's screens are decoded and masked when first needed."""
        if step.id in self._prepared:
            self._prepared.move_to_end(step.id)
            return self._prepared[step.id]
        this = self._reference(step)
        masks = [*step.fingerprint.masks, *self.recording.ignore, *self.ignore]
        prepared = References()
        if this is not None:
            path = self._path_through(step)
            prepared = References(
                blank(this, masks),
                _MaskedScreens(self, [other for other, _ in path], masks),
                [typed for _, typed in path],
            )
        self._prepared[step.id] = prepared
        if len(self._prepared) > PREPARED:
            self._prepared.popitem(last=False)
        return prepared

    def _verdict(
        self, step: Step, frame: Frame, offset: Offset = (0, 0), view: Frame | None = None
    ) -> Verdict:
        """The check of `frame` (the live screen) against `step`, shifted back by `offset`
        where the task moved (`view`: that shifted screen, when the caller has it)."""
        if view is None:
            view = shifted(frame, offset) if offset != (0, 0) else frame
        return compare(
            step.fingerprint,
            view,
            self.options.policy,
            [*self.recording.ignore, *self.ignore],
            area=self.area,
            workarea=self.workarea,
            references=self.references(step),
            pointer_step=step.action.kind in POINTED,
            unmoved=frame if offset != (0, 0) else None,
            offset=offset,
        )

    def _first_match(self, children: list[Step], frame: Frame) -> Match:
        closest: Verdict | None = None
        view = shifted(frame, self.offset) if self.offset != (0, 0) else frame
        for child in children:
            verdict = self._verdict(child, frame, self.offset, view)
            if verdict.ok:
                return Match(child, verdict, frame, self.offset)
            if closest is None or len(verdict.differences) < len(closest.differences):
                closest = verdict
        best = Match(None, closest, frame, self.offset)
        if self.options.relocate:
            found = self._relocated(children, frame)
            if found is not None and (found.step is not None or _fewer(found, best)):
                return found
        return best

    def _relocated(self, children: list[Step], frame: Frame) -> Match | None:
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
                reference = self._reference(child)
                if area is None or reference is None:
                    continue
                offset, found_by = find_offset(reference, area, frame), "its pixels"
            if offset is None or offset == self.offset:
                continue
            verdict = self._verdict(child, frame, offset)
            match = Match(child if verdict.ok else None, verdict, frame, offset, found_by)
            if verdict.ok:
                return match
            if closest is None or _fewer(match, closest):
                closest = match
        return closest

    # ---- the walk ------------------------------------------------------------------------

    def run(self) -> ReplayReport:
        if not self.options.dry_run:  # a dry run types nothing: no param needed
            check_values(self.recording, self.values)
        check_geometry(self.recording, self.backend)
        cwd = self.options.agent_cwd
        if self.options.agent and cwd is not None and not os.path.isdir(cwd):
            self.progress(
                f"warning: the agent's folder {cwd} no longer exists: replay stops at a "
                "divergence instead of handing over"
            )
        started = time.monotonic()
        report = ReplayReport(
            self.recording.name, Outcome.FROM_MEMORY, steps_total=self._trunk_length()
        )
        with self.interrupt.catching():
            try:
                self._walk(report)
            except Aborted:
                report.outcome = Outcome.ABORTED
                report.seconds = time.monotonic() - started
                self._journal(report)
                raise
        report.seconds = time.monotonic() - started
        self._journal(report)
        return report

    def _walk(self, report: ReplayReport) -> None:
        node: int | None = None
        focus: tuple[int, int] | None = None
        depth = 0
        changed = 0
        while True:
            children = self._children(node)
            if not children:
                if self.options.dry_run:
                    report.outcome = Outcome.WOULD_REPLAY
                elif node is not None:
                    self._check_outcome(report, self._by_id[node], depth)
                return
            self._check_abort()  # before the approach moves the pointer out of the corner
            checkable = self._checkable(children, depth)
            if not checkable:
                self._unchecked(report, children, depth, node, focus)
                return
            match = self.wait_for_match(checkable, depth)
            if match.step is None:
                self._diverged(report, children, match, depth, node, focus)
                return
            step = match.step
            if step.pending and not self.options.trust_new:
                reason = pending_reason(self.recording.name, step)
                self._diverged(report, children, match, depth, node, focus, reason)
                return
            if self.options.dry_run:
                self.progress(f"step {depth + 1}: screen matches; would {self._shown(step.action)}")
                report.outcome = Outcome.WOULD_REPLAY
                report.steps_replayed = depth
                return
            if self.options.before_commit and self._chain_length(step) < self.options.commit_steps:
                self.options.before_commit()
            self._check_abort()
            first, *rest = moved(step.action.render(self.values.all), self.offset).pieces()
            if not self.backend.perform_checked(first, self._unchanged(match, step)):
                # The screen changed between the check and the action: check again.
                changed += 1
                self.progress(f"step {depth + 1}: the screen changed as replay was about to act")
                if changed > CONFIRM_RETRIES:
                    self._diverged(
                        report, children, self._changed_at_act(match, step), depth, node, focus
                    )
                    return
                continue
            changed = 0
            for piece in rest:
                self._check_abort()  # Ctrl-C stops a long action between two pieces
                self.backend.perform(piece)
            total = depth + 1 + self._chain_length(step)
            self.progress(f"step {depth + 1}/{total}: {self._shown(step.action)}")
            focus = focus_point(moved(step.action, self.offset), focus)
            report.path.append(step.id)
            node = step.id
            depth += 1
            report.steps_replayed = depth

    def _shown(self, action: Action) -> str:
        """The action as progress tells it: where it acts (moved by `--relocate`: and where
        it was recorded) and the params' values it types; a secret stays `{{key}}`."""
        hidden = set(self.recording.secrets) | set(self.values.secrets)
        params = {k: v for k, v in self.values.params.items() if k not in hidden}
        text = moved(action.render(params), self.offset).describe()
        if any(value in text for value in self.values.secrets.values()):
            # A param's value holding a secret's: nothing typed is told.
            text = moved(action, self.offset).describe()
        if self.offset != (0, 0) and action.x is not None and action.y is not None:
            dx, dy = self.offset
            text += f" (moved by {dx:+d},{dy:+d} from ({action.x}, {action.y}))"
        return text

    def _trunk_length(self) -> int:
        roots = self._children(None)
        return 1 + self._chain_length(roots[0]) if roots else 0

    def _target_on_screen(self, match: Match, step: Step) -> Rect | None:
        patch = step.fingerprint.patch
        if patch is None:
            return None
        rect = target_rect(patch)
        rect = Rect(rect.x + match.offset[0], rect.y + match.offset[1], rect.w, rect.h)
        x0, y0 = max(rect.x, 0), max(rect.y, 0)
        x1, y1 = min(rect.right, match.frame.width), min(rect.bottom, match.frame.height)
        return Rect(x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None

    def _unchanged(self, match: Match, step: Step) -> Callable[[], bool]:
        """At the moment of acting (on X11 with every other client held still), the target
        is still exactly as checked: a dialog that appeared since is not clicked."""

        def unchanged() -> bool:
            rect = self._target_on_screen(match, step)
            if rect is None:
                return True
            now = self.backend.grab_rect(rect)[..., :3].astype(np.int16)
            then = match.frame.pixels[rect.y : rect.bottom, rect.x : rect.right, :3]
            return bool((np.abs(now - then) <= ACT_THRESHOLD).all())

        return unchanged

    def _changed_at_act(self, match: Match, step: Step) -> Match:
        rect = self._target_on_screen(match, step) or Rect(0, 0, 0, 0)
        difference = Difference(
            "target",
            rect,
            "changed each time replay was about to act; attempts",
            CONFIRM_RETRIES + 1,
            0,
        )
        return Match(None, Verdict((difference,)), self.backend.grab(), match.offset)

    def _approach(self, point: tuple[int, int] | None) -> bool:
        """Put the pointer back where it was when the step was recorded (on the target of
        a click), so hover effects match, and so keys go where they went (with
        focus-follows-mouse, the window under the pointer gets them). True if it moved."""
        if self.options.dry_run or point is None or point == self.backend.pointer():
            return False
        # The agent moved on once the app had reacted to its last action; moving the
        # pointer while a dialog is still being mapped under it was seen to lose the
        # dialog (Tk, no window manager). So the screen must be still first.
        self.backend.wait_still(POLL, APPROACH_SETTLE_LIMIT)
        self.backend.move(*point)
        return True

    # ---- the outcome ----------------------------------------------------------------------

    def _check_outcome(self, report: ReplayReport, leaf: Step, depth: int) -> None:
        """After the last action: done only when the screen settles on the outcome this
        path recorded (or another the recording trusts). The agent is never called here:
        the last action, the one that commits, has been performed."""
        if leaf.outcome is None:
            self.progress("no outcome recorded for this path (an older recording): not checked")
            return
        ends = [leaf, *(s for s in self.recording.outcomes() if s.id != leaf.id)]
        seen = await_outcome(
            self.backend,
            ends,
            lambda end, frame: self._outcome_verdict(end, frame),
            self.options.timeout,
            self._check_abort,
        )
        report.outcome_seen = seen.matched is not None
        if seen.matched is not None:
            same = "" if seen.matched.id == leaf.id else f" (that of step id {seen.matched.id})"
            self.progress(f"outcome: the screen shows the recorded outcome{same}")
            return
        reason = (
            "the screen after the last step does not show the recorded outcome: "
            f"{seen.verdict.summary() if seen.verdict else 'not judged'}"
        )
        assert leaf.outcome is not None
        thumb = self._keep_live_thumbnail(seen.frame, depth, leaf.outcome.fingerprint.masks)
        report.outcome = Outcome.OUTCOME_DIFFERS
        report.divergence = Divergence(
            depth, "the recorded outcome", reason, thumb, leaf.outcome.thumbnail
        )
        self.progress(f"outcome differs: {reason}")

    def _outcome_verdict(self, end: Step, frame: Frame) -> Verdict:
        assert end.outcome is not None
        if end.id not in self._outcomes:
            self._outcomes[end.id] = load_outcome(self.store, self.recording.name, end).screen
        return judge_outcome(
            end.outcome.fingerprint,
            self._outcomes[end.id],
            frame,
            policy=self.options.policy,
            ignore=[*self.recording.ignore, *self.ignore],
            area=self.area,
            workarea=self.workarea,
            offset=self.offset,
        )

    # ---- divergence ----------------------------------------------------------------------

    def _diverged(
        self,
        report: ReplayReport,
        children: list[Step],
        match: Match,
        depth: int,
        node: int | None,
        focus: tuple[int, int] | None,
        reason: str | None = None,
    ) -> None:
        """Stop before acting at `depth` (no child matched: `match` is the closest look, or
        `reason` says why none could be checked); the agent takes over if there is one."""
        said = "screen differs" if reason is None else "not acted on"
        if reason is None:
            reason = self._why(children, match)
        thumb = self._keep_live_thumbnail(match.frame, depth, children[0].fingerprint.masks)
        report.divergence = Divergence(
            depth, children[0].action.describe(), reason, thumb, children[0].thumbnail
        )
        report.outcome = Outcome.DIVERGED
        self.progress(f"step {depth + 1}: {said}: {reason}")
        if self.options.dry_run or not self.options.agent:
            return
        self._hand_over(report, children, depth, node, focus)

    def _why(self, children: list[Step], match: Match) -> str:
        """A divergence as one sentence, then the checks that failed."""
        reason = match.verdict.summary() if match.verdict else "no step to compare"
        if match.offset != (0, 0) and match.verdict is not None:
            reason = (
                f"the task is found moved by {_signed(match.offset)}, but differs there "
                f"(regions as recorded): {reason}"
            )
        found_at = None if self.options.relocate else self._found_at(children, match.frame)
        sentence = headline(
            match.verdict,
            children[0].action.kind,
            match.offset,
            found_at,
            no_window=self._no_window(children, match.frame),
            window=self.recording.window_title,
        )
        return f"{sentence}. {reason}"

    def _no_window(self, children: list[Step], frame: Frame) -> bool:
        """The live task area is bare background where the recorded one was not: the app
        is not running, or its window is closed or minimized."""
        if not bare(frame.small, self.area):
            return False
        reference = self._reference(children[0])
        return reference is None or not bare(reference, self.area)

    def _unchecked(
        self,
        report: ReplayReport,
        children: list[Step],
        depth: int,
        node: int | None,
        focus: tuple[int, int] | None,
    ) -> None:
        """`--policy strict` and no child whose recorded screen can be compared in full."""
        problems = "; ".join(
            describe(self.recording.name, c, self._problems[c.id]) for c in children
        )
        reason = (
            "The recorded screen of this step cannot be checked in full, and --policy strict "
            f"does not act on the coarse grid alone: {problems}. Replay with --policy default "
            "to check it with the grid, or record the task again"
        )
        match = Match(None, None, self.backend.grab(), self.offset)
        self._diverged(report, children, match, depth, node, focus, reason)

    def _found_at(self, children: list[Step], frame: Frame) -> Offset | None:
        """Where the task area stands on the live screen when it has moved (to suggest
        --relocate); None when it has not, or cannot be told."""
        reference = self._reference(children[0])
        if self.area is None or reference is None:
            return None
        return find_offset(reference, self.area, frame)

    def _keep_live_thumbnail(self, frame: Frame, depth: int, masks: Sequence[Rect]) -> str | None:
        """Save the live screen for diagnostics, with the step's masked regions (typed
        params and secrets among them) painted over."""
        buf = io.BytesIO()
        frame.thumbnail().save(buf, format="PNG")
        data = blank_png(buf.getvalue(), list(masks))
        name = f"live-{datetime.now(UTC):%Y%m%dT%H%M%S}-{new_token()}-step{depth + 1}.png"
        try:
            self.store.write_thumbnail(self.recording.name, name, data)
        except (OSError, StoreError):  # a full disk, or a link where the folder should be
            return None
        return name

    def _hand_over(
        self,
        report: ReplayReport,
        children: list[Step],
        depth: int,
        node: int | None,
        focus: tuple[int, int] | None,
    ) -> None:
        assert self.options.agent
        if self.options.before_commit:
            self.options.before_commit()
        self.progress(f"step {depth + 1}: handing over to the agent")
        env = {
            "MM_RECORDING": self.recording.name,
            "MM_RESUME_STEP": str(depth),
            "MM_REPLAY": "1",
            **self.values.env(),
        }
        command = [render_text(arg, self.values.all) for arg in self.options.agent]
        run, recorder = run_recorded(
            self.backend,
            command,
            env,
            start_focus=focus,
            timeout=self.options.agent_timeout,
            values=self.values,
            progress=self.progress,
            record_input=self.options.record_input,
            cwd=self.options.agent_cwd,
        )
        report.agent_returncode = run.returncode
        report.agent_steps = len(recorder.captures)
        if run.timed_out:
            report.outcome = Outcome.AGENT_FAILED
            report.detail = f"the agent timed out after {self.options.agent_timeout:g}s"
            return
        if not run.ok:
            report.outcome = Outcome.AGENT_FAILED
            return
        try:
            check_recordable(recorder)
        except MMError as e:  # the agent did the task in a way that cannot be replayed
            report.outcome = Outcome.NOT_SAVED
            report.detail = str(e)
            return
        if not recorder.captures:
            # Nothing done, nothing learned: whether the task is done is unknown.
            report.outcome = Outcome.AGENT_FAILED
            report.detail = "the agent exited 0 without performing any action"
            return
        stale = stale_value([c.action for c in recorder.captures], self.recording, self.values)
        if stale is not None:  # done with the recorded value: wrong data, never learned
            report.outcome = Outcome.AGENT_FAILED
            report.detail = stale.message()
            return
        report.outcome = Outcome.HEALED
        finished = FinishedRun.of(recorder, self.values, command)
        try:
            done = integrate(
                self.store,
                self.recording.name,
                finished,
                Into.BRANCH,
                at=node,
                secret_typed=self._secret_typed(node),
                progress=self.progress,
            )
        except (MMError, OSError) as e:
            report.outcome = Outcome.NOT_SAVED
            report.detail = f"the branch could not be saved: {e}"
            return
        if done.pending is not None:
            report.outcome = Outcome.HEALED_PENDING
            report.pending_branch = done.pending
            report.detail = (
                "the agent's run ended on an outcome the recording has not seen; its branch "
                f"is pending: check the task, then `mm approve {self.recording.name} "
                f"{done.pending}`"
            )

    def _secret_typed(self, node: int | None) -> bool:
        """Whether a step on the path to `node` typed a secret (the screen may show it)."""
        secrets = set(self.recording.secrets)
        while node is not None and secrets:
            step = self.recording.step(node)
            if step.action.params_used() & secrets:
                return True
            node = step.parent
        return False

    def _journal(self, report: ReplayReport) -> None:
        """Append the run to the history. The task has been done (or not) by now: a history
        that cannot be written is a warning, not a failure a caller would retry."""
        if self.options.dry_run:
            return
        try:
            self.store.append_history(
                self.recording.name,
                {
                    "at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "recording": self.recording.name,
                    "outcome": str(report.outcome),
                    "agent_runs": int(report.agent_returncode is not None),
                    "steps_replayed": report.steps_replayed,
                    "agent_steps": report.agent_steps,
                    "divergence": report.divergence.as_json() if report.divergence else None,
                    "path": report.path,
                    "seconds": round(report.seconds, 3),
                },
            )
        except StoreError as e:
            self.progress(f"warning: this replay is not in the history: {e}")


def preflight(store: Store, name: str, values: Values, options: ReplayOptions) -> None:
    """What refuses a replay before the display is opened: no recording of that name and
    no agent to record it, a param or secret the recording needs not given."""
    if not store.exists(name):
        if not options.agent or options.dry_run:
            raise store.not_found(name)
        return
    if not options.dry_run and store.kind(name) == "cli":
        check_values(store.load(name), values)


def replay(
    store: Store,
    backend: Backend,
    name: str,
    values: Values,
    options: ReplayOptions,
    progress: Progress | None = None,
) -> ReplayReport:
    """Replay `name`; a name not recorded yet is recorded with the agent, if one is given."""
    from mmcli.capture.record import record

    if not store.exists(name):
        if not options.agent or options.dry_run:
            raise store.not_found(name)
        if progress:
            progress(f"{name!r} is not recorded yet: recording the agent")
        started = time.monotonic()
        try:
            result = record(
                store,
                backend,
                name,
                options.agent,
                values,
                ignore=options.ignore,
                agent_timeout=options.agent_timeout,
                progress=progress,
                record_input=options.record_input,
            )
        except NotSaved as e:
            return ReplayReport(
                name,
                Outcome.NOT_SAVED,
                seconds=time.monotonic() - started,
                agent_returncode=0,
                detail=f"the recording could not be saved: {e}",
            )
        outcome = Outcome.RECORDED if result.saved else Outcome.AGENT_FAILED
        return ReplayReport(
            name,
            outcome,
            agent_steps=result.steps,
            agent_returncode=result.returncode,
            seconds=time.monotonic() - started,
            detail=result.reason if outcome is not Outcome.RECORDED else "",
        )
    with in_use(store, name):
        recording = store.load(name)
        return Replayer(store, backend, recording, values, options, progress).run()
