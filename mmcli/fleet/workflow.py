"""A row of a batch as a Temporal workflow: one activity, `mm-replay-row`, run by a worker
polling the recording's task queue (`mm-<recording>`).

The workflow's ID is `mm-<batch>-<row>`, started with the reject-duplicate policy: a row
runs once, however often its batch is submitted. The activity may be retried (a worker
lost before claiming the committing step: the row runs again elsewhere; one lost after
claiming: the retry finds the claim and reports "unknown"). Workers heartbeat every second;
a worker that stops heartbeating (SIGKILL, a lost machine) is given up after
`HEARTBEAT_TIMEOUT`.

This module imports nothing of `mm` but itself: Temporal's workflow sandbox loads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

ACTIVITY = "mm-replay-row"
HEARTBEAT_TIMEOUT = timedelta(seconds=10)
ROW_TIMEOUT = timedelta(hours=2)
"""The longest one row may take on a worker (its replay, the agent, `--before-each`)."""
ATTEMPTS = 3


@dataclass
class RowTask:
    batch: str
    recording: str
    row: int
    """1-based, as in the CSV file (the header is row 0)."""
    params: dict[str, str] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)
    """The CSV's columns in its order (`params` travels as JSON with its keys sorted)."""


def task_queue(recording: str) -> str:
    return f"mm-{recording}"


def row_id(batch: str, row: int) -> str:
    return f"mm-{batch}-{row}"


@workflow.defn(name="mm-row")
class RowWorkflow:
    @workflow.run
    async def run(self, task: RowTask) -> dict[str, Any]:
        result: dict[str, Any] = await workflow.execute_activity(
            ACTIVITY,
            task,
            task_queue=task_queue(task.recording),
            start_to_close_timeout=ROW_TIMEOUT,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=1), maximum_attempts=ATTEMPTS
            ),
        )
        return result
