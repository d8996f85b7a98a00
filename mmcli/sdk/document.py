"""The SDK's stored document: one TOML file per engine name, beside the CLI recordings.

    kind = "sdk"                  tells it from a CLI recording (which has no `kind`)
    format_version = 1
    name = "sdk"
    created = 2026-01-01T12:00:00Z

    [[trajectories]]              one recorded run of the agent, in the order stored
    id = 1
    tags = ["invoices"]           the cache bucket (muscle-mem's tags, in order)
    created = 2026-01-01T12:00:00Z
    params = ["name"]             top-level params its arguments refer to
    branch_of = 1                 (optional) the trajectory replayed before the agent took
    branch_step = 2               over, and how many of its steps had been performed

    [[trajectories.steps]]        one tool call
    tool = "Form.type_text"       the tool's qualified name
    hash = "3f2a..."              of its source: a changed tool never replays old calls
    method = true                 `self` omitted, re-injected from `set_context`
    args = [{"$param" = "name"}]  arguments, encoded by `values.Codec`
    kwargs = {}
    pre = {...}                   the pre_check capture (absent: the tool has none)
    post = {...}                  the post_check capture (absent: the tool has none)

Values inside args/kwargs/pre/post are kept encoded here and decoded on use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomli_w

from mmcli.errors import RecordingCorrupt
from mmcli.model import SDK_KIND
from mmcli.store.recordings import Store
from mmcli.store.storefs import read_bytes
from mmcli.store.validate import read_toml, upgraded

KIND = SDK_KIND
FORMAT_VERSION = 1


@dataclass(frozen=True)
class StepRecord:
    """One recorded tool call, its arguments and snapshots in encoded form."""

    tool: str
    tool_hash: str
    method: bool
    args: list[Any]
    kwargs: dict[str, Any]
    pre: Any = None
    """The encoded pre_check capture; None when the tool has no pre_check."""
    post: Any = None

    def describe(self) -> str:
        """`tool(arg, key=value)` with params as `{{name}}`, for `mm show`."""
        args = [_shown(a) for a in self.args]
        args += [f"{k}={_shown(v)}" for k, v in self.kwargs.items()]
        return f"{self.tool}({', '.join(args)})"

    def params(self) -> set[str]:
        found = set()
        for value in [*self.args, *self.kwargs.values()]:
            if isinstance(value, dict) and set(value) == {"$param"}:
                found.add(str(value["$param"]))
        return found


@dataclass
class Trajectory:
    id: int
    tags: tuple[str, ...]
    steps: list[StepRecord]
    created: datetime
    branch_of: int | None = None
    branch_step: int | None = None

    def params(self) -> list[str]:
        return sorted(set().union(*(s.params() for s in self.steps)))


@dataclass
class SDKDocument:
    name: str
    created: datetime
    trajectories: list[Trajectory] = field(default_factory=list)

    def next_id(self) -> int:
        return max((t.id for t in self.trajectories), default=0) + 1


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


# ---- document -> text ------------------------------------------------------------------


def dumps(doc: SDKDocument) -> str:
    return tomli_w.dumps(
        {
            "kind": KIND,
            "format_version": FORMAT_VERSION,
            "name": doc.name,
            "created": doc.created,
            "trajectories": [_trajectory_doc(t) for t in doc.trajectories],
        }
    )


def _trajectory_doc(t: Trajectory) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": t.id,
        "tags": list(t.tags),
        "created": t.created,
        "params": t.params(),
    }
    if t.branch_of is not None:
        out["branch_of"] = t.branch_of
        out["branch_step"] = t.branch_step or 0
    out["steps"] = [_step_doc(s) for s in t.steps]
    return out


def _step_doc(s: StepRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": s.tool, "hash": s.tool_hash, "method": s.method}
    if s.args:
        out["args"] = s.args
    if s.kwargs:
        out["kwargs"] = s.kwargs
    if s.pre is not None:
        out["pre"] = s.pre
    if s.post is not None:
        out["post"] = s.post
    return out


# ---- text -> document ------------------------------------------------------------------


def loads(text: str, source: str) -> SDKDocument:
    """Parse a document; anything malformed raises `RecordingCorrupt` naming `source`."""
    raw = read_toml(text, source)
    if raw.get("kind") != KIND:
        raise RecordingCorrupt(f"{source}: not an SDK document (kind = {raw.get('kind')!r})")
    raw = upgraded(raw, source, FORMAT_VERSION)
    try:
        return SDKDocument(
            name=_typed(raw["name"], str, "name"),
            created=_typed(raw["created"], datetime, "created"),
            trajectories=[
                _trajectory(t, i)
                for i, t in enumerate(_typed(raw.get("trajectories", []), list, "trajectories"))
            ],
        )
    except KeyError as e:
        raise RecordingCorrupt(f"{source}: missing field {e}") from None
    except ValueError as e:
        raise RecordingCorrupt(f"{source}: {e}") from None


def _trajectory(raw: Any, index: int) -> Trajectory:
    where = f"trajectories[{index}]"
    raw = _typed(raw, dict, where)
    tags = _typed(raw.get("tags", []), list, f"{where}.tags")
    branch_of = raw.get("branch_of")
    return Trajectory(
        id=_typed(raw["id"], int, f"{where}.id"),
        tags=tuple(_typed(t, str, f"{where}.tags") for t in tags),
        steps=[
            _step(s, f"{where}.steps[{i}]")
            for i, s in enumerate(_typed(raw["steps"], list, f"{where}.steps"))
        ],
        created=_typed(raw["created"], datetime, f"{where}.created"),
        branch_of=None if branch_of is None else _typed(branch_of, int, f"{where}.branch_of"),
        branch_step=(
            None
            if branch_of is None
            else _typed(raw.get("branch_step", 0), int, f"{where}.branch_step")
        ),
    )


def _step(raw: Any, where: str) -> StepRecord:
    raw = _typed(raw, dict, where)
    return StepRecord(
        tool=_typed(raw["tool"], str, f"{where}.tool"),
        tool_hash=_typed(raw["hash"], str, f"{where}.hash"),
        method=_typed(raw.get("method", False), bool, f"{where}.method"),
        args=_typed(raw.get("args", []), list, f"{where}.args"),
        kwargs=_typed(raw.get("kwargs", {}), dict, f"{where}.kwargs"),
        pre=raw.get("pre"),
        post=raw.get("post"),
    )


def _typed(value: Any, kind: type, where: str) -> Any:
    bad_bool = kind is int and isinstance(value, bool)
    if not isinstance(value, kind) or bad_bool:
        names = {str: "a string", int: "an integer", bool: "true or false", list: "an array"}
        wanted = names.get(kind, "a table" if kind is dict else "a date-time")
        raise ValueError(f"{where} must be {wanted}")
    return value


def read(path: Path) -> SDKDocument:
    """Read and parse the document at `path` (`FileNotFoundError` if there is none)."""
    data = read_bytes(path.parent, [], path.name)  # never through a link
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordingCorrupt(f"{path}: not UTF-8 text") from None
    return loads(text, str(path))


def read_in(store: Store, name: str) -> SDKDocument:
    """NAME's document in `store`, wherever the store is (`RecordingNotFound` if none)."""
    return loads(store.read_text(name), store.locate(name))


