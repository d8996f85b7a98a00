"""Recording an agent or a person into a run the record verb opened (`verbs.record`):
the agent run under the recorder, what it did saved only if it succeeded."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from mmcli.backends.base import Backend
from mmcli.capture.cdp import ADDRESS_ENV as CDP_ENV
from mmcli.capture.cdp import CdpChannel
from mmcli.capture.integrate import FinishedRun, Into, integrate
from mmcli.capture.recorder import Recorder
from mmcli.capture.secrets import describe
from mmcli.capture.vnc import ADDRESS_ENV, VncChannel
from mmcli.desktop.agent import AgentRun, Interrupt, run_agent
from mmcli.desktop.input_events import STOP_CHORD, summarize
from mmcli.desktop.input_watch import InputWatch
from mmcli.desktop.sandbox import Sandbox
from mmcli.errors import (
    Aborted,
    DisplayError,
    DisplayLost,
    ExitCode,
    MMError,
    NotSaved,
    TypedOtherwise,
)
from mmcli.model import Action
from mmcli.params import Values
from mmcli.screen.fingerprint import Rect
from mmcli.store.lifecycle import Intent, OpenRun

NO_VALUES = Values()
VNC_DRAIN = 10.0
"""Seconds the agent's VNC connections are given, once it has exited, to be read to their
end."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RecordOptions:
    """How a run is recorded (`mm record`'s options; a replay of a name not recorded yet
    passes its own)."""

    ignore: Sequence[Rect] = ()
    """Regions left out of every check (`--ignore-region`)."""
    agent_timeout: float | None = None
    observe: float = 1.0
    """Seconds the idle screen is watched first, to learn what changes alone."""
    record_input: bool = False
    """Record the display's input events too (an agent with no channel of its own)."""
    commit_steps: int | None = None
    """How many actions at the end commit the task (None: not declared)."""


@dataclass(frozen=True)
class RecordResult:
    returncode: int
    """`mm record`'s exit code: an `ExitCode`, or the failed agent's own."""
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
    record_input: bool = False,
    cwd: str | None = None,
    sandbox: Sandbox | None = None,
) -> tuple[AgentRun, Recorder]:
    """Run the agent with the recorder listening; return its run and the captures.

    The agent runs in folder `cwd` (None: ours), inside `sandbox` where one is given (a
    hand-over: the store read-only, what it leaves running stopped at its exit). With
    `observe`, first watch the idle screen that long to learn volatile regions. Progress
    shows typed param and secret values as their placeholders. The display's input is
    watched all along: input no channel reported is noted on the recorder's watch
    (`check_recordable` fails on it) or, with `record_input`, recorded from the events
    themselves.
    """

    def on_action(index: int, action: Action, note: str) -> None:
        if progress is not None:
            shown = describe(action, values.all, values.secrets)
            progress(f"recorded step {index + 1}: {shown}" + (f" ({note})" if note else ""))

    def on_warning(message: str) -> None:
        if progress is not None:
            progress(f"warning: {message}")

    with (
        Recorder(
            backend, start_focus=start_focus, on_action=on_action, on_warning=on_warning
        ) as recorder,
        _endpoint(recorder, backend, progress) as endpoint,
    ):
        watch = open_watch(backend, recorder, build=record_input, progress=progress)
        try:
            if observe > 0:
                if progress is not None:
                    progress(f"watching the screen for {observe:g}s to learn what changes alone")
                recorder.observe(observe)
            # The agent starts once the display's screen can be trusted (a VNC connection's
            # first screens are not: `vnc.FRESH_AFTER_CONNECT`), not behind its first input.
            backend.grab()
            agent_env = {**recorder.env(), **(endpoint.env() if endpoint else {}), **env}
            left_out = sandbox.left_out() if sandbox is not None else ()
            wrap = sandbox.wrap if sandbox is not None else None
            run = run_agent(
                command, agent_env, timeout=timeout, cwd=cwd, left_out=left_out, wrap=wrap
            )
        finally:
            if watch is not None:
                watch.stop()
        recorder.finish()
        if endpoint is not None:
            # What the agent sent before it exited is read to its end (it may still be
            # waiting behind the screen kept for its first key), then no input after this:
            # the actions are final.
            if not endpoint.proxy.drain(VNC_DRAIN):
                what = "VNC" if isinstance(endpoint, VncChannel) else "DevTools"
                recorder.unsupported.append(
                    f"a {what} connection of the agent's still open {VNC_DRAIN:g}s after it "
                    "exited (a process it left behind?): its input is not known whole"
                )
            endpoint.proxy.close()
            recorder.add_captures(endpoint.finish())
            recorder.dropped.extend(endpoint.dropped)
            if isinstance(endpoint, CdpChannel) and progress is not None:
                for refused in endpoint.proxy.refused:
                    progress(f"warning: the agent's DevTools endpoint: {refused}")
        if watch is not None and record_input and run.ok:
            _add_observed(recorder, watch, values, progress)
        if run.ok and recorder.captures:
            recorder.capture_final()
        if watch is not None:
            watch.close()
    return run, recorder


