"""Running the agent command: stdio passed through, signals forwarded, exit code returned."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    command: Sequence[str],
    env: Mapping[str, str],
    timeout: float | None = None,
    cwd: str | None = None,
    left_out: Sequence[str] = (),
    wrap: Callable[[Sequence[str]], list[str]] | None = None,
) -> AgentRun:
    """Run `command` with `env` added to ours (less the variables `left_out`), in folder
    `cwd` (None: ours), inside `wrap` (a sandbox) when given; raise `Aborted` on
    Ctrl-C/SIGTERM."""
    full_env = {k: v for k, v in {**os.environ, **env}.items() if k not in left_out}
    if cwd is not None and not os.path.isdir(cwd):
        raise MMError(
            f"the agent's folder {cwd} no longer exists (the agent command was recorded "
            "there); restore it, or give the agent with --agent CMD"
        )
    if wrap is not None:
        # Inside the sandbox a missing program is the sandbox's failure (an exit code
        # like the agent's own): it is looked for here first, as Popen would.
        _check_runnable(command[0], full_env.get("PATH", os.defpath), cwd)
        command = wrap(command)
    started = time.monotonic()
    interrupt = Interrupt()
    with interrupt.catching():
        try:
            child = subprocess.Popen(list(command), env=full_env, cwd=cwd)
        except FileNotFoundError:
            where = f" (in {cwd})" if cwd is not None else ""
            raise MMError(f"agent command not found: {command[0]!r}{where}") from None
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


def _check_runnable(program: str, path: str, cwd: str | None) -> None:
    where = f" (in {cwd})" if cwd is not None else ""
    if os.sep in program:
        found = os.path.join(cwd, program) if cwd is not None else program
        if not os.path.exists(found):
            raise MMError(f"agent command not found: {program!r}{where}")
        if os.path.isdir(found) or not os.access(found, os.X_OK):
            raise MMError(f"agent command not executable: {program!r}")
    elif shutil.which(program, path=path) is None:
        raise MMError(f"agent command not found: {program!r}{where}")


def _stop(child: subprocess.Popen[bytes], signum: int) -> None:
    # The agent's own children (a wrapper script's real agent) would be orphaned and go
    # on driving the display after mm has let go of it: they are stopped too.
    family = descendants(child.pid)
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signum)
    try:
        child.wait(timeout=GRACE)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    _end(family)


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs (from /proc; none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(os.path.join(entry.path, "stat")) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def _end(pids: Sequence[int], grace: float = 1.0) -> None:
    """SIGTERM `pids`, then SIGKILL those still there after `grace` seconds."""
    left = list(pids)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pid for pid in left if _running(pid)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
