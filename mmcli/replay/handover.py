"""Handing over to the agent at a divergence: it runs under the recorder from that step,
and what it did becomes a new branch of the recording, saved only if it exited 0, did
something, and typed no param's recorded value instead of this run's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mmcli.backends.base import Backend
from mmcli.desktop.sandbox import Sandbox
from mmcli.errors import MMError, Outcome, TypedOtherwise
from mmcli.model import Recording, render_template
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions
from mmcli.store.recordings import Store


@dataclass(frozen=True)
class AgentRun:
    """What came of a hand-over."""

    outcome: Outcome
    returncode: int
    steps: int
    """Actions the agent performed."""
    detail: str = ""
    pending_branch: int | None = None
    branch: int | None = None
    """The id of the first step of the branch learned from the agent's run, if saved."""
    verified: bool | None = None
    """Every value the agent typed was read back where it landed, as typed (None: it
    typed nothing)."""
    unverified: list[str] = field(default_factory=list)
    """For each value it typed that was not: its step in the agent's run, and why."""


class HandOver:
    def __init__(
        self,
        store: Store,
        backend: Backend,
        recording: Recording,
        values: Values,
        options: ReplayOptions,
        progress: Callable[[str], None],
    ) -> None:
        self.store = store
        self.backend = backend
        self.recording = recording
        self.values = values
        self.options = options
        self.progress = progress

    def run(
        self,
        agent: Sequence[str],
        depth: int,
        node: int | None,
        focus: tuple[int, int] | None,
        secret_typed: bool,
    ) -> AgentRun:
        """The agent takes over at `depth` (below `node`; `focus`: the field the keys go
        to); `secret_typed`: a step on the path typed a secret."""
        # The recorder is loaded only for a hand-over: a replay that never diverges (most
        # runs from cron) starts 0.1 s sooner without it.
        from mmcli.capture.integrate import FinishedRun, Into, integrate, typed_doubts
        from mmcli.capture.landing import readable
        from mmcli.capture.record import check_recordable, run_recorded
        from mmcli.capture.stale import stale_value

        if self.options.before_commit:
            self.options.before_commit()
        self.progress(f"step {depth + 1}: handing over to the agent")
        env = {
            "MM_RECORDING": self.recording.name,
            "MM_RESUME_STEP": str(depth),
            "MM_REPLAY": "1",
            **self.values.env(),
        }
        command = [render_template(arg, self.values.all) for arg in agent]
        sandbox = Sandbox.for_store(self.store.folder)
        if sandbox.unavailable is not None:
            self.progress(
                f"warning: the agent runs with write access to the store ({sandbox.unavailable}):"
                " it, or what it starts, could approve its own heal"
            )
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
            sandbox=sandbox,
        )

        doubts = typed_doubts(recorder.captures)
        typed_any = any(readable(c.action) for c in recorder.captures)

        def ended(
            outcome: Outcome,
            detail: str = "",
            pending: int | None = None,
            branch: int | None = None,
        ) -> AgentRun:
            verified = (not doubts) if typed_any else None
            return AgentRun(
                outcome,
                run.returncode,
                len(recorder.captures),
                detail,
                pending,
                branch,
                verified,
                doubts,
            )

        if run.timed_out:
            return ended(
                Outcome.AGENT_FAILED, f"the agent timed out after {self.options.agent_timeout:g}s"
            )
        if not run.ok:
            return ended(Outcome.AGENT_FAILED)
        try:
            check_recordable(recorder)
        except TypedOtherwise as e:  # the task may hold other data than the agent typed
            return ended(Outcome.OUTCOME_DIFFERS, str(e))
        except MMError as e:  # the agent did the task in a way that cannot be replayed
            return ended(Outcome.NOT_SAVED, str(e))
        if not recorder.captures:
            # Nothing done, nothing learned: whether the task is done is unknown.
            return ended(Outcome.AGENT_FAILED, "the agent exited 0 without performing any action")
        stale = stale_value([c.action for c in recorder.captures], self.recording, self.values)
        if stale is not None:  # done with the recorded value: wrong data, never learned
            return ended(Outcome.AGENT_FAILED, stale.message())
        finished = FinishedRun.of(recorder, self.values, command)
        try:
            done = integrate(
                self.store,
                self.recording.name,
                finished,
                Into.BRANCH,
                at=node,
                secret_typed=secret_typed,
                progress=self.progress,
            )
        except (MMError, OSError) as e:
            return ended(Outcome.NOT_SAVED, f"the branch could not be saved: {e}")
        if done.pending is None:
            return ended(Outcome.HEALED, branch=done.branch)
        why = (
            "what the agent typed could not be verified where it landed"
            if doubts
            else "the agent's run ended on an outcome the recording has not seen"
        )
        return ended(
            Outcome.HEALED_PENDING,
            f"{why}; its branch is pending: check the task, then "
            f"`mm approve {self.recording.name} {done.pending}`",
            done.pending,
            done.branch,
        )
