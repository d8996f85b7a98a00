"""A batch across a fleet: its manifest in the store, its rows submitted to Temporal, its
progress read back.

The manifest is a create-only object `.mm/batches/<batch>.json` (the recording, the rows'
values, when it was submitted): submitting the same batch again finds it and starts only
the rows not started yet (each row's workflow ID is `mm-<batch>-<row>`, reject-duplicate);
a batch of that name with other rows is refused. Secrets never travel in a batch (the
engine keeps every workflow's input): a worker takes them from its own environment.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mmcli.errors import MMError, Outcome, UsageError
from mmcli.fleet.claims import describe, held
from mmcli.store.objects import Exists, Objects
from mmcli.store.recordings import Store

BATCH_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
STATES = ("done", "healed", "diverged", "failed", "unknown", "pending")
"""How a row stands: done (from memory), healed (by the agent), diverged (no agent
allowed), failed (nothing committed: the agent failed, an error), unknown (claimed, or
performed without the outcome seen: a person must check), pending (not finished yet)."""

_STATE_OF = {
    str(Outcome.FROM_MEMORY): "done",
    str(Outcome.RECORDED): "done",
    str(Outcome.NOT_SAVED): "done",  # the task was done; only what was learned is lost
    str(Outcome.HEALED): "healed",
    str(Outcome.DIVERGED): "diverged",
    str(Outcome.OUTCOME_DIFFERS): "unknown",
    str(Outcome.HEALED_PENDING): "unknown",
    "claimed": "unknown",
}


def manifest_key(batch: str) -> str:
    return f".mm/batches/{batch}.json"


def check_batch_name(batch: str) -> str:
    if not BATCH_NAME.fullmatch(batch):
        raise UsageError(f"invalid batch id {batch!r}: use letters, digits, '.', '_', '-'")
    return batch


def default_batch(recording: str, rows: Sequence[dict[str, str]]) -> str:
    """The same rows of the same recording make the same batch: a resubmit is a no-op."""
    digest = hashlib.sha256(json.dumps([recording, list(rows)]).encode()).hexdigest()
    return f"{recording}-{digest[:10]}"


@dataclass(frozen=True)
class Manifest:
    batch: str
    recording: str
    rows: list[dict[str, str]]
    submitted: str

    def as_json(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "recording": self.recording,
            "rows": self.rows,
            "submitted": self.submitted,
        }


def write_manifest(
    objects: Objects, batch: str, recording: str, rows: list[dict[str, str]]
) -> bool:
    """Write the batch's manifest; False when the same batch is already there (a resubmit).
    A batch of that name with another recording or other rows is a usage error."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    manifest = Manifest(batch, recording, rows, now)
    try:
        objects.put(manifest_key(batch), json.dumps(manifest.as_json()).encode(), create=True)
        return True
    except Exists:
        there = read_manifest(objects, batch)
        if there.recording != recording or there.rows != rows:
            raise UsageError(
                f"batch {batch!r} was already submitted ({there.submitted}) with other rows "
                "or another recording; give another --id"
            ) from None
        return False


def read_manifest(objects: Objects, batch: str) -> Manifest:
    check_batch_name(batch)
    try:
        data = objects.get(manifest_key(batch)).data
    except FileNotFoundError:
        raise MMError(f"no batch {batch!r} in {objects.where}") from None
    try:
        d = json.loads(data)
        return Manifest(d["batch"], d["recording"], list(d["rows"]), d["submitted"])
    except (ValueError, KeyError, TypeError):
        raise MMError(f"{objects.url(manifest_key(batch))}: not a batch manifest") from None


def connect(address: str, namespace: str, identity: str | None = None) -> Any:
    """A Temporal client (a coroutine); a one-line error when the server cannot be reached."""
    from temporalio.client import Client

    async def connected() -> Any:
        try:
            if identity is None:
                return await Client.connect(address, namespace=namespace)
            return await Client.connect(address, namespace=namespace, identity=identity)
        except Exception as e:  # the SDK raises plain RuntimeErrors for a refused connection
            raise MMError(f"cannot reach Temporal at {address}: {e}") from None

    return connected()


def rows_for(
    store: Store,
    name: str,
    rows: Sequence[dict[str, str]],
    source: str,
    say: Callable[[str], None],
) -> list[dict[str, str]]:
    """The CSV's rows as a batch of screen recording `name` carries them: each row's
    params only (checked as `mm replay --params-file` checks them). A secret column is
    refused: secrets never travel in a batch; each worker is given them."""
    from pathlib import Path

    from mmcli.errors import WrongKind
    from mmcli.params import Values
    from mmcli.replay.batch import check_columns

    if not store.exists(name):
        raise store.not_found(name)
    try:
        recording = store.load(name)
    except WrongKind:
        raise UsageError(
            f"{name!r} is no screen recording: batches replay screen recordings"
        ) from None
    secret_columns = [c for c in rows[0] if c in recording.secrets]
    if secret_columns:
        raise UsageError(
            f"--params-file {source}: column {secret_columns[0]!r} is a secret of "
            f"{name!r}: secrets never travel in a batch; give it to each worker "
            f"(mm worker --secret {secret_columns[0]} with MM_SECRET_{secret_columns[0].upper()})"
        )
    hidden = Values(secrets=dict.fromkeys(recording.secrets, ""))
    check_columns(recording, rows, hidden, Path(source), say)
    return [{k: v for k, v in row.items() if k in recording.params} for row in rows]


