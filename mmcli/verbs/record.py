"""`mm record`'s core: a request in, the run's result out. Three recorders: an agent on
the screen, a person on the screen (`demo`), an agent at the model API (`llm`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mmcli.errors import UsageError
from mmcli.params import Values
from mmcli.screen.fingerprint import Rect
from mmcli.store.recordings import Store, validate_name
from mmcli.verbs.display import Display, Progress

if TYPE_CHECKING:
    from mmcli.backends.base import Backend
    from mmcli.capture.record import RecordOptions, RecordResult
    from mmcli.llm.run import LLMResult


@dataclass(frozen=True)
class RecordRequest:
    name: str
    command: Sequence[str] = ()
    values: Values = field(default_factory=Values)
    display: Display = field(default_factory=Display)
    overwrite: bool = False
    add: bool = False
    demo: bool = False
    """A person does the task on the display (no command)."""
    llm: bool = False
    """Record the command's model API calls, not the screen."""
    ignore: Sequence[Rect] = ()
    agent_timeout: float | None = None
    observe: float = 1.0
    upstream: str | None = None
    record_input: bool = False
    commit_steps: int | None = None
    """How many actions at the end of the task commit it: kept with the recording, for
    a fleet's claims (None: not declared, the last action)."""

    def recording(self) -> RecordOptions:
        """How the screen run is recorded."""
        from mmcli.capture.record import RecordOptions

        return RecordOptions(
            ignore=self.ignore,
            agent_timeout=self.agent_timeout,
            observe=self.observe,
            record_input=self.record_input,
            commit_steps=self.commit_steps,
        )

    def check(self) -> None:
        """What is refused before anything runs."""
        validate_name(self.name)
        if self.llm:
            if self.ignore or self.demo or self.record_input or self.commit_steps:
                raise UsageError(
                    "--ignore-region, --demo, --record-input and --commit-steps are for "
                    "screen recordings, not --llm"
                )
            return
        if self.display.is_remote and (self.demo or self.record_input):
            raise UsageError(
                "--demo and --record-input need an X display's input; over VNC an agent "
                "acts through its VNC endpoint (MM_VNC_ADDRESS), on a browser's DevTools "
                "through mm act"
            )
        if self.demo and self.command:
            raise UsageError("--demo records a person: give no agent command with it")
        if not self.demo and not self.command:
            raise UsageError(
                "no agent command given (put it after `--`, or record a person with --demo)"
            )
        if self.demo and (self.record_input or self.agent_timeout is not None):
            raise UsageError("--record-input and --agent-timeout are for an agent, not --demo")


def record(
    store: Store, request: RecordRequest, progress: Progress | None = None
) -> RecordResult | LLMResult:
    request.check()
    if request.llm:
        return _record_model(store, request, progress)
    return _record_screen(store, request, progress)


def _record_screen(store: Store, request: RecordRequest, progress: Progress | None) -> RecordResult:
    from mmcli.capture.record import record_demo
    from mmcli.model import SCREEN_KIND
    from mmcli.store.lifecycle import Intent, begin

    options = request.recording()
    with request.display.opened(progress) as backend:
        if not request.demo:
            return record_agent(
                store, backend, request.name, request.command, request.values, options,
                overwrite=request.overwrite, add=request.add, progress=progress,
            )  # fmt: skip
        intent = Intent.of(overwrite=request.overwrite, add=request.add)
        with begin(store, request.name, intent, SCREEN_KIND) as opened:
            return record_demo(opened, backend, request.values, options, progress)


def record_agent(
    store: Store,
    backend: Backend,
    name: str,
    command: Sequence[str],
    values: Values,
    options: RecordOptions | None = None,
    *,
    overwrite: bool = False,
    add: bool = False,
    progress: Progress | None = None,
) -> RecordResult:
    """Record the agent `command` doing task `name` on an open display: the run opened
    here (`store.lifecycle.begin`: the name checked, a new one refused where it exists),
    the agent's actions recorded and saved (`capture.record.record`). `mm record`, and
    `mm replay` of a name not recorded yet, record through here."""
    from mmcli.capture.record import RecordOptions, record
    from mmcli.model import SCREEN_KIND
    from mmcli.store.lifecycle import Intent, begin

    with begin(store, name, Intent.of(overwrite=overwrite, add=add), SCREEN_KIND) as opened:
        return record(opened, backend, command, values, options or RecordOptions(), progress)


def _record_model(store: Store, request: RecordRequest, progress: Progress | None) -> LLMResult:
    from mmcli.llm.document import KIND
    from mmcli.llm.run import record_llm
    from mmcli.store.lifecycle import Intent, begin

    intent = Intent.of(overwrite=request.overwrite, add=request.add)
    with begin(store, request.name, intent, KIND) as opened:
        return record_llm(
            opened,
            request.command,
            request.values,
            request.upstream,
            request.agent_timeout,
            progress,
        )
