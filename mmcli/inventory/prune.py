"""`mm prune`: decide what to delete (a plan), then delete exactly that.

Criteria, each optional, combined with "or":

- `older_than`: whole recordings created longer ago than this;
- `unused_for`: whole recordings not replayed (nor created) within this time;
- `keep`: per recording, the trunk and the `keep` newest approved branches stay; older
  approved branches go; branches pending approval are not counted, nor deleted;
- `dead_for`: branches created longer ago than this and not taken by any replay since.

A branch is the subtree that starts at a step which is not the first child of its parent
(the first child continues the trunk, or the branch it belongs to). Whole-recording
criteria apply to every document in the store, SDK ones included; branch criteria only
to CLI recordings. Unreadable recordings are never touched: a corrupt file is evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mmcli.errors import RecordingNotFound, UsageError
from mmcli.inventory.catalog import Summary, parse_time, summarize
from mmcli.inventory.kinds import KINDS
from mmcli.model import Recording, Step
from mmcli.store.inuse import unused
from mmcli.store.recordings import Store

DURATION = re.compile(r"(\d+)([smhdw])")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str, option: str = "duration") -> timedelta:
    """'90m', '12h', '30d', '2w' (or combined: '1d12h') as a timedelta."""
    parts = DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise UsageError(f"{option}: invalid duration {text!r}; use e.g. 90m, 12h, 30d, 2w")
    return timedelta(seconds=sum(int(n) * UNITS[u] for n, u in parts))


@dataclass(frozen=True)
class Criteria:
    older_than: timedelta | None = None
    unused_for: timedelta | None = None
    keep: int | None = None
    dead_for: timedelta | None = None

    def __post_init__(self) -> None:
        if self.keep is not None and self.keep < 0:
            raise UsageError("--keep must be 0 or more")

    @classmethod
    def parse(
        cls, older_than: str | None, unused_for: str | None, keep: int | None, dead: str | None
    ) -> Criteria:
        """From `mm prune`'s options: `--older-than`, `--unused-for`, `--keep`,
        `--dead-branches` (DURs such as 30d)."""
        return cls(
            older_than=parse_duration(older_than, "--older-than") if older_than else None,
            unused_for=parse_duration(unused_for, "--unused-for") if unused_for else None,
            keep=keep,
            dead_for=parse_duration(dead, "--dead-branches") if dead else None,
        )

    @property
    def empty(self) -> bool:
        return all(v is None for v in (self.older_than, self.unused_for, self.keep, self.dead_for))


@dataclass(frozen=True)
class Deletion:
    """One item of the plan: a whole recording (`branch` None) or one branch of it."""

    name: str
    reason: str
    branch: int | None = None
    """Id of the step where the branch starts."""
    steps: int = 0
    size: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "what": "recording" if self.branch is None else "branch",
            "branch_id": self.branch,
            "steps": self.steps,
            "size": self.size,
            "reason": self.reason,
        }


@dataclass
class Plan:
    deletions: list[Deletion] = field(default_factory=list)

    @property
    def recordings(self) -> list[Deletion]:
        return [d for d in self.deletions if d.branch is None]

    @property
    def branches(self) -> list[Deletion]:
        return [d for d in self.deletions if d.branch is not None]


def make_plan(store: Store, criteria: Criteria, now: datetime | None = None) -> Plan:
    if criteria.empty:
        raise UsageError("say what to prune: --older-than, --unused-for, --keep or --dead-branches")
    now = now or datetime.now(UTC)
    plan = Plan()
    for summary in summarize(store):
        if summary.error:
            continue
        whole = _whole_reason(summary, criteria, now)
        if whole:
            plan.deletions.append(
                Deletion(summary.name, whole, steps=summary.steps, size=summary.size)
            )
        elif _has_branches(summary) and (criteria.keep is not None or criteria.dead_for):
            plan.deletions.extend(_branch_deletions(store, summary.name, criteria, now))
    return plan


def _has_branches(summary: Summary) -> bool:
    kind = KINDS.get(summary.kind)
    return kind is not None and kind.branches


def _whole_reason(summary: Summary, criteria: Criteria, now: datetime) -> str | None:
    created = summary.created
    if criteria.older_than is not None and created and now - created > criteria.older_than:
        return f"created {_ago(now - created)} ago"
    if criteria.unused_for is not None:
        used = parse_time(summary.last_replayed) or created
        if used and now - used > criteria.unused_for:
            what = "last replayed" if summary.last_replayed else "never replayed; created"
            return f"{what} {_ago(now - used)} ago"
    return None


def _branch_deletions(store: Store, name: str, criteria: Criteria, now: datetime) -> list[Deletion]:
    recording = store.load(name)
    taken = _last_taken(store, name)
    starts = branch_starts(recording)
    doomed: dict[int, str] = {}
    if criteria.keep is not None:
        # Approved branches are counted; one still pending approval is a person's to
        # decide (`mm approve`), never a reason to delete an approved one.
        approved = [s for s in starts if not s.pending]
        newest = sorted(approved, key=lambda s: _branch_time(s, taken), reverse=True)
        kept = ", ".join(str(s.id) for s in newest[: criteria.keep]) or "none"
        pending = [str(s.id) for s in starts if s.pending]
        why = f"not among the {criteria.keep} newest approved branches (kept: {kept}"
        why += f"; pending, not counted: {', '.join(pending)})" if pending else ")"
        for step in newest[criteria.keep :]:
            doomed[step.id] = why
    if criteria.dead_for is not None:
        for step in starts:
            created = step.created or recording.created
            used = taken.get(step.id) or created
            if now - created > criteria.dead_for and now - used > criteria.dead_for:
                doomed.setdefault(step.id, f"not taken in {_ago(criteria.dead_for)}")
    out = []
    for start in starts:
        if start.id in doomed and not _inside_doomed(recording, start, doomed):
            size = len(subtree(recording, start.id))
            out.append(Deletion(name, doomed[start.id], branch=start.id, steps=size))
    return out


def _inside_doomed(recording: Recording, start: Step, doomed: dict[int, str]) -> bool:
    """True when an enclosing branch is deleted anyway (one plan line, not two)."""
    parent = start.parent
    while parent is not None:
        if parent in doomed:
            return True
        parent = recording.step(parent).parent
    return False


def branch_starts(recording: Recording) -> list[Step]:
    """The steps that start a branch: every child of a node but its first."""
    out = []
    for step in [None, *(s.id for s in recording.steps)]:
        out.extend(recording.children(step)[1:])
    return out


def subtree(recording: Recording, start: int) -> set[int]:
    ids = {start}
    grew = True
    while grew:
        more = {s.id for s in recording.steps if s.parent in ids and s.id not in ids}
        ids |= more
        grew = bool(more)
    return ids


def _last_taken(store: Store, name: str) -> dict[int, datetime]:
    """For each step id, when a replay last walked through it."""
    taken: dict[int, datetime] = {}
    for entry in store.runs.read(name):
        at = parse_time(entry.get("at"))
        path = entry.get("path")
        if at is None or not isinstance(path, list):
            continue
        for step_id in path:
            if isinstance(step_id, int) and (step_id not in taken or taken[step_id] < at):
                taken[step_id] = at
    return taken


def _branch_time(step: Step, taken: dict[int, datetime]) -> datetime:
    times = [t for t in (step.created, taken.get(step.id)) if t is not None]
    return max(times, default=datetime.min.replace(tzinfo=UTC))


def execute(
    store: Store, plan: Plan, progress: Callable[[str], None] | None = None
) -> list[Deletion]:
    """Carry out `plan`; returns what was deleted. An item that vanished meanwhile is
    skipped, not an error; so is a recording a replay is using (it may be healing)."""
    say = progress or (lambda message: None)
    done: list[Deletion] = []
    for item in plan.recordings:
        with unused(store, item.name) as free:
            if not free:
                say(f"skipped {item.name}: a replay is using it")
                continue
            try:
                store.delete(item.name)
            except RecordingNotFound:
                continue
        say(f"deleted {item.name}")
        done.append(item)
    by_name: dict[str, list[Deletion]] = {}
    for item in plan.branches:
        by_name.setdefault(item.name, []).append(item)
    for name, items in by_name.items():
        with unused(store, name) as free:
            if not free:
                say(f"skipped the branches of {name}: a replay is using it")
                continue
            done.extend(_delete_branches(store, name, items))
        say(f"deleted {len(items)} branch(es) of {name}")
    return done


def _delete_branches(store: Store, name: str, items: Sequence[Deletion]) -> list[Deletion]:
    with store.lock(name):
        try:
            recording = store.load(name)
        except RecordingNotFound:
            return []
        gone: set[int] = set()
        done = []
        for item in items:
            assert item.branch is not None
            if any(s.id == item.branch for s in recording.steps):
                gone |= subtree(recording, item.branch)
                done.append(item)
        if gone:
            recording.steps = [s for s in recording.steps if s.id not in gone]
            store.save(recording)
    return done


def _ago(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
