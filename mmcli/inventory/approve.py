"""`mm approve`: trusting a branch that a heal learned and that ended on a new outcome.

Such a branch is saved *pending*: replay does not follow it unattended (the agent is
called again there, or `--no-agent` stops), because one agent run that ended somewhere
the recording had never been is no proof the task was done right. A person who checked
the result approves it; from then on it is replayed from memory like the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mmcli.errors import MMError, UsageError
from mmcli.store.recordings import Store, validate_name


@dataclass(frozen=True)
class Approved:
    name: str
    branches: list[int]
    """The ids of the first steps of the branches now trusted."""


def approve(store: Store, name: str, branch: int | None = None) -> Approved:
    """Trust the pending branch `branch` (its id: `mm show`'s "branch id N") of recording
    `name` (all of its pending branches when `branch` is None)."""
    validate_name(name)
    with store.lock(name):
        recording = store.load(name)
        pending = [s.id for s in recording.pending_branches()]
        if not pending:
            raise MMError(f"{name!r} has no branch pending approval")
        if branch is not None and branch not in pending:
            raise UsageError(
                f"branch {branch} of {name!r} is not pending; pending: "
                + ", ".join(map(str, pending))
            )
        chosen = pending if branch is None else [branch]
        recording.steps = [
            replace(s, pending=False) if s.id in chosen else s for s in recording.steps
        ]
        store.save(recording)
    return Approved(name, chosen)
