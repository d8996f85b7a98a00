"""The kinds of document a store holds, in one table: for each, what `mm` calls it, how it
is parsed (with its own version check and upgrades), written back, counted, and
summarized for `mm ls`. A document says its kind in its top-level `kind` line
(`store.recordings.kind_of`); `mm rm`, `mv`, `export`, `import` (manage) and `mm ls`
(catalog) look the kind up here instead of testing for each one.

- "cli": a screen recording (`mm record`), text by `store.codec`;
- "sdk": a Python SDK document (`mmcli.Engine`), text by `sdk.document`;
- "llm": a model-API recording (`mm record --llm`), text by `llm.document`.

The SDK's and the model API's modules are imported when a document of their kind is met.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mmcli.errors import RecordingCorrupt
from mmcli.store import codec
from mmcli.store.index import describe_recording
from mmcli.store.recordings import Store


@dataclass(frozen=True)
class Kind:
    name: str
    word: str
    """What `mm` calls such a document in a sentence: "a screen recording"."""
    loads: Callable[[str, str], Any]
    """(text, source) -> the document, validated, upgraded to the current format version;
    `RecordingCorrupt` naming `source` when it cannot be."""
    dumps: Callable[[Any], str]
    steps: Callable[[Any], int]
    thumbnails: Callable[[Any], set[str]]
    """The file names in NAME/ the document refers to."""
    describe: Callable[[Store, str], dict[str, Any]]
    """What `mm ls` shows of the store's document NAME, JSON-ready (for the index)."""
    branches: bool = False
    """Its branches are steps of one tree that `mm rm --branch` and `mm prune --keep /
    --dead-branches` remove one at a time (screen recordings)."""
    needs_thumbnails: bool = False
    """Its screens are compared against its thumbnails: an archive missing one is refused
    (a screen recording checks a step whose thumbnail is missing with the coarse grid)."""


def _sdk_loads(text: str, source: str) -> Any:
    from mmcli.sdk import document

    return document.loads(text, source)


def _sdk_dumps(doc: Any) -> str:
    from mmcli.sdk import document

    return document.dumps(doc)


def _sdk_describe(store: Store, name: str) -> dict[str, Any]:
    from mmcli.sdk.document import summary

    info = summary((store, name))
    return {
        "kind": "sdk",
        "steps": int(info.get("steps", 0)),
        "branches": int(info.get("branches", 0)),
        "params": list(info.get("params", [])),
        "created": _iso(info.get("created")),
        "last_used": _iso(info.get("last_used")),
    }


def _llm_loads(text: str, source: str) -> Any:
    from mmcli.llm import document

    return document.loads(text, source)


def _llm_dumps(rec: Any) -> str:
    from mmcli.llm import document

    return document.dumps(rec)


def _llm_describe(store: Store, name: str) -> dict[str, Any]:
    from mmcli.llm.document import summary

    return summary(store, name)


def _iso(value: object) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


KINDS = {
    kind.name: kind
    for kind in (
        Kind(
            "cli",
            "a screen recording",
            codec.loads,
            codec.dumps,
            steps=lambda rec: len(rec.steps),
            thumbnails=lambda rec: rec.thumbnail_names(),
            describe=lambda store, name: describe_recording(store.load(name)),
            branches=True,
        ),
        Kind(
            "sdk",
            "a Python SDK document",
            _sdk_loads,
            _sdk_dumps,
            steps=lambda doc: sum(len(t.steps) for t in doc.trajectories),
            thumbnails=lambda doc: set(),
            describe=_sdk_describe,
        ),
        Kind(
            "llm",
            "a model-API recording",
            _llm_loads,
            _llm_dumps,
            steps=lambda rec: len(rec.tree.nodes),
            thumbnails=lambda rec: {s.thumbnail for s in rec.tree.screens.values()},
            describe=_llm_describe,
            needs_thumbnails=True,
        ),
    )
}


def kind_named(kind: str, source: str) -> Kind:
    """The kind a document says it is; `RecordingCorrupt` for one `mm` does not know."""
    try:
        return KINDS[kind]
    except KeyError:
        raise RecordingCorrupt(f"{source}: unknown kind {kind!r}; not an mm document") from None


def kind_of_stored(store: Store, name: str) -> Kind:
    """The kind of the store's document NAME (read from its head); `RecordingCorrupt`
    naming the file for one `mm` does not know."""
    return kind_named(store.kind(name), store.locate(name))
