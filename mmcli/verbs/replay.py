"""`mm replay`'s core: a request in, a report out, for every kind of recording.

A name not recorded yet is recorded by the agent given (`--agent`); a CSV runs once per
row; otherwise the recording's kind picks its runner from `REPLAY`, one row per kind of
`inventory.kinds.KINDS`. A screen recording is read once: marked in use, loaded, its
params checked, then the display is opened and the walk gets the loaded recording.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from mmcli.desktop.allowed import RecordedAgents
from mmcli.errors import ExitCode, NotSaved, Outcome, UsageError
from mmcli.model import SCREEN_KIND
from mmcli.params import Values
from mmcli.replay.report import AGENT_TIMEOUT, ReplayOptions, ReplayReport
from mmcli.screen.fingerprint import Rect
from mmcli.screen.matcher import Policy
from mmcli.store.recordings import Store, validate_name
from mmcli.verbs.display import Display, Progress

if TYPE_CHECKING:
    from mmcli.backends.base import Backend
    from mmcli.llm.run import LLMResult
    from mmcli.model import Recording
    from mmcli.replay.batch import RowResult


@dataclass(frozen=True)
class ReplayRequest:
    name: str
    values: Values = field(default_factory=Values)
    display: Display = field(default_factory=Display)
    agent: Sequence[str] | None = None
    """`--agent`: the command for divergences; None: the recorded one (in its folder)."""
    no_agent: bool = False
    timeout: float = 10.0
    policy: Policy = Policy.DEFAULT
    dry_run: bool = False
    ignore: Sequence[Rect] = ()
    relocate: bool = False
    agent_timeout: float | None = AGENT_TIMEOUT
    params_file: Path | None = None
    before_each: str | None = None
    upstream: str | None = None
    record_input: bool = False
    trust_new: bool = False
    allow_agents: tuple[str, ...] = ()
    """`--allow-agent`: recorded agent commands this machine runs from a shared store."""

    def check(self) -> None:
        """What is refused before the store is read."""
        validate_name(self.name)
        if self.agent and self.no_agent:
            raise UsageError("--agent and --no-agent exclude each other")
        if self.display.is_remote and self.record_input:
            raise UsageError(
                "--record-input needs an X display's input, not a VNC display or a browser's"
            )
        if self.before_each and self.params_file is None:
            raise UsageError("--before-each goes with --params-file")

    def options(
        self, recording: Recording | None, shared: bool = False, progress: Progress | None = None
    ) -> ReplayOptions:
        """The walk's options; the fallback agent is `--agent`, else `recording`'s own
        command, run in the folder it was recorded in (none with `--no-agent`). From a
        `shared` store (a bucket) the recording's command runs only as `--allow-agent`
        allows it, in our own folder (`desktop.allowed`); `progress` is told when not."""
        agent, cwd = self.agent, None
        if agent is None and not self.no_agent and recording is not None:
            rule = RecordedAgents.of(self.allow_agents, shared)
            agent, cwd, refused = rule.command(recording)
            if refused and progress is not None:
                progress(f"warning: {recording.name!r}: {refused}")
        return ReplayOptions(
            timeout=self.timeout,
            policy=self.policy,
            dry_run=self.dry_run,
            agent=agent,
            agent_cwd=cwd,
            agent_timeout=self.agent_timeout,
            ignore=self.ignore,
            relocate=self.relocate,
            record_input=self.record_input,
            trust_new=self.trust_new,
        )


@dataclass
class BatchReport:
    """One replay per CSV row."""

    rows: list[RowResult]

    @property
    def exit_code(self) -> ExitCode:
        from mmcli.replay.batch import outcome_exit

        return outcome_exit(self.rows)

    def as_json(self) -> list[dict[str, Any]]:
        return [r.as_json() for r in self.rows]


Report: TypeAlias = "ReplayReport | BatchReport | LLMResult"


def replay(store: Store, request: ReplayRequest, progress: Progress | None = None) -> Report:
    request.check()
    if not store.exists(request.name):
        if request.params_file is not None:
            return _batch(store, request, progress)
        return _not_recorded_yet(store, request, progress)
    from mmcli.inventory.kinds import kind_of_stored

    return REPLAY[kind_of_stored(store, request.name).name](store, request, progress)


def _not_recorded_yet(store: Store, request: ReplayRequest, progress: Progress | None) -> Report:
    """The agent given records it (a replay of nothing else is refused)."""
    options = request.options(None)
    can_record_first(store, request.name, options)  # before the display is opened
    with request.display.opened(progress) as backend:
        return record_first(store, backend, request.name, request.values, options, progress)


def replay_named(
    store: Store,
    backend: Backend,
    name: str,
    values: Values,
    options: ReplayOptions,
    progress: Progress | None = None,
) -> ReplayReport:
    """One replay of `name` on an open display: its run opened and the recording loaded
    here; a name not recorded yet is recorded by the agent, if one is given (a fleet's
    worker runs its rows through here)."""
    from mmcli.replay.replayer import replay_recording
    from mmcli.store.lifecycle import Intent, begin

    if not store.exists(name):
        return record_first(store, backend, name, values, options, progress)
    with begin(store, name, Intent.REPLAY, SCREEN_KIND):
        return replay_recording(store, backend, store.load(name), values, options, progress)


def can_record_first(store: Store, name: str, options: ReplayOptions) -> None:
    """A name not recorded yet is recorded by the agent given, never in a dry run:
    `RecordingNotFound` otherwise."""
    if not options.agent or options.dry_run:
        raise store.not_found(name)


def record_first(
    store: Store,
    backend: Backend,
    name: str,
    values: Values,
    options: ReplayOptions,
    progress: Progress | None,
) -> ReplayReport:
    """`name` is not recorded yet: the agent (`options.agent`) records it
    (`can_record_first`)."""
    from mmcli.capture.record import RecordOptions
    from mmcli.verbs.record import record_agent

    can_record_first(store, name, options)
    assert options.agent
    if progress:
        progress(f"{name!r} is not recorded yet: recording the agent")
    started = time.monotonic()
    try:
        recorded = RecordOptions(
            ignore=options.ignore,
            agent_timeout=options.agent_timeout,
            record_input=options.record_input,
        )
        result = record_agent(
            store, backend, name, options.agent, values, recorded, progress=progress
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


def _replay_screen(store: Store, request: ReplayRequest, progress: Progress | None) -> Report:
    from mmcli.replay.preconditions import check_values
    from mmcli.replay.replayer import replay_recording
    from mmcli.store.lifecycle import Intent, begin

    if request.params_file is not None:
        return _batch(store, request, progress)
    with begin(store, request.name, Intent.REPLAY, SCREEN_KIND):
        recording = store.load(request.name)
        if not request.dry_run:
            check_values(recording, request.values)
        options = request.options(recording, store.shared, progress)
        with request.display.opened(progress) as backend:
            return replay_recording(store, backend, recording, request.values, options, progress)


def _batch(store: Store, request: ReplayRequest, progress: Progress | None) -> Report:
    """One replay per CSV row; the recording is marked in use and read once for the
    whole batch (again only after a row that changed it); one not recorded yet is
    recorded by the first row's agent."""
    from mmcli.replay.batch import check_columns, read_rows, run_batch

    assert request.params_file is not None
    rows = read_rows(request.params_file)
    say = progress or (lambda message: None)
    with contextlib.ExitStack() as marked:
        batch = BatchRecording(store, request.name, marked)
        recording = batch.open()
        if recording is not None:
            check_columns(recording, rows, request.values, request.params_file, say)
        options = request.options(recording, store.shared, progress)
        with request.display.opened(progress) as backend:

            def replay_row(values: Values) -> ReplayReport:
                return batch.replay(backend, values, options, progress)

            results = run_batch(
                rows, request.values, replay_row, request.before_each, progress, recording
            )
    return BatchReport(results)


