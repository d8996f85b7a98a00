"""`mm replay`: walk a recording's tree, acting only on screens that match.

At each node the replayer waits (polling, up to the timeout) until the live screen matches
one of the node's children and has settled, then performs that child's action. When no
child matches in time the screen has diverged: with an agent, the agent takes over from
that step under the recorder and what it does becomes a new branch (saved only if it
exits 0); without one, replay stops before acting.

The walk is short; each of its parts does one job: `tree` (the recording's tree),
`screens` (the recorded screens), `judge` (a live screen against the children), `look`
(waiting for a matching still screen), `act` (acting on it), `divergence` (saying why
replay stopped), `handover` (the agent's run becoming a branch), `outcome` (the screen
after the last action) and `journal` (the history). The report is built in one place.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mmcli.backends.base import Backend
from mmcli.capture.steps import focus_point
from mmcli.desktop.agent import Interrupt
from mmcli.errors import Aborted, Outcome
from mmcli.model import Action, Recording, Step, plural
from mmcli.params import Values
from mmcli.replay.act import CONFIRM_RETRIES, Actor
from mmcli.replay.divergence import Diagnosis, differed
from mmcli.replay.handover import AgentRun, HandOver
from mmcli.replay.journal import journal
from mmcli.replay.judge import Judge, Match
from mmcli.replay.landed import Landing, both
from mmcli.replay.look import Looker
from mmcli.replay.outcome import OutcomeJudge, await_outcome, pending_reason
from mmcli.replay.pointer_place import PointerLook
from mmcli.replay.preconditions import check_geometry, check_values
from mmcli.replay.report import Divergence, ReplayOptions, ReplayReport
from mmcli.replay.screens import RecordedScreens
from mmcli.replay.tree import Tree
from mmcli.screen.relocate import Offset, moved
from mmcli.store.recordings import Store

Progress = Callable[[str], None]
DONE = (Outcome.FROM_MEMORY, Outcome.HEALED)
"""Endings whose task is done: a history line that cannot be written then exits 5."""


@dataclass
class _Walked:
    """How far the walk got: what a report says even when the walk was interrupted."""

    path: list[int] = field(default_factory=list)
    """The steps performed, in order."""
    divergence: Divergence | None = None

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclass(frozen=True)
class _Ending:
    outcome: Outcome
    outcome_seen: bool | None = None
    agent: AgentRun | None = None


class Replayer:
    """One replay of a loaded recording: its parts, composed by `run`'s walk."""

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
        self.tree = Tree(recording)
        self.screens = RecordedScreens(store, recording, self.tree, options.ignore)
        self.judge = Judge(
            backend,
            recording,
            self.screens,
            options.policy,
            options.ignore,
            options.relocate,
            values=values.all,
        )
        self.outcome = OutcomeJudge(self.judge)
        self.look = Looker(
            backend,
            self.judge,
            self.interrupt,
            options.timeout,
            options.dry_run,
            self.progress,
            self._shown,
        )
        self.act = Actor(backend, recording, values, self.look.check_abort, self.judge.scope)
        self.landing = Landing(backend, values, self.progress)
        self.diagnosis = Diagnosis(store, recording, self.judge, options.relocate, self.progress)
        self.hand_over = HandOver(store, backend, recording, values, options, self.progress)

    def _shown(self, action: Action, offset: Offset | None = None) -> str:
        return self.act.shown(action, self.look.offset if offset is None else offset)

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
        walked = _Walked()
        # What changes alone, or is ignored, is left out of the checks: it does not keep
        # the screen from being still either.
        zones = self.backend.quiet_zones([*self.recording.volatile, *self.judge.ignore])
        with self.interrupt.catching():
            try:
                ending = self._walk(walked)
            except Aborted:
                self._journal(self._report(walked, _Ending(Outcome.ABORTED), started))
                raise
            finally:
                self.backend.quiet_zones(zones)
        report = self._report(walked, ending, started)
        if not self._journal(report) and report.outcome in DONE:
            # The task is done: exit 5 (do not retry), not 1 (a retry would do it twice).
            report.outcome = Outcome.NOT_SAVED
            report.detail = (
                f"{plural(report.steps_replayed, 'step')} done ({ending.outcome}), but the "
                "store could not be written: this run is kept on this machine for the next"
            )
        return report

    def _walk(self, walked: _Walked) -> _Ending:
        node: int | None = None
        focus: tuple[int, int] | None = None
        changed = 0
        while True:
            depth = walked.depth
            children = self.tree.children(node)
            if not children:
                return self._at_the_end(walked, node)
            self.look.check_abort()  # before the approach moves the pointer out of the corner
            checkable = self._checkable(children, depth)
            if not checkable:
                return self._diverged(walked, children, *self._unchecked(children), node, focus)
            read = self.landing.read(self.look.as_found)
            match = self.look.wait_for_match(checkable, depth)
            step = match.step
            if step is None:
                return self._diverged(walked, children, match, None, node, focus)
            other_text = self.landing.judge(read, match.frame)
            if other_text is not None:  # what was typed last did not land as typed
                return self._diverged(walked, children, match, other_text, node, focus)
            if step.pending and not self.options.trust_new:
                reason = pending_reason(self.recording.name, step)
                approve = f"mm approve {self.recording.name} {step.id} once its run is checked"
                return self._diverged(walked, children, match, reason, node, focus, approve)
            taken = self.look.keyboard_taken(step)
            if taken is not None:
                return self._diverged(walked, children, match, taken, node, focus)
            if self.options.dry_run:
                self.progress(f"step {depth + 1}: screen matches; would {self._shown(step.action)}")
                return _Ending(Outcome.WOULD_REPLAY)
            if (
                self.options.before_commit
                and self.tree.chain_length(step) < self.options.commit_steps
            ):
                self.options.before_commit()
            self.look.check_abort()
            if not self.act.act(match, step, self.look.offset):
                # The screen changed between the check and the action: check again.
                changed += 1
                self.progress(f"step {depth + 1}: the screen changed as replay was about to act")
                if changed > CONFIRM_RETRIES:
                    look = self.act.changed_at_act(match, step)
                    return self._diverged(walked, children, look, None, node, focus)
                continue
            changed = 0
            self.landing.typed(step, depth, self.look.offset)
            total = depth + 1 + self.tree.chain_length(step)
            branch = self.tree.branch_of(step)
            on = f" (branch {branch})" if branch is not None else ""
            self.progress(f"step {depth + 1}/{total}{on}: {self._shown(step.action)}")
            focus = focus_point(moved(step.action, self.look.offset), focus)
            walked.path.append(step.id)
            node = step.id

    def _report(self, walked: _Walked, ending: _Ending, started: float) -> ReplayReport:
        """The one place a replay's report is built."""
        agent = ending.agent
        return ReplayReport(
            self.recording.name,
            ending.outcome,
            steps_replayed=walked.depth,
            steps_total=self.tree.trunk_length(),
            divergence=walked.divergence,
            agent_steps=agent.steps if agent else 0,
            agent_returncode=agent.returncode if agent else None,
            seconds=time.monotonic() - started,
            path=walked.path,
            detail=agent.detail if agent else "",
            outcome_seen=ending.outcome_seen,
            pending_branch=agent.pending_branch if agent else None,
            branch=agent.branch if agent else None,
            verified=both(self.landing.outcome, agent.verified if agent else None),
            unverified=[*self.landing.unverified, *(agent.unverified if agent else [])],
        )

    def _journal(self, report: ReplayReport) -> bool:
        """The run's history line written (a dry run writes none)."""
        return self.options.dry_run or journal(self.store, report, self.progress)

    def _checkable(self, children: list[Step], depth: int) -> list[Step]:
        checkable, warnings = self.screens.checkable(children, self.options.policy)
        for warning in warnings:
            self.progress(f"warning: step {depth + 1}: {warning}")
        return checkable

    def _unchecked(self, children: list[Step]) -> tuple[Match, str]:
        """`--policy strict` and no child whose recorded screen can be compared in full."""
        problems = self.screens.problems_of(children)
        reason = (
            "The recorded screen of this step cannot be checked in full, and --policy strict "
            f"does not act on the coarse grid alone: {problems}. Replay with --policy default "
            "to check it with the grid, or record the task again"
        )
        return Match(None, None, self.backend.grab(), self.look.offset), reason

    def _diverged(
        self,
        walked: _Walked,
        children: list[Step],
        match: Match,
        reason: str | None,
        node: int | None,
        focus: tuple[int, int] | None,
        next: str | None = None,
    ) -> _Ending:
        """Stop before acting (no child matched: `match` is the closest look, or `reason`
        says why none could be checked, `next` what fits it to do); the agent takes over
        if there is one."""
        depth = walked.depth
        walked.divergence = self.diagnosis.diverged(children, match, depth, reason, next)
        self.look.give_back_pointer()
        if self.options.dry_run or not self.options.agent:
            return _Ending(Outcome.DIVERGED)
        secret_typed = self.tree.secret_typed(node)
        agent = self.hand_over.run(self.options.agent, depth, node, focus, secret_typed)
        return _Ending(agent.outcome, agent=agent)

    def _at_the_end(self, walked: _Walked, node: int | None) -> _Ending:
        """No step below `node`: after the last action, done only when the screen settles
        on the outcome this path recorded (or another the recording trusts). The agent is
        never called here: the last action, the one that commits, has been performed."""
        if self.options.dry_run:
            return _Ending(Outcome.WOULD_REPLAY)
        if node is None:
            return _Ending(Outcome.FROM_MEMORY)
        other_text = self.landing.check(None)
        if other_text is not None:  # the last action typed, and it did not land as typed
            self.progress(f"outcome differs: {other_text}")
            walked.divergence = Divergence(walked.depth, "the recorded outcome", other_text)
            return _Ending(Outcome.OUTCOME_DIFFERS, outcome_seen=False)
        leaf = self.tree.step(node)
        if leaf.outcome is None:
            self.progress("no outcome recorded for this path (an older recording): not checked")
            return _Ending(Outcome.FROM_MEMORY)
        ends = [leaf, *(s for s in self.recording.outcomes() if s.id != leaf.id)]
        offset = self.look.offset
        seen = await_outcome(
            self.backend,
            ends,
            lambda end, frame, hidden: self.outcome.verdict(end, frame, offset, hidden),
            self.options.timeout,
            self.look.check_abort,
            self.outcome.obscured if offset == (0, 0) else None,
            self.progress,
            PointerLook(
                lambda: self.look.approach(self.outcome.pointer_for(leaf)),
                lambda end, found, frame: self.outcome.pointer_only(end, found, frame, offset),
            ),
        )
        if seen.matched is not None:
            other = self.recording.step_label(seen.matched)
            same = "" if seen.matched.id == leaf.id else f" (that of {other})"
            self.progress(f"outcome: the screen shows the recorded outcome{same}{seen.how()}")
            return _Ending(Outcome.FROM_MEMORY, outcome_seen=True)
        reason = seen.reason()
        masks = leaf.outcome.fingerprint.masks
        thumb = self.diagnosis.keep_live_thumbnail(seen.frame, walked.depth, masks)
        live_area, box = self.diagnosis.keep_live_area(seen.frame, walked.depth, masks, offset)
        walked.divergence = Divergence(
            walked.depth,
            "the recorded outcome",
            reason,
            thumb,
            leaf.outcome.thumbnail,
            differed(seen.verdict),
            self.judge.area,
            offset,
            live_area,
            box,
        )
        self.progress(f"outcome differs: {reason}")
        return _Ending(Outcome.OUTCOME_DIFFERS, outcome_seen=False)


def replay_recording(
    store: Store,
    backend: Backend,
    recording: Recording,
    values: Values,
    options: ReplayOptions,
    progress: Progress | None = None,
) -> ReplayReport:
    """Replay `recording`, already loaded from `store` by a caller that marked it in use."""
    return Replayer(store, backend, recording, values, options, progress).run()
