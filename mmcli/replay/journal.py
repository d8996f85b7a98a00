"""A replay's line in the recording's history: the replay's own fields, journaled through
the store's one run lifecycle (`mmcli.store.lifecycle.journal`)."""

from __future__ import annotations

from collections.abc import Callable

from mmcli.model import SCREEN_KIND
from mmcli.replay.report import ReplayReport
from mmcli.store import lifecycle
from mmcli.store.recordings import Store


def journal(store: Store, report: ReplayReport, progress: Callable[[str], None]) -> bool:
    """Append the run to the history; one that cannot be written is a warning, and the
    line is kept on this machine for a later run (`lifecycle.journal`). False then."""
    fields = {
        "agent_runs": int(report.agent_returncode is not None),
        "steps_replayed": report.steps_replayed,
        "agent_steps": report.agent_steps,
        "divergence": report.divergence.as_json() if report.divergence else None,
        "path": report.path,
        "branch": report.branch,
    }
    return lifecycle.journal(
        store,
        report.name,
        SCREEN_KIND,
        report.outcome,
        report.seconds,
        fields,
        warn=lambda message: progress(f"warning: {message}"),
    )
