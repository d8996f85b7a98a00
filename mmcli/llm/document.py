"""The stored form of a model-API recording: one TOML document beside the CLI recordings.

    kind = "llm"                  tells it from a CLI recording (no `kind`) or an SDK one
    format_version = 2
    name = "task"
    created = 2026-01-01T12:00:00Z
    command = ["python", "agent.py"]
    params = ["name"]

    [setups]                      each request's keyed fields (model, system prompt, tools,
                                  ...), by digest (JSON text)
    3f2a9c... = '{"model": "...", "system": "...", "tools": [...]}'

    [screens.s-1a2b3c4d]          a screenshot: its fingerprint; its thumbnail beside
    thumbnail = "s-1a2b3c4d.png"  the document, in NAME/; the SHA-256 of its bytes (the
    digest = "9c1e..."            very same image is a match without decoding it)
    fingerprint = { size = [1280, 800], grid = "16x9", ... }

    [[exchanges]]                 one request answered by the model
    id = 1
    parent = 0                    0: the first exchange of a conversation
    api = "anthropic"             or "openai"
    setup = "3f2a9c..."
    created = 2026-01-01T12:00:00Z
    streamed = true
    prompt = '[...]'              the turns added since the parent's answer (JSON text:
    answer = '{...}'              TOML has no null), ids as #1, #2..., params as {{key}}

Headers (API keys) are never part of it; a secret's value is a `{{key}}` placeholder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import tomli_w

from mmcli.errors import RecordingCorrupt, RecordingExists
from mmcli.llm.screens import Screen, read_thumbnail
from mmcli.llm.tree import Node, Tree
from mmcli.store.codec import fingerprint_doc, fingerprint_from_doc
from mmcli.store.recordings import Store
from mmcli.store.storefs import UnsafePath
from mmcli.store.validate import read_toml, upgraded

KIND = "llm"
FORMAT_VERSION = 2
"""2: a literal `{{` in the agent's command is kept as `LITERAL_BRACES`, as in prompts and
answers, so only the placeholders `mm` wrote there are filled at a replay. A version-1
document reads as before: every `{{key}}` in its command is taken for a placeholder."""


def _from_v1(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "format_version": 2}


UPGRADES = {1: _from_v1}
FILE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\.png")
SCREEN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_EXCHANGES = 100_000
MAX_THUMBNAIL = 16 * 1024 * 1024
APIS = ("anthropic", "openai")


@dataclass
class LLMRecording:
    name: str
    created: datetime
    command: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    tree: Tree = field(default_factory=Tree)
    cwd: str | None = None
    """The absolute folder the command was recorded in, where replay runs it (optional:
    None runs it in the caller's folder, as a file from before it was kept)."""


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def dumps(rec: LLMRecording) -> str:
    tree = rec.tree
    where = {"cwd": rec.cwd} if rec.cwd is not None else {}
    return tomli_w.dumps(
        {
            "kind": KIND,
            "format_version": FORMAT_VERSION,
            "name": rec.name,
            "created": rec.created,
            "command": list(rec.command),
            **where,
            "params": sorted(rec.params),
            "setups": {k: _json(v) for k, v in sorted(tree.setups.items())},
            "screens": {sid: _screen_doc(s) for sid, s in sorted(tree.screens.items())},
            "exchanges": [
                {
                    "id": n.id,
                    "parent": n.parent or 0,
                    "api": n.api,
                    "setup": n.setup,
                    "created": n.created,
                    "streamed": n.streamed,
                    "prompt": _json(n.prompt),
                    "answer": _json(n.answer),
                }
                for n in sorted(tree.nodes.values(), key=lambda n: n.id)
            ],
        }
    )


def _screen_doc(screen: Screen) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "thumbnail": screen.thumbnail,
        "fingerprint": fingerprint_doc(screen.fingerprint),
    }
    if screen.digest:
        doc["digest"] = screen.digest
    if screen.coarse:
        doc["coarse"] = True
    return doc


Thumbs = Callable[[str], bytes]
"""A reader of a recording's thumbnails by file name (`FileNotFoundError` when missing)."""


