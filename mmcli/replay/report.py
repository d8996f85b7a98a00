"""What a replay is asked to do (`ReplayOptions`) and what it reports (`ReplayReport`,
with the `Divergence` where it stopped)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mmcli.errors import ExitCode, Outcome
from mmcli.screen.fingerprint import Rect
from mmcli.screen.matcher import Policy

AGENT_TIMEOUT = 600.0
"""Default limit for a fallback agent: a hung agent must not hold the display forever."""


@dataclass(frozen=True)
class Divergence:
    step: int
    """0-based position on the path where no recorded step matched (its depth in the tree;
    people are told `step + 1`, the number replay's progress gives that step)."""
    expected: str
    """The action that would have been performed."""
    reason: str
    thumbnail: str | None = None
    """The live screen at the divergence, beside the recording."""
    recorded: str | None = None
    """The recorded screen of the step that did not match."""
    regions: tuple[Rect, ...] = ()
    """Where the live screen differed from the closest recorded step (screen pixels), as
    the matcher found it; none when nothing on the screen differed (the step could not be
    checked, or was not acted on)."""
    area: Rect | None = None
    """The task area the step was judged in (None: the whole screen)."""
    offset: tuple[int, int] = (0, 0)
    """Where the task was looked for: moved by this much from where it was recorded (the
    live screen's task area and regions are `area` and `regions` moved by it)."""
    live_area: str | None = None
    """The live task area (and a margin) at the screen's own resolution, painted where the
    step masks: kept only for a recording that types no secret."""
    live_box: Rect | None = None
    """Where `live_area` was cut from the live screen (screen pixels)."""
    next: str | None = None
    """What to do that fits this refusal (`--relocate`, `mm approve`, start the app);
    None: let the agent finish from here (replay without --no-agent)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "step": self.step + 1,
            "depth": self.step,
            "expected": self.expected,
            "reason": self.reason,
            "thumbnail": self.thumbnail,
            "recorded": self.recorded,
            "regions": [r.as_list() for r in self.regions],
            "area": self.area.as_list() if self.area else None,
            "offset": list(self.offset),
            "live_area": self.live_area,
            "live_box": self.live_box.as_list() if self.live_box else None,
            "next": self.next,
        }


@dataclass
class ReplayOptions:
    timeout: float = 10.0
    policy: Policy = Policy.DEFAULT
    dry_run: bool = False
    agent: Sequence[str] | None = None
    """Command that takes over on divergence, with `{{key}}` where this run's values go;
    None = no agent."""
    agent_cwd: str | None = None
    """The folder the agent runs in (the recording's, for its recorded command); None:
    the caller's."""
    agent_timeout: float | None = AGENT_TIMEOUT
    """Seconds before a fallback agent is stopped (exit 4); None: no limit."""
    ignore: Sequence[Rect] = ()
    relocate: bool = False
    """Act on the task where it moved to, when it is found intact at another position."""
    record_input: bool = False
    """Record the agent's input that no channel reports from the display's input events."""
    trust_new: bool = False
    """Follow branches still pending approval (they ended on a new outcome)."""
    before_commit: Callable[[], None] | None = None
    """Called before each committing step (the last `commit_steps` actions on the path)
    and before a hand-over (the agent may commit); raising there acts on nothing more (a
    fleet's claim: `mmcli.fleet.claims`)."""
    commit_steps: int = 1


@dataclass
class ReplayReport:
    name: str
    outcome: Outcome
    steps_replayed: int = 0
    steps_total: int = 0
    divergence: Divergence | None = None
    agent_steps: int = 0
    agent_returncode: int | None = None
    seconds: float = 0.0
    path: list[int] = field(default_factory=list)
    detail: str = ""
    """Why the agent is said to have failed, or why what it did was not saved."""
    outcome_seen: bool | None = None
    """After the last action the screen settled on a recorded outcome (None: not checked:
    a dry run, a divergence, a heal, or a path recorded without one)."""
    pending_branch: int | None = None
    """A heal's branch saved pending approval: the id of its first step."""
    branch: int | None = None
    """The branch a heal saved (pending or not): the id of its first step."""
    verified: bool | None = None
    """Every value typed (by replay, and by a healing agent) was read back where it
    landed and showed as typed; None: nothing was typed."""
    unverified: list[str] = field(default_factory=list)
    """For each typed value that could not be read back: its step, and why."""

    @property
    def exit_code(self) -> ExitCode:
        return self.outcome.exit_code

    def as_json(self) -> dict[str, Any]:
        d = self.divergence
        return {
            "name": self.name,
            "outcome": str(self.outcome),
            "exit_code": int(self.exit_code),
            "steps_replayed": self.steps_replayed,
            "steps_total": self.steps_total,
            "agent_steps": self.agent_steps,
            "agent_returncode": self.agent_returncode,
            "seconds": round(self.seconds, 3),
            "divergence": None if d is None else d.as_json(),
            "detail": self.detail,
            "outcome_seen": self.outcome_seen,
            "pending_branch": self.pending_branch,
            "verified": self.verified,
            "unverified": list(self.unverified),
        }