CHANGED = {Outcome.HEALED, Outcome.HEALED_PENDING, Outcome.NOT_SAVED}
"""The outcomes of a row after which the recording may have changed (a branch saved, or
a save that failed part of the way): the next row reads it again."""


class BatchRecording:
    """A batch's recording: its run opened (marked in use on `marked` until the batch
    ends) and loaded once, read again only after a row that changed it; recorded by the
    first row's agent where there is none yet."""

    def __init__(self, store: Store, name: str, marked: contextlib.ExitStack) -> None:
        self.store = store
        self.name = name
        self.marked = marked
        self.recording: Recording | None = None

    def open(self) -> Recording | None:
        """The recording, marked in use and loaded (once); None: not recorded yet."""
        from mmcli.store.lifecycle import Intent, begin

        if self.recording is None and self.store.exists(self.name):
            self.marked.enter_context(begin(self.store, self.name, Intent.REPLAY, SCREEN_KIND))
            self.recording = self.store.load(self.name)
        return self.recording

    def replay(
        self, backend: Backend, values: Values, options: ReplayOptions, progress: Progress | None
    ) -> ReplayReport:
        from mmcli.replay.replayer import replay_recording

        recording = self.open()
        if recording is None:
            return record_first(self.store, backend, self.name, values, options, progress)
        report = replay_recording(self.store, backend, recording, values, options, progress)
        if report.outcome in CHANGED:
            self.recording = self.store.load(self.name)
        return report


def _replay_model(store: Store, request: ReplayRequest, progress: Progress | None) -> Report:
    from mmcli.llm.document import KIND
    from mmcli.llm.run import replay_llm
    from mmcli.store.lifecycle import Intent, begin

    if request.dry_run or request.relocate or request.ignore or request.params_file is not None:
        raise UsageError(
            "--dry-run, --relocate, --ignore-region and --params-file are for screen "
            f"recordings; {request.name!r} was recorded at the model API"
        )
    with begin(store, request.name, Intent.REPLAY, KIND) as opened:
        return replay_llm(
            opened,
            request.values,
            agent=request.agent,
            no_agent=request.no_agent,
            policy=request.policy,
            upstream=request.upstream,
            agent_timeout=request.agent_timeout,
            progress=progress,
            recorded=RecordedAgents.of(request.allow_agents, store.shared),
        )


def _replay_sdk(store: Store, request: ReplayRequest, progress: Progress | None) -> Report:
    """An SDK document is replayed from Python: loading it as a screen recording is
    refused with the error that says so."""
    store.load(request.name)
    raise AssertionError("unreachable: the codec refuses an SDK document")


REPLAY: dict[str, Callable[[Store, ReplayRequest, Progress | None], Report]] = {
    "cli": _replay_screen,
    "llm": _replay_model,
    "sdk": _replay_sdk,
}
"""Each kind's replay, by the name `inventory.kinds.KINDS` gives it."""