@contextlib.contextmanager
def _endpoint(
    recorder: Recorder, backend: Backend, progress: Progress | None
) -> Iterator[VncChannel | CdpChannel | None]:
    """On a remote display, the agent's own endpoint in front of it: over VNC
    (`MM_VNC_ADDRESS`), or a browser's DevTools (`MM_CDP_URL`)."""
    vnc = VncChannel.open(recorder, backend)
    channel = vnc if vnc is not None else CdpChannel.open(recorder, backend)
    if channel is None:
        yield None
        return
    with channel:
        if progress is not None:
            if isinstance(channel, VncChannel):
                progress(f"the agent's VNC endpoint: {channel.proxy.address} ({ADDRESS_ENV})")
            else:
                progress(f"the agent's DevTools endpoint: {channel.proxy.address} ({CDP_ENV})")
        yield channel


def open_watch(
    backend: Backend,
    recorder: Recorder,
    *,
    build: bool = False,
    demo: bool = False,
    progress: Progress | None = None,
) -> InputWatch | None:
    """Start watching the display's input for `recorder`; None where it cannot be
    watched and nothing depends on it (a warning says so)."""
    try:
        source = backend.input_source()
        if source is None:
            if build or demo:
                raise DisplayError("this display's input cannot be watched")
            return None
        watch = InputWatch(
            source,
            backend.open_grabber,
            build=build,
            demo=demo,
            on_activity=recorder.note_activity,
            pointer=backend.pointer(),
        )
        watch.start()
    except (DisplayError, RuntimeError) as e:
        if build or demo:
            what = "--demo" if demo else "--record-input"
            raise DisplayError(f"{what} needs the display's input (X RECORD): {e}") from None
        if progress is not None:
            progress(f"warning: {e}; input through channels mm does not record would go unnoticed")
        return None
    recorder.watch = watch
    return watch


def _add_observed(
    recorder: Recorder, watch: InputWatch, values: Values, progress: Progress | None
) -> None:
    observed = watch.actions()
    added = recorder.add_observed(observed)
    if added and progress is not None:
        shown = [describe(a, values.all, values.secrets) for a, _ in observed]
        progress(
            f"recorded {added} actions from the display's input (no channel reported them): "
            + "; ".join(shown)
        )


def check_recordable(recorder: Recorder, who: str = "the agent") -> None:
    if recorder.dropped:
        raise DisplayLost(
            f"the connection to the VNC server dropped while {who} was connected "
            f"({recorder.dropped[0]}): what it sent last may not have arrived; "
            "nothing was saved"
        )
    if recorder.unsupported:
        used = ", ".join(sorted(set(recorder.unsupported)))
        raise MMError(
            f"{who} used {used}, which mm cannot record; nothing was saved "
            "(see docs/channels.md for what each channel can record)"
        )
    watch = recorder.watch
    if watch is None:
        return
    if watch.errors:
        raise MMError(f"watching the display's input failed: {watch.errors[0]}; nothing was saved")
    if watch.unaccounted:
        seen = summarize([e.describe() for e in watch.unaccounted])
        raise MMError(
            f"{who} acted through a channel mm does not record: {seen} that mm did not "
            "record; nothing was saved (act through pyautogui, xdotool or mm act, or add "
            "--record-input to record from the display's input)"
        )
    if watch.builder.unrecordable:
        seen = summarize(watch.builder.unrecordable)
        raise MMError(
            f"{who} used input mm cannot record from the display: {seen}; nothing was saved"
        )
    misspelled = watch.ledger.misspelled()
    if misspelled:
        raise TypedOtherwise(
            f"the keys that reached the display are not what {who} typed: {misspelled[0]}; "
            "nothing was saved; check the task before retrying"
        )