def summary(path: Path | str | tuple[Store, str]) -> dict[str, Any]:
    """What `mm ls`/`mm show`/`mm prune` need to know about the SDK document at `path`
    (a file, or a store and a name).

    `last_used` is the time of the last engine call journaled for it (None if never).
    A corrupt document raises `RecordingCorrupt` with a one-line message naming the file.
    """
    if isinstance(path, tuple):
        store, name = path
        doc = read_in(store, name)
    else:
        path = Path(path)
        store, name = Store(path.parent), path.stem
        doc = read(path)
    tags = sorted({tag for t in doc.trajectories for tag in t.tags})
    params = sorted({p for t in doc.trajectories for p in t.params()})
    return {
        "name": doc.name,
        "steps": sum(len(t.steps) for t in doc.trajectories),
        "branches": len(doc.trajectories),
        "params": params,
        "tags": tags,
        "created": doc.created,
        "last_used": last_used(store, name),
    }


def _shown(value: Any, limit: int = 40) -> str:
    """An encoded argument, short: a param as its placeholder, anything long cut."""
    if isinstance(value, dict) and set(value) == {"$param"}:
        return "{{" + str(value["$param"]) + "}}"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def outline(path: Path | str | tuple[Store, str]) -> dict[str, Any]:
    """The document as `mm show` prints it: each trajectory, where it branched off, and its
    calls. A corrupt document raises `RecordingCorrupt`."""
    doc = read_in(*path) if isinstance(path, tuple) else read(Path(path))
    return {
        "name": doc.name,
        "kind": KIND,
        "created": doc.created.isoformat(),
        "trajectories": [
            {
                "id": t.id,
                "tags": list(t.tags),
                "params": t.params(),
                "created": t.created.isoformat(),
                "branch_of": t.branch_of,
                "branch_step": t.branch_step,
                "steps": [s.describe() for s in t.steps],
            }
            for t in doc.trajectories
        ],
    }


def last_used(store: Store, name: str) -> datetime | None:
    for entry in reversed(store.runs.read(name)):
        try:
            return datetime.fromisoformat(str(entry.get("at")))
        except ValueError:
            continue
    return None
