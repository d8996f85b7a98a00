"""What `mm ls` and `mm show` report about recordings (no rendering here)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mmcli.model import Recording, Step
from mmcli.store import Store


@dataclass(frozen=True)
class Summary:
    name: str
    steps: int
    branches: int
    params: list[str]
    created: datetime | None
    last_replayed: str | None
    replays: int
    from_memory: int
    healed: int
    diverged: int
    size: int
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "steps": self.steps,
            "branches": self.branches,
            "params": self.params,
            "created": self.created.isoformat() if self.created else None,
            "last_replayed": self.last_replayed,
            "replays": self.replays,
            "from_memory": self.from_memory,
            "healed": self.healed,
            "diverged": self.diverged,
            "size": self.size,
            "error": self.error,
        }


def summarize(store: Store) -> list[Summary]:
    out = []
    for entry in store.entries():
        history = store.history(entry.name)
        outcomes = [h.get("outcome") for h in history]
        rec = entry.recording
        out.append(
            Summary(
                name=entry.name,
                steps=len(rec.steps) if rec else 0,
                branches=rec.branch_count() if rec else 0,
                params=list(rec.params) if rec else [],
                created=rec.created if rec else None,
                last_replayed=str(history[-1].get("at")) if history else None,
                replays=len(history),
                from_memory=outcomes.count("from-memory"),
                healed=outcomes.count("healed"),
                diverged=outcomes.count("diverged") + outcomes.count("agent-failed"),
                size=entry.size,
                error=entry.error,
            )
        )
    return out


@dataclass(frozen=True)
class TreeLine:
    depth: int
    """Position on the path from the root (0-based): the step number replay reports."""
    indent: int
    """Nesting level: 0 on the trunk, +1 for each branch taken off it."""
    step: Step
    branch_start: bool


def tree(recording: Recording) -> Iterator[TreeLine]:
    """The steps in display order: each path depth-first, branches after the trunk."""

    def walk(parent: int | None, depth: int, indent: int) -> Iterator[TreeLine]:
        kids = recording.children(parent)
        if not kids:
            return
        first, *others = kids
        yield TreeLine(depth, indent, first, False)
        yield from walk(first.id, depth + 1, indent)
        for other in others:
            yield TreeLine(depth, indent + 1, other, True)
            yield from walk(other.id, depth + 1, indent + 1)

    yield from walk(None, 0, 0)


def recent_divergences(store: Store, name: str, limit: int = 3) -> list[dict[str, Any]]:
    """The last replays that diverged: when, at which step, why, and the live and recorded
    screens (file paths beside the recording)."""
    found = []
    for entry in reversed(store.history(name)):
        d = entry.get("divergence")
        if not isinstance(d, dict):
            continue
        files = {}
        for key in ("thumbnail", "recorded"):
            if isinstance(d.get(key), str):
                files[key] = str(store.thumbs_dir(name) / d[key])
        found.append(
            {
                "at": entry.get("at"),
                "outcome": entry.get("outcome"),
                "step": d.get("step"),
                "reason": d.get("reason"),
                "live": files.get("thumbnail"),
                "recorded": files.get("recorded"),
            }
        )
        if len(found) == limit:
            break
    return found
