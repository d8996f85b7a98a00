"""Running the agent command: stdio passed through, signals forwarded, exit code returned."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from mmcli.errors import Aborted, MMError

GRACE = 5.0
"""Seconds an interrupted agent gets to exit before it is killed."""


@dataclass(frozen=True)
class AgentRun:
    returncode: int
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


class Interrupt:
    """Turns SIGINT/SIGTERM into a flag while a child runs, so `mm` can clean up first."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def _handler(self, signum: int, frame: object) -> None:
        self.signum = signum

    @contextlib.contextmanager
    def catching(self) -> Iterator[Interrupt]:
        previous = {s: signal.signal(s, self._handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def run_agent(
    command: Sequence[str], env: Mapping[str, str], timeout: float | None = None
) -> AgentRun:
    """Run `command` with `env` added to ours; raise `Aborted` on Ctrl-C/SIGTERM."""
    full_env = {**os.environ, **env}
    started = time.monotonic()
    interrupt = Interrupt()
    with interrupt.catching():
        try:
            child = subprocess.Popen(list(command), env=full_env)
        except FileNotFoundError:
            raise MMError(f"agent command not found: {command[0]!r}") from None
        except PermissionError:
            raise MMError(f"agent command not executable: {command[0]!r}") from None
        timed_out = False
        while True:
            try:
                child.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                pass
            if interrupt.signum is not None:
                _stop(child, interrupt.signum)
                break
            if timeout is not None and time.monotonic() - started > timeout:
                timed_out = True
                _stop(child, signal.SIGTERM)
                break
    if interrupt.signum is not None:
        raise Aborted("interrupted; the agent was stopped and nothing was saved")
    return AgentRun(child.returncode, time.monotonic() - started, timed_out)


def _stop(child: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signum)
    try:
        child.wait(timeout=GRACE)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