def loads(text: str, source: str, thumbs: Thumbs | None = None) -> LLMRecording:
    """Parse a document; `RecordingCorrupt` names the file and the problem. With `thumbs`,
    each screen's thumbnail is read through it (what replay compares against)."""
    doc = read_toml(text, source)
    if doc.get("kind") != KIND:
        raise RecordingCorrupt(f"{source}: not a model-API recording (kind = {KIND!r})")
    doc = upgraded(doc, source, FORMAT_VERSION, UPGRADES)
    try:
        return _recording(doc, thumbs)
    except RecordingCorrupt as e:
        raise RecordingCorrupt(f"{source}: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as e:
        problem = f"missing field {e}" if isinstance(e, KeyError) else str(e) or type(e).__name__
        raise RecordingCorrupt(f"{source}: {problem}") from None


def _recording(doc: dict[str, Any], thumbs: Thumbs | None) -> LLMRecording:
    created = doc["created"]
    if not isinstance(created, datetime):
        raise ValueError("created is not a date-time")
    command = doc.get("command", [])
    params = doc.get("params", [])
    if not all(isinstance(c, str) for c in command) or not all(isinstance(p, str) for p in params):
        raise ValueError("command and params must be lists of strings")
    cwd = doc.get("cwd")
    if cwd is not None and not (isinstance(cwd, str) and cwd.startswith("/") and "\0" not in cwd):
        raise ValueError("cwd must be an absolute path")
    tree = Tree()
    for digest, text in _table(doc.get("setups", {}), "setups").items():
        tree.setups[str(digest)] = _parse_json(text, f"setups.{digest}")
    for sid, item in _table(doc.get("screens", {}), "screens").items():
        tree.screens[str(sid)] = _screen(str(sid), _table(item, f"screens.{sid}"), thumbs)
    exchanges = doc.get("exchanges", [])
    if not isinstance(exchanges, list) or len(exchanges) > MAX_EXCHANGES:
        raise ValueError(f"exchanges must be a list of at most {MAX_EXCHANGES}")
    for i, item in enumerate(exchanges):
        node = _node(_table(item, f"exchanges[{i}]"), f"exchanges[{i}]")
        if node.id in tree.nodes:
            raise ValueError(f"exchanges[{i}].id {node.id} is used twice")
        if node.parent is not None and node.parent not in tree.nodes:
            raise ValueError(f"exchanges[{i}].parent {node.parent} is not an earlier exchange")
        tree.nodes[node.id] = node
    return LLMRecording(str(doc["name"]), created, list(command), list(params), tree, cwd)


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} is not a table")
    return value


def _parse_json(text: Any, where: str) -> Any:
    if not isinstance(text, str):
        raise ValueError(f"{where} is not a string")
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(f"{where} is not valid JSON") from None


def _screen(sid: str, item: dict[str, Any], thumbs: Thumbs | None) -> Screen:
    if not SCREEN_ID.fullmatch(sid):
        raise ValueError(f"screens: invalid screen id {sid[:40]!r}")
    name = item["thumbnail"]
    if not isinstance(name, str) or not FILE_NAME.fullmatch(name):
        raise ValueError(f"screens.{sid}.thumbnail: not a plain .png file name")
    fingerprint = fingerprint_from_doc(item["fingerprint"], f"screens.{sid}.fingerprint")
    reference = None
    if thumbs is not None:
        try:
            data = thumbs(name)
            if len(data) > MAX_THUMBNAIL:
                raise ValueError(f"screens.{sid}: thumbnail {name} is a link or too large")
            reference = read_thumbnail(data)
        except UnsafePath:
            raise ValueError(f"screens.{sid}: thumbnail {name} is a link or too large") from None
        except FileNotFoundError:
            raise ValueError(f"screens.{sid}: thumbnail {name} is missing") from None
        except OSError as e:
            raise ValueError(f"screens.{sid}: thumbnail {name} unreadable ({e})") from None
    digest = item.get("digest", "")
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{0,64}", digest):
        raise ValueError(f"screens.{sid}.digest must be a SHA-256 in hex")
    coarse = item.get("coarse", False)
    if not isinstance(coarse, bool):
        raise ValueError(f"screens.{sid}.coarse must be true or false")
    return Screen(fingerprint, name, reference, digest=digest, coarse=coarse)


