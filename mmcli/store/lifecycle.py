"""One run of a recording, whatever its kind: a screen recording or replay, a model-API
recording or replay, an SDK call. Every engine opens its run here (`begin`) with its
intent, and the store treats every kind the same:

- the target is checked: a new recording must not exist yet (`RecordingExists`), `--add`
  and `--overwrite` exclude each other;
- the recording is marked in use for the run's whole duration (`inuse`): `mm rm`,
  `mm mv`, `mm import --overwrite` and `mm prune` leave it (`free`), and a killed run
  leaves no mark behind;
- a second record of the same name while the first runs is refused: an overwrite starts
  and saves only while no other run has the recording open (`RecordingInUse`), and a new
  recording is saved create-only (of two at once, the one that saves second is refused
  with `RecordingExists`, nothing of it written); runs that add (`--add`, a heal, an SDK
  call) merge under the store's writer lock and all keep what they added;
- the run's history entry is built in one place (`history_entry`: when, which recording,
  the outcome, the kind, how long; the store adds the worker), each engine adding its own
  fields.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from mmcli.errors import RecordingExists, RecordingInUse, StoreError, UsageError
from mmcli.store import spool
from mmcli.store.inuse import WAIT, Mark, marked
from mmcli.store.journal import entry_id
from mmcli.store.recordings import Store, validate_name

Warn = Callable[[str], None]


class Intent(StrEnum):
    NEW = "new"
    """Record a new recording: NAME must not exist."""
    OVERWRITE = "overwrite"
    """Record a recording that replaces NAME's, if no other run has it open."""
    ADD = "add"
    """Record a run merged into NAME's tree (a new recording if there is none)."""
    REPLAY = "replay"
    """Replay NAME; what an agent does meanwhile is added to it (a heal, an SDK call that
    records)."""

    @classmethod
    def of(cls, *, overwrite: bool, add: bool) -> Intent:
        """A record's intent from its `--overwrite` and `--add`."""
        if add and overwrite:
            raise UsageError("--add merges into the recording, --overwrite replaces it: pick one")
        return cls.OVERWRITE if overwrite else cls.ADD if add else cls.NEW


def in_use_error(name: str) -> RecordingInUse:
    return RecordingInUse(
        f"recording {name!r} is being replayed or recorded; try again when it is done"
    )


def check(store: Store, name: str, intent: Intent) -> None:
    """What refuses a run before it starts: a bad name, a new recording's name taken."""
    validate_name(name)
    if intent is Intent.NEW and store.exists(name):
        raise RecordingExists(
            f"recording {name!r} already exists in {store.where}; use --overwrite to replace "
            "it or --add to merge this run into it"
        )


class OpenRun:
    """One run of recording `name`, open in the store (see `begin`)."""

    def __init__(self, store: Store, name: str, intent: Intent, kind: str, mark: Mark) -> None:
        self.store = store
        self.name = name
        self.intent = intent
        self.kind = kind
        self.mark = mark
        self.started = time.monotonic()

    @contextlib.contextmanager
    def saving(self) -> Iterator[None]:
        """Around the write of what the run recorded: an overwrite holds the recording
        alone, or is refused (`RecordingInUse`) while another run has it open."""
        if self.intent is not Intent.OVERWRITE:
            yield
            return
        if not self.mark.alone():
            raise in_use_error(self.name)
        try:
            yield
        finally:
            self.mark.share(0)

    def journal(
        self,
        outcome: str,
        fields: Mapping[str, Any],
        *,
        seconds: float | None = None,
        warn: Warn | None = None,
    ) -> None:
        """The run's line in the history (`seconds`: since the run began, unless given)."""
        took = time.monotonic() - self.started if seconds is None else seconds
        journal(self.store, self.name, self.kind, outcome, took, fields, warn)


@contextlib.contextmanager
def begin(
    store: Store, name: str, intent: Intent, kind: str, *, wait: float = WAIT
) -> Iterator[OpenRun]:
    """Open a run of `name` for the block: checked (`check`), marked in use throughout.
    An overwrite is refused (`RecordingInUse`) while another run has the recording open."""
    check(store, name, intent)
    with marked(store, name) as mark:
        if intent is Intent.OVERWRITE and not mark.alone():
            raise in_use_error(name)
        mark.share(wait)
        yield OpenRun(store, name, intent, kind, mark)


@contextlib.contextmanager
def free(store: Store, name: str) -> Iterator[None]:
    """Hold `name` for the block with no run open on it (runs starting meanwhile wait),
    or refuse (`RecordingInUse`): what removes, renames or replaces a recording."""
    with marked(store, name) as mark:
        if not mark.alone():
            raise in_use_error(name)
        yield


def history_entry(
    name: str, kind: str, outcome: str, seconds: float, fields: Mapping[str, Any]
) -> dict[str, Any]:
    """A run's history line: the fields every kind writes, then the engine's own."""
    return {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "id": entry_id(),
        "recording": name,
        "outcome": str(outcome),
        "kind": kind,
        "seconds": round(seconds, 3),
        **fields,
    }


def journal(
    store: Store,
    name: str,
    kind: str,
    outcome: str,
    seconds: float,
    fields: Mapping[str, Any],
    warn: Warn | None = None,
) -> bool:
    """Append a run's line to NAME's history, after the lines earlier runs here could
    not write (`spool`). The task has been done (or not) by now: a history that cannot be
    written is a warning (`warn`), never a failure a caller would retry; the line is kept
    on this machine for a later run to write. False when it was not written."""
    entry = history_entry(name, kind, outcome, seconds, fields)
    try:
        earlier = spool.waiting(store.where, name)
        for line in earlier:
            store.runs.append(name, line)
        if earlier:
            spool.sent(store.where, name)
        store.runs.append(name, entry)
        return True
    except StoreError as e:
        try:
            kept = f"; kept in {spool.keep(store.where, name, entry)} for the next run here"
        except OSError as why:
            kept = f"; not kept either ({why.strerror or why})"
        if warn is not None:
            warn(f"this run is not in the history: {e}{kept}")
        return False
