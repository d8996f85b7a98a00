"""The store's listing index, `.mm/index.json`: what each document says (its kind, steps,
branches, params) and its replay tally, keyed by its files' size and modification time.

A cache `mm ls` reads instead of parsing thousands of documents (`catalog.summarize`);
`Store.save` notes each recording it saves here. It imports no store: it is handed one,
so that the store can call it (store -> index, never back).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmcli.errors import Outcome
from mmcli.model import Recording
from mmcli.store import storefs
from mmcli.store.storefs import UnsafePath, atomic_write

if TYPE_CHECKING:
    from mmcli.store.recordings import Store

INDEX_VERSION = 3
"""3: `branches` counts branches only, not the trunk."""

Describe = Callable[["Store", str], dict[str, Any]]
"""What a document says, read from it (`catalog` knows each kind of document)."""


def refresh(
    store: Store, name: str, stamps: dict[str, list[int]], entry: object, describe: Describe
) -> dict[str, Any]:
    """The index entry of `name`, re-reading only the parts whose files changed."""
    if not isinstance(entry, dict) or entry.get("doc_stamp") != stamps["doc"]:
        entry = {"doc_stamp": stamps["doc"], "doc": describe(store, name)}
    if entry.get("thumbs_stamp") != stamps["thumbs"]:
        entry = {**entry, "thumbs_stamp": stamps["thumbs"], "thumbs": store.thumbs.size(name)}
    if entry.get("history_stamp") != stamps["history"]:
        entry = {**entry, "history_stamp": stamps["history"], "history": tally(store, name)}
    return entry


def note_saved(store: Store, recording: Recording) -> None:
    """Put a just-saved recording in the index, so listing never has to parse it.

    Best effort: the index is a cache. Two processes saving at once may each drop the
    other's note; the next listing re-reads that one document.
    """
    name = recording.name
    stamps = {
        "doc": stamp(store.path(name)),
        "thumbs": stamp(store.thumbs.folder(name)),
        "history": stamp(store.runs.path(name)),
    }
    entries = read_index(store)
    previous = entries.get(name)
    described = describe_recording(recording)
    entry: dict[str, Any] = {"doc_stamp": stamps["doc"], "doc": described}
    if isinstance(previous, dict) and previous.get("history_stamp") == stamps["history"]:
        entry.update(history_stamp=previous["history_stamp"], history=previous.get("history"))
    entries[name] = refresh(store, name, stamps, entry, lambda _store, _name: described)
    write_index(store, entries)


def stamp(path: Path) -> list[int]:
    try:
        st = path.stat()
    except OSError:
        return [0, 0]
    return [st.st_mtime_ns, st.st_size]


def describe_recording(rec: Recording) -> dict[str, Any]:
    return {
        "kind": "cli",
        "steps": len(rec.steps),
        "branches": rec.branch_count(),
        "pending": len(rec.pending_branches()),
        "params": list(rec.params),
        "created": rec.created.isoformat(),
    }


def tally(store: Store, name: str) -> dict[str, Any]:
    history = store.runs.read(name)
    outcomes = [h.get("outcome") for h in history]
    return {
        "last": str(history[-1].get("at")) if history else None,
        "replays": len(history),
        "from_memory": outcomes.count(Outcome.FROM_MEMORY),
        "healed": outcomes.count(Outcome.HEALED) + outcomes.count(Outcome.HEALED_PENDING),
        "outcome_differs": outcomes.count(Outcome.OUTCOME_DIFFERS),
        "diverged": outcomes.count(Outcome.DIVERGED) + outcomes.count(Outcome.AGENT_FAILED),
    }


def read_index(store: Store) -> dict[str, Any]:
    if not store.local:
        return {}  # a shared store keeps no listing cache: workers would race on it
    try:
        data = json.loads(storefs.read_bytes(store.root, [".mm"], "index.json"))
    except (OSError, ValueError, UnsafePath):
        return {}  # no index yet, a damaged one, or a link: it is only a cache
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def write_index(store: Store, entries: dict[str, Any]) -> None:
    if not store.local:
        return
    data = json.dumps({"version": INDEX_VERSION, "entries": entries}, separators=(",", ":"))
    # A read-only store still lists, just slower; a linked .mm/ is not written through.
    with contextlib.suppress(OSError, UnsafePath):
        store.root.mkdir(parents=True, exist_ok=True)
        with storefs.folder(store.root, [".mm"], create=True):
            atomic_write(store.index_path(), data.encode("utf-8"))
