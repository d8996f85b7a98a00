"""`mm record`: run an agent under the recorder and save what it did, only if it succeeded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mmcli.agent import AgentRun, run_agent
from mmcli.backends.base import Backend
from mmcli.errors import MMError, NotSaved, RecordingExists, UsageError
from mmcli.fingerprint import Rect
from mmcli.integrate import FinishedRun, Into, integrate
from mmcli.model import Action
from mmcli.params import Values
from mmcli.recorder import Recorder
from mmcli.secrets import describe
from mmcli.store import Store, validate_name

NO_VALUES = Values()

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RecordResult:
    returncode: int
    saved: bool
    steps: int
    reason: str = ""
    merged: bool = False
    """Saved as a branch of the existing recording (`--add`)."""


def run_recorded(
    backend: Backend,
    command: Sequence[str],
    env: dict[str, str],
    *,
    start_focus: tuple[int, int] | None = None,
    timeout: float | None = None,
    observe: float = 0.0,
    values: Values = NO_VALUES,
    progress: Progress | None = None,
) -> tuple[AgentRun, Recorder]:
    """Run the agent with the recorder listening; return its run and the captures.

    With `observe`, first watch the idle screen that long to learn volatile regions.
    Progress shows typed param and secret values as their placeholders.
    """

    def on_action(index: int, action: Action) -> None:
        if progress is not None:
            progress(f"recorded step {index}: {describe(action, values.all, values.secrets)}")

    with Recorder(backend, start_focus=start_focus, on_action=on_action) as recorder:
        if observe > 0:
            if progress is not None:
                progress(f"watching the screen for {observe:g}s to learn what changes alone")
            recorder.observe(observe)
        run = run_agent(command, {**recorder.env(), **env}, timeout=timeout)
        if run.ok and recorder.captures:
            recorder.capture_final()
    return run, recorder


def check_recordable(recorder: Recorder) -> None:
    if recorder.unsupported:
        used = ", ".join(sorted(set(recorder.unsupported)))
        raise MMError(
            f"the agent used {used}, which mm cannot record; nothing was saved "
            "(use click/write/press/hotkey/scroll/moveTo/dragTo, or `mm act`)"
        )


def record(
    store: Store,
    backend: Backend,
    name: str,
    command: Sequence[str],
    values: Values,
    *,
    overwrite: bool = False,
    add: bool = False,
    ignore: Sequence[Rect] = (),
    agent_timeout: float | None = None,
    observe: float = 1.0,
    progress: Progress | None = None,
) -> RecordResult:
    validate_name(name)
    if not command:
        raise MMError("no agent command given (put it after `--`)")
    if add and overwrite:
        raise UsageError("--add merges into the recording, --overwrite replaces it: pick one")
    if store.exists(name) and not (overwrite or add):
        raise RecordingExists(
            f"recording {name!r} already exists in {store.root}; use --overwrite to replace "
            "it or --add to merge this run into it"
        )
    env = {"MM_RECORDING": name, **values.env()}
    run, recorder = run_recorded(
        backend,
        command,
        env,
        timeout=agent_timeout,
        observe=observe,
        values=values,
        progress=progress,
    )
    if run.timed_out:
        return RecordResult(4, False, 0, f"the agent timed out after {agent_timeout}s")
    if not run.ok:
        return RecordResult(run.returncode, False, 0, f"the agent exited {run.returncode}")
    check_recordable(recorder)
    if not recorder.captures:
        raise MMError("the agent exited 0 without performing any action; nothing to record")
    try:
        done = integrate(
            store,
            name,
            FinishedRun.of(recorder, values, command),
            Into.ADD if add else Into.NEW,
            ignore=ignore,
            overwrite=overwrite,
            progress=progress,
        )
    except MMError as e:
        raise NotSaved(str(e)) from e
    return RecordResult(0, done.saved, done.steps, done.reason, merged=done.merged)
