"""The claim on a row's committing step: a create-only object `.mm/claims/<batch>/<row>`
in the store, written just before the step that commits (the submit) and before a
hand-over to the agent (which may submit).

Whoever writes it first may act; a worker that finds it already there acts on nothing
more, and the row is "claimed, outcome unknown": a worker that claimed it may have
submitted and died before saying so. A crash before the claim leaves no claim, and the
row can safely run again elsewhere.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from mmcli.errors import MMError, StoreError
from mmcli.store.objects import Exists, Objects


class ClaimTaken(MMError):
    """The row's committing step was claimed before this attempt reached it."""


def claim_key(batch: str, row: int) -> str:
    return f".mm/claims/{batch}/{row}"


def held(objects: Objects, batch: str, row: int) -> dict[str, Any] | None:
    """The row's claim (`worker`, `at`, `attempt`), or None when nobody claimed it."""
    try:
        data = objects.get(claim_key(batch, row), limit=4096).data
    except FileNotFoundError:
        return None
    try:
        claim = json.loads(data)
    except ValueError:
        claim = None
    if not isinstance(claim, dict):
        raise StoreError(f"{objects.url(claim_key(batch, row))}: not a claim")
    return claim


def describe(claim: dict[str, Any]) -> str:
    return f"claimed by {claim.get('worker', '?')} at {claim.get('at', '?')}"


class Claim:
    """The hook a replay calls before committing (`ReplayOptions.before_commit`): the first
    call writes the claim; later calls of the same attempt pass; a claim found already
    there raises `ClaimTaken` (and is kept in `found`)."""

    def __init__(self, objects: Objects, batch: str, row: int, worker: str, attempt: int) -> None:
        self.objects = objects
        self.batch = batch
        self.row = row
        self.worker = worker
        self.attempt = attempt
        self.taken = False
        self.found: dict[str, Any] | None = None

    def __call__(self) -> None:
        if self.taken:
            return
        body = {
            "worker": self.worker,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "batch": self.batch,
            "row": self.row,
            "attempt": self.attempt,
        }
        try:
            self.objects.put(
                claim_key(self.batch, self.row), json.dumps(body).encode(), create=True
            )
        except Exists:
            self.found = held(self.objects, self.batch, self.row) or {}
            raise ClaimTaken(
                f"row {self.row} of batch {self.batch} was {describe(self.found)}: "
                "not acted on; its outcome is unknown"
            ) from None
        self.taken = True
