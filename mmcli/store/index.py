"""The store's listing index, `.mm/index.json`: what each document says (its kind, steps,
branches, params) and its replay tally, keyed by its files' size and modification time.

A cache `mm ls` reads instead of parsing thousands of documents (`catalog.summarize`);
`Store.save` notes each recording it saves here. It imports no store: it is handed one,
so that the store can call it (store -> index, never back).
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmcli.errors import Outcome
from mmcli.model import Recording
from mmcli.store import storefs
from mmcli.store.names import NAME_PATTERN, SUFFIX
from mmcli.store.storefs import UnsafePath, atomic_write

if TYPE_CHECKING:
    from mmcli.store.objects import Info
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
    if store.folder is None:
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
    if store.folder is None:
        return
    data = json.dumps({"version": INDEX_VERSION, "entries": entries}, separators=(",", ":"))
    # A read-only store still lists, just slower; a linked .mm/ is not written through.
    with contextlib.suppress(OSError, UnsafePath):
        store.root.mkdir(parents=True, exist_ok=True)
        with storefs.folder(store.root, [".mm"], create=True):
            atomic_write(store.index_path(), data.encode("utf-8"))


def stamps(store: Store) -> dict[str, dict[str, list[int]]]:
    """Each document's stamps (`refresh`): for a local folder, (mtime_ns, size) of the
    document, its thumbnail folder and its history, from two directory scans (thousands
    of recordings: no per-file path handling); for a bucket, `_object_stamps`."""

    def scan(folder: Path) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        with contextlib.suppress(OSError), os.scandir(folder) as it:
            for e in it:
                with contextlib.suppress(OSError):
                    st = e.stat()
                    found[e.name] = [st.st_mtime_ns, st.st_size]
        return found

    if store.folder is None:
        return _object_stamps(store)
    top = scan(store.root)
    history = scan(store.runs.path("x").parent)
    none = [0, 0]
    out = {}
    for file_name in sorted(top):
        name = file_name[: -len(SUFFIX)]
        if file_name.endswith(SUFFIX) and NAME_PATTERN.fullmatch(name):
            out[name] = {
                "doc": top[file_name],
                "thumbs": top.get(name, none),
                "history": history.get(name + ".jsonl", none),
            }
    return out


def _object_stamps(store: Store) -> dict[str, dict[str, list[int]]]:
    """The same stamps for a store in a bucket, from one listing: a version tag's digest
    and a size for each document; a digest of the tags and the total size for its
    thumbnails and for its history entries."""

    def digest(tags: list[str]) -> int:
        return zlib.crc32("\n".join(tags).encode())

    docs: dict[str, list[int]] = {}
    parts: dict[tuple[str, str], list[Info]] = {}
    for info in store.objects.listing():
        key = info.key
        if "/" not in key:
            name = key[: -len(SUFFIX)]
            if key.endswith(SUFFIX) and NAME_PATTERN.fullmatch(name):
                docs[name] = [digest([info.tag]), info.size]
        elif key.startswith(".mm/history/"):
            parts.setdefault(("history", key.split("/")[2]), []).append(info)
        else:
            parts.setdefault(("thumbs", key.split("/")[0]), []).append(info)

    def stamp(what: str, name: str) -> list[int]:
        infos = parts.get((what, name), [])
        return [digest([i.tag for i in infos]), sum(i.size for i in infos)]

    return {
        name: {"doc": doc, "thumbs": stamp("thumbs", name), "history": stamp("history", name)}
        for name, doc in sorted(docs.items())
    }
