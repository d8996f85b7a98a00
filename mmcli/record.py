"""`mm record`: run an agent under the recorder and save what it did, only if it succeeded."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from mmcli.agent import AgentRun, run_agent
from mmcli.backends.base import Backend
from mmcli.errors import MMError, RecordingExists, UsageError
from mmcli.fingerprint import Rect
from mmcli.merge import merge
from mmcli.model import PLACEHOLDER, Action, ActionKind, Recording, Step
from mmcli.params import Values
from mmcli.recorder import Recorder, build_steps, parametrize, volatile_masks
from mmcli.store import Store, validate_name

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
    values: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> tuple[AgentRun, Recorder]:
    """Run the agent with the recorder listening; return its run and the captures.

    With `observe`, first watch the idle screen that long to learn volatile regions.
    Progress shows typed param and secret values as their placeholders.
    """

    def on_action(index: int, action: Action, note: str) -> None:
        if progress is not None:
            if action.kind is ActionKind.TYPE:
                action = replace(action, text=parametrize(action.text, values or {}))
            progress(f"recorded step {index}: {action.describe()}" + (f" ({note})" if note else ""))

    def on_warning(message: str) -> None:
        if progress is not None:
            progress(f"warning: {message}")

    with Recorder(
        backend, start_focus=start_focus, on_action=on_action, on_warning=on_warning
    ) as recorder:
        if observe > 0:
            if progress is not None:
                progress(f"watching the screen for {observe:g}s to learn what changes alone")
            recorder.observe(observe)
        run = run_agent(command, {**recorder.env(), **env}, timeout=timeout)
        recorder.finish()
        if run.ok and recorder.captures:
            recorder.capture_final()
    return run, recorder


def check_recordable(recorder: Recorder) -> None:
    if recorder.unsupported:
        used = ", ".join(sorted(set(recorder.unsupported)))
        raise MMError(
            f"the agent used {used}, which mm cannot record; nothing was saved "
            "(see docs/channels.md for what each channel can record)"
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
        values=values.all,
        progress=progress,
    )
    if run.timed_out:
        return RecordResult(4, False, 0, f"the agent timed out after {agent_timeout}s")
    if not run.ok:
        return RecordResult(run.returncode, False, 0, f"the agent exited {run.returncode}")
    check_recordable(recorder)
    if not recorder.captures:
        raise MMError("the agent exited 0 without performing any action; nothing to record")
    volatile = volatile_masks(recorder.volatile)
    built = build_steps(
        recorder.captures,
        recorder.final,
        values.all,
        0,
        None,
        [*ignore, *volatile],
        secrets=set(values.secrets),
    )
    steps = built.steps
    recorded_command = [parametrize(arg, values.secrets) for arg in command]
    used = used_names(steps) | set().union(*(PLACEHOLDER.findall(a) for a in recorded_command))
    recording = Recording(
        name=name,
        steps=steps,
        created=datetime.now(UTC).replace(microsecond=0),
        command=recorded_command,
        params=sorted(used),
        secrets=sorted(used & set(values.secrets)),
        ignore=list(ignore),
        volatile=volatile,
        area=built.area,
    )
    if progress is not None and volatile:
        progress("changing on their own (left out of checks): " + ", ".join(map(str, volatile)))
    with store.lock(name):
        if add and store.exists(name):
            return _merge_into(store, store.load(name), recording, built.thumbnails, progress)
        store.save(recording, built.thumbnails, overwrite=overwrite)
    return RecordResult(0, True, len(steps))


def _merge_into(
    store: Store,
    existing: Recording,
    run: Recording,
    thumbnails: Mapping[str, bytes],
    progress: Progress | None,
) -> RecordResult:
    """Merge `run` into `existing` (the caller holds the lock) and save it."""
    say = progress or (lambda message: None)
    merged = merge(existing, run.steps)
    if not merged.added:
        return RecordResult(0, False, 0, "the recording's tree already holds this run")
    rec = merged.recording
    rec.volatile = [*rec.volatile, *(r for r in run.volatile if r not in rec.volatile)]
    if run.area is not None:
        rec.area = run.area if rec.area is None else rec.area.union(run.area)
    rec.params = sorted(set(rec.params) | set(run.params))
    rec.secrets = sorted(set(rec.secrets) | set(run.secrets))
    keep = {s.thumbnail for s in merged.added if s.thumbnail}
    store.save(rec, {k: v for k, v in thumbnails.items() if k in keep})
    say(
        f"merged into {existing.name!r}: {merged.shared} steps shared, a branch of "
        f"{len(merged.added)} steps at step {merged.branch_at + 1}"
    )
    return RecordResult(0, True, len(merged.added), merged=True)