def record(
    opened: OpenRun,
    backend: Backend,
    command: Sequence[str],
    values: Values,
    options: RecordOptions = RecordOptions(),
    progress: Progress | None = None,
) -> RecordResult:
    """Record the agent `command` doing the task on `backend` into the run `opened` (by
    the record verb, `verbs.record.record_agent`): saved once the agent exits 0 having
    acted, merged into the recording when the run adds to it."""
    if not command:
        raise MMError("no agent command given (put it after `--`, or record a person with --demo)")
    name = opened.name
    env = {"MM_RECORDING": name, **values.env()}
    run, recorder = run_recorded(
        backend,
        command,
        env,
        timeout=options.agent_timeout,
        observe=options.observe,
        values=values,
        progress=progress,
        record_input=options.record_input,
    )
    if run.timed_out:
        return RecordResult(
            ExitCode.AGENT_FAILED, False, 0, f"the agent timed out after {options.agent_timeout}s"
        )
    if not run.ok:
        return RecordResult(run.returncode, False, 0, f"the agent exited {run.returncode}")
    check_recordable(recorder)
    if not recorder.captures:
        raise MMError("the agent exited 0 without performing any action; nothing to record")
    with opened.saving():
        return save_run(opened, recorder, command, values, options, progress, here())


def here() -> str | None:
    """The folder `mm` runs in, which a fallback agent will run in (None: it is gone)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def save_run(
    opened: OpenRun,
    recorder: Recorder,
    command: Sequence[str],
    values: Values,
    options: RecordOptions,
    progress: Progress | None,
    cwd: str | None = None,
) -> RecordResult:
    """Build the steps of a finished run and save them as the run's recording (or merge
    them in, for a run that adds); `cwd`: the folder the command ran in; the committing
    steps as declared in `options`, kept with it."""
    run = FinishedRun.of(recorder, values, command, cwd)
    run = replace(run, commit_steps=options.commit_steps)
    try:
        done = integrate(
            opened.store,
            opened.name,
            run,
            Into.ADD if opened.intent is Intent.ADD else Into.NEW,
            ignore=options.ignore,
            overwrite=opened.intent is Intent.OVERWRITE,
            progress=progress,
        )
    except MMError as e:
        raise NotSaved(str(e)) from e
    return RecordResult(ExitCode.OK, done.saved, done.steps, done.reason, merged=done.merged)


def record_demo(
    opened: OpenRun,
    backend: Backend,
    values: Values,
    options: RecordOptions = RecordOptions(),
    progress: Progress | None = None,
    timeout: float | None = None,
) -> RecordResult:
    """Record a person doing the task on the display, until the stop chord.

    Every button and key press on the display is the person's; the screen before each is
    the last settled picture. The recording has no command: replay hands over to the
    agent `--agent` names, and without one behaves as `--no-agent`.
    """
    recorder = _demonstrate(backend, options.observe, progress, timeout)
    say = progress or _quiet
    for index, capture in enumerate(recorder.captures):
        say(f"recorded step {index + 1}: {describe(capture.action, values.all, values.secrets)}")
    with opened.saving():
        return save_run(opened, recorder, [], values, options, progress)


def _quiet(message: str) -> None:
    pass


def _demonstrate(
    backend: Backend, observe: float, progress: Progress | None, timeout: float | None
) -> Recorder:
    """The person's actions on the display until the stop chord, with the screen before
    each."""
    say = progress or _quiet
    with Recorder(backend) as recorder:
        watch = open_watch(backend, recorder, demo=True, progress=progress)
        assert watch is not None
        try:
            if observe > 0:
                say(f"watching the screen for {observe:g}s to learn what changes alone")
                recorder.observe(observe)
            say(f"recording a demonstration: do the task, then press {STOP_CHORD} to stop")
            wait_for_stop(watch, timeout)
        finally:
            watch.stop()
        observed = watch.actions()
        check_recordable(recorder, who="the demonstration")
        if not recorder.add_observed(observed):
            raise MMError("the demonstration ended without any action; nothing to record")
        recorder.capture_final()
        watch.close()
    return recorder


def wait_for_stop(watch: InputWatch, timeout: float | None) -> None:
    """Until the stop chord; Ctrl-C or SIGTERM abort (nothing is saved)."""
    started = time.monotonic()
    interrupt = Interrupt()
    with interrupt.catching():
        while not watch.stopped.wait(0.1):
            if interrupt.signum is not None:
                raise Aborted("interrupted; the demonstration was not saved")
            if not watch.alive():
                raise MMError("lost the display's input; the demonstration was not saved")
            if timeout is not None and time.monotonic() - started > timeout:
                raise MMError(
                    f"no stop chord ({STOP_CHORD}) within {timeout:g}s; nothing was saved"
                )