@dataclass(frozen=True)
class Submitted:
    batch: str
    started: int
    already: int
    new_manifest: bool


def submit(
    objects: Objects,
    address: str,
    namespace: str,
    batch: str,
    recording: str,
    rows: list[dict[str, str]],
) -> Submitted:
    """Write the manifest, then start one workflow per row; rows already started (a
    resubmit) are left as they are."""
    from temporalio.common import WorkflowIDReusePolicy
    from temporalio.exceptions import WorkflowAlreadyStartedError

    from mmcli.fleet.workflow import RowTask, RowWorkflow, row_id, task_queue

    check_batch_name(batch)
    new = write_manifest(objects, batch, recording, rows)

    async def start_all() -> tuple[int, int]:
        client = await connect(address, namespace)
        started = already = 0
        for number, row in enumerate(rows, start=1):
            try:
                await client.start_workflow(
                    RowWorkflow.run,
                    RowTask(batch, recording, number, row, list(row)),
                    id=row_id(batch, number),
                    task_queue=task_queue(recording),
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                )
                started += 1
            except WorkflowAlreadyStartedError:
                already += 1
        return started, already

    started, already = asyncio.run(start_all())
    return Submitted(batch, started, already, new)


@dataclass(frozen=True)
class RowState:
    row: int
    params: dict[str, str]
    state: str
    outcome: str = ""
    worker: str = ""
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "params": self.params,
            "state": self.state,
            "outcome": self.outcome,
            "worker": self.worker,
            "detail": self.detail,
        }


def state_of(outcome: str) -> str:
    """A finished row's state from its outcome; any other outcome is a failure."""
    return _STATE_OF.get(outcome, "failed")


def counts(rows: Sequence[RowState]) -> dict[str, int]:
    return {s: sum(1 for r in rows if r.state == s) for s in STATES}


def status(
    objects: Objects,
    address: str,
    namespace: str,
    batch: str,
    wait: bool = False,
    on_poll: Callable[[list[RowState]], None] | None = None,
) -> tuple[Manifest, list[RowState]]:
    """Each row's state, from its workflow and its claim; with `wait`, polled until no row
    is pending."""
    manifest = read_manifest(objects, batch)

    async def look() -> list[RowState]:
        client = await connect(address, namespace)
        while True:
            states = [
                await _row_state(client, objects, manifest, number, row)
                for number, row in enumerate(manifest.rows, start=1)
            ]
            if on_poll:
                on_poll(states)
            if not wait or not any(s.state == "pending" for s in states):
                return states
            await asyncio.sleep(1.0)

    return manifest, asyncio.run(look())


async def _row_state(
    client: Any, objects: Objects, manifest: Manifest, number: int, row: dict[str, str]
) -> RowState:
    from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
    from temporalio.service import RPCError, RPCStatusCode

    from mmcli.fleet.workflow import row_id

    handle = client.get_workflow_handle(row_id(manifest.batch, number))
    try:
        described = await handle.describe()
    except RPCError as e:
        if e.status is RPCStatusCode.NOT_FOUND:
            return RowState(number, row, "pending", detail="not started: submit the batch again")
        raise MMError(f"Temporal: {e}") from None
    if described.status is WorkflowExecutionStatus.RUNNING:
        return RowState(number, row, "pending")
    if described.status is WorkflowExecutionStatus.COMPLETED:
        result = await handle.result()
        outcome = str(result.get("outcome", ""))
        return RowState(
            number,
            row,
            state_of(outcome),
            outcome,
            str(result.get("worker", "")),
            str(result.get("detail", "")),
        )
    try:
        await handle.result()
        why = str(described.status.name).lower()
    except WorkflowFailureError as e:
        cause: BaseException = e
        while getattr(cause, "cause", None) is not None:
            cause = getattr(cause, "cause")  # noqa: B009 - a chain of Temporal failures
        why = str(cause)
    claim = held(objects, manifest.batch, number)
    if claim is not None:  # it may have been submitted before its worker was lost
        detail = f"{describe(claim)}, outcome unknown: check the app ({why})"
        return RowState(number, row, "unknown", "claimed", str(claim.get("worker", "")), detail)
    return RowState(number, row, "failed", "lost", "", why)