def _node(item: dict[str, Any], where: str) -> Node:
    nid, parent = item["id"], item.get("parent", 0)
    for key, value in (("id", nid), ("parent", parent)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{where}.{key} must be a non-negative integer")
    if nid == 0:
        raise ValueError(f"{where}.id must be positive")
    api = item["api"]
    if api not in APIS:
        raise ValueError(f"{where}.api must be one of {', '.join(APIS)}")
    created = item["created"]
    if not isinstance(created, datetime):
        raise ValueError(f"{where}.created is not a date-time")
    prompt = _parse_json(item["prompt"], f"{where}.prompt")
    answer = _parse_json(item["answer"], f"{where}.answer")
    if not isinstance(prompt, list):
        raise ValueError(f"{where}.prompt must be a list of turns")
    if not isinstance(answer, dict) or not isinstance(answer.get("message"), dict):
        raise ValueError(f"{where}.answer must hold the model's message")
    return Node(
        nid,
        parent or None,
        api,
        str(item["setup"]),
        prompt,
        answer,
        created,
        bool(item.get("streamed", False)),
    )


# ---- the store ---------------------------------------------------------------------------


def load(store: Store, name: str) -> LLMRecording:
    where = store.locate(name)
    rec = loads(store.read_text(name), where, store.thumbs.reader(name, MAX_THUMBNAIL))
    if rec.name != name:
        raise RecordingCorrupt(f"{where}: holds recording {rec.name!r}, not {name!r}")
    return rec


def save(
    store: Store,
    rec: LLMRecording,
    new: list[int],
    *,
    overwrite: bool = False,
    create: bool = False,
) -> LLMRecording:
    """Write `rec`'s exchanges `new` (ids in `rec.tree`) to the store: into the document
    already there (appended, ids renumbered after its own), or as a new document. With
    `create`, a document already there (another run's, saved meanwhile) is refused.

    Under the store's lock for the name; thumbnails first, then the TOML atomically, so
    a crash leaves the previous document whole. Returns what was written.
    """
    name = rec.name
    with store.lock(name):
        base: LLMRecording | None = None
        if store.exists(name) and not overwrite:
            if create:
                raise RecordingExists(
                    f"recording {name!r} already exists in {store.where} (saved by another "
                    "run meanwhile); use --overwrite to replace it or --add to merge this "
                    "run into it"
                )
            if store.kind(name) != KIND:
                raise RecordingExists(
                    f"recording {name!r} already exists in {store.where} and is not a "
                    "model-API recording; use --overwrite to replace it"
                )
            base = load(store, name)
        out = base or LLMRecording(name, rec.created, rec.command, [], Tree(), rec.cwd)
        renumber: dict[int, int] = {}
        thumbnails: dict[str, bytes] = {}
        for old_id in new:
            node = rec.tree.nodes[old_id]
            fresh = out.tree.next_id()
            renumber[old_id] = fresh
            parent = renumber.get(node.parent, node.parent) if node.parent is not None else None
            out.tree.nodes[fresh] = Node(
                fresh,
                parent,
                node.api,
                node.setup,
                node.prompt,
                node.answer,
                node.created,
                node.streamed,
            )
            out.tree.setups.setdefault(node.setup, rec.tree.setups.get(node.setup, {}))
            for sid in _screen_ids(node.prompt):
                if sid not in rec.tree.screens:
                    continue  # an image that was not readable: it never matches again
                screen = rec.tree.screens[sid]
                out.tree.screens[sid] = screen
                if screen.png is not None:
                    thumbnails[screen.thumbnail] = screen.png
        out.params = sorted(set(out.params) | set(rec.params))
        _write(store, out, thumbnails)
        return out


def _screen_ids(value: Any) -> list[str]:
    if isinstance(value, dict):
        if "$screen" in value:
            return [str(value["$screen"])]
        return [s for v in value.values() for s in _screen_ids(v)]
    if isinstance(value, list):
        return [s for v in value for s in _screen_ids(v)]
    return []


def _write(store: Store, rec: LLMRecording, thumbnails: dict[str, bytes]) -> None:
    store.write_document(rec.name, dumps(rec), thumbnails)
    keep = {s.thumbnail for s in rec.tree.screens.values()}
    store.thumbs.collect(rec.name, keep)


def summary(store: Store, name: str) -> dict[str, Any]:
    """What `mm ls` needs (no thumbnails read)."""
    rec = loads(store.read_text(name), store.locate(name))
    return {
        "kind": KIND,
        "steps": len(rec.tree.nodes),
        "branches": rec.tree.branches(),
        "params": list(rec.params),
        "created": rec.created.isoformat(),
    }


def outline(rec: LLMRecording) -> list[tuple[int, Node, str]]:
    """(depth, exchange, one-line description) in tree order, for `mm show`."""
    out: list[tuple[int, Node, str]] = []

    def walk(parent: int | None, depth: int) -> None:
        for node in sorted(rec.tree.children(parent), key=lambda n: n.id):
            out.append((depth, node, describe(node)))
            walk(node.id, depth + 1)

    walk(None, 0)
    return out


def describe(node: Node) -> str:
    from mmcli.llm.conversation import said

    parts = []
    for item in said(node.answer.get("message")):
        if item[0] == "text":
            text = item[1] if len(item[1]) <= 60 else item[1][:57] + "..."
            parts.append(repr(text))
        else:
            args = json.dumps(item[3], separators=(",", ":"))
            parts.append(f"{item[2]}({args if len(args) <= 60 else args[:57] + '...'})")
    shots = len(_screen_ids(node.prompt))
    seen = f" after {shots} screenshot{'s' if shots != 1 else ''}" if shots else ""
    return f"{node.api}{seen}: " + ("; ".join(parts) or "(empty answer)")
