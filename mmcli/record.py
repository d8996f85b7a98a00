"""`mm record`: run an agent under the recorder and save what it did, only if it succeeded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mmcli.agent import AgentRun, run_agent
from mmcli.backends.base import Backend
from mmcli.errors import MMError, RecordingExists
from mmcli.fingerprint import Rect
from mmcli.model import Action, Recording, Step
from mmcli.params import Values
from mmcli.recorder import Recorder, build_steps
from mmcli.store import Store, validate_name

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RecordResult:
    returncode: int
    saved: bool
    steps: int
    reason: str = ""


def run_recorded(
    backend: Backend,
    command: Sequence[str],
    env: dict[str, str],
    *,
    start_focus: tuple[int, int] | None = None,
    timeout: float | None = None,
    progress: Progress | None = None,
) -> tuple[AgentRun, Recorder]:
    """Run the agent with the recorder listening; return its run and the captures."""

    def on_action(index: int, action: Action) -> None:
        if progress is not None:
            progress(f"recorded step {index}: {action.describe()}")

    with Recorder(backend, start_focus=start_focus, on_action=on_action) as recorder:
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


def used_names(steps: Sequence[Step]) -> set[str]:
    return set().union(*(s.action.params_used() for s in steps)) if steps else set()


def record(
    store: Store,
    backend: Backend,
    name: str,
    command: Sequence[str],
    values: Values,
    *,
    overwrite: bool = False,
    ignore: Sequence[Rect] = (),
    agent_timeout: float | None = None,
    progress: Progress | None = None,
) -> RecordResult:
    validate_name(name)
    if not command:
        raise MMError("no agent command given (put it after `--`)")
    if store.exists(name) and not overwrite:
        raise RecordingExists(
            f"recording {name!r} already exists in {store.root}; use --overwrite to replace it"
        )
    env = {"MM_RECORDING": name, **values.env()}
    run, recorder = run_recorded(
        backend, command, env, timeout=agent_timeout, progress=progress
    )
    if run.timed_out:
        return RecordResult(4, False, 0, f"the agent timed out after {agent_timeout}s")
    if not run.ok:
        return RecordResult(run.returncode, False, 0, f"the agent exited {run.returncode}")
    check_recordable(recorder)
    if not recorder.captures:
        raise MMError("the agent exited 0 without performing any action; nothing to record")
    steps, thumbnails = build_steps(
        recorder.captures, recorder.final, values.all, 0, None, list(ignore)
    )
    used = used_names(steps)
    recording = Recording(
        name=name,
        steps=steps,
        created=datetime.now(UTC).replace(microsecond=0),
        command=list(command),
        params=sorted(used),
        secrets=sorted(used & set(values.secrets)),
        ignore=list(ignore),
    )
    with store.lock(name):
        store.save(recording, thumbnails, overwrite=overwrite)
    return RecordResult(0, True, len(steps))
