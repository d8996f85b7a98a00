"""A replay's line in the recording's history."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from mmcli.errors import StoreError
from mmcli.replay.report import ReplayReport
from mmcli.store.recordings import Store


def journal(store: Store, report: ReplayReport, progress: Callable[[str], None]) -> None:
    """Append the run to the history. The task has been done (or not) by now: a history
    that cannot be written is a warning, not a failure a caller would retry."""
    try:
        store.append_history(
            report.name,
            {
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
                "recording": report.name,
                "outcome": str(report.outcome),
                "agent_runs": int(report.agent_returncode is not None),
                "steps_replayed": report.steps_replayed,
                "agent_steps": report.agent_steps,
                "divergence": report.divergence.as_json() if report.divergence else None,
                "path": report.path,
                "branch": report.branch,
                "seconds": round(report.seconds, 3),
            },
        )
    except StoreError as e:
        progress(f"warning: this replay is not in the history: {e}")
