"""The outcome step of a replay: after the last action, wait for the screen to settle on
an outcome the recording trusts.

A replay is "done" only when the live screen after its last action shows the outcome its
path recorded (or another outcome the recording trusts: several paths may end alike).
Apps take a moment to save, so the check looks again as the screen changes, up to the
step timeout; a screen still showing something else then ("Upload failed") is a run
whose steps were performed but whose result differs. Nothing is performed here, and the
agent is not called: the last action, the one that commits, has already been performed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mmcli.backends.base import Backend
from mmcli.model import Step
from mmcli.screen.fingerprint import Frame
from mmcli.screen.matcher import Verdict

QUIET = 0.1
"""The outcome is judged on a screen still this long: the app has finished drawing."""
LOOK_LIMIT = 0.5
"""At most this long each look waits for a still screen."""
POLL = 0.05


@dataclass(frozen=True)
class OutcomeSeen:
    matched: Step | None
    """The step whose outcome the screen shows (None: none of them)."""
    verdict: Verdict | None
    """Against the path's own outcome, the last look (why it does not match)."""
    frame: Frame


def await_outcome(
    backend: Backend,
    ends: Sequence[Step],
    judge: Callable[[Step, Frame], Verdict],
    timeout: float,
    check_abort: Callable[[], None],
) -> OutcomeSeen:
    """Look until a still screen shows the outcome of one of `ends` (the path's own
    first), or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        check_abort()
        settled = backend.settle(QUIET, LOOK_LIMIT)
        first: Verdict | None = None
        for end in ends:
            verdict = judge(end, settled.frame)
            if verdict.ok and settled.still:
                return OutcomeSeen(end, verdict, settled.frame)
            if first is None:
                first = verdict
        if time.monotonic() >= deadline:
            return OutcomeSeen(None, first, settled.frame)
        backend.wait_change(settled.at, POLL)


def pending_reason(name: str, step: Step) -> str:
    """Why replay does not follow a matching branch that awaits approval."""
    return (
        f"The screen matches branch {step.id}, which the agent learned in a "
        "run that ended on an outcome the recording had not seen: it is pending. Check that "
        f"run's result, then `mm approve {name} {step.id}` (or replay with --trust-new)"
    )
