"""What `mm ls` and `mm show` report about recordings (no rendering here)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mmcli.errors import RecordingCorrupt, RecordingNotFound, StoreError
from mmcli.inventory.kinds import kind_of_stored
from mmcli.model import Recording, Step
from mmcli.store.codec import MAX_DOCUMENT
from mmcli.store.fields import is_plain_file_name
from mmcli.store.index import read_index, refresh, write_index
from mmcli.store.index import stamps as all_stamps
from mmcli.store.recordings import Store
from mmcli.store.skim import skim


@dataclass(frozen=True)
class Summary:
    name: str
    steps: int
    branches: int
    params: list[str]
    created: datetime | None
    last_replayed: str | None
    replays: int
    from_memory: int
    healed: int
    diverged: int
    size: int
    error: str | None = None
    pending: int = 0
    """Branches awaiting `mm approve` (they ended on a new outcome)."""
    outcome_differs: int = 0
    """Replays whose steps were performed but whose outcome differed (exit 6)."""
    kind: str = "cli"
    """"cli" for `mm record` recordings, "sdk" for documents written by `mmcli.Engine`,
    "llm" for recordings made at the model API (`mm record --llm`)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "steps": self.steps,
            "branches": self.branches,
            "pending": self.pending,
            "params": self.params,
            "created": self.created.isoformat() if self.created else None,
            "last_replayed": self.last_replayed,
            "replays": self.replays,
            "from_memory": self.from_memory,
            "healed": self.healed,
            "diverged": self.diverged,
            "outcome_differs": self.outcome_differs,
            "size": self.size,
            "error": self.error,
        }


READ_NOTICE = 200
"""With more documents than this to read (not in the index), `summarize` says so first."""


def summarize(store: Store, notice: Callable[[str], None] | None = None) -> list[Summary]:
    """One summary per document in the store, corrupt ones included (with their error).

    Parsing thousands of TOML documents is slow, so what a document says is cached in
    the store's index, keyed by the file's size and modification time (and likewise for
    its history); only documents that changed since the last listing are read again.
    Saving a recording puts it in the index, so that happens for copied-in stores.
    """
    cached = read_index(store)
    fresh: dict[str, Any] = {}
    out = []
    everything = all_stamps(store)
    unread = sum(
        1
        for name, stamps in everything.items()
        if not isinstance(cached.get(name), dict) or cached[name].get("doc_stamp") != stamps["doc"]
    )
    if notice is not None and unread > READ_NOTICE:
        notice(f"reading {unread} recordings that are not in the store's index yet (once)")
    for name, stamps in everything.items():
        entry = refresh(store, name, stamps, cached.get(name), _describe)
        try:
            summary = _summary(name, entry)
        except (KeyError, TypeError, ValueError, AttributeError):  # a hand-damaged index
            entry = refresh(store, name, stamps, None, _describe)
            summary = _summary(name, entry)
        fresh[name] = entry
        out.append(summary)
    if fresh != cached:
        write_index(store, fresh)
    return out


def _describe(store: Store, name: str) -> dict[str, Any]:
    """What `mm ls` needs from one document, JSON-ready (for the index)."""
    skimmed = _skim(store, name)
    if skimmed is not None:
        return skimmed
    try:
        return kind_of_stored(store, name).describe(store, name)
    except (RecordingCorrupt, StoreError, RecordingNotFound) as e:
        return {"error": str(e)}


def _skim(store: Store, name: str) -> dict[str, Any] | None:
    """The entry from the document's header and step lines (`mmcli.store.skim`), or None: read
    it in full (which also says what is wrong with it, and what an SDK document holds)."""
    try:
        listed = store.objects.head(store.key(name))
        if listed is None or listed.size > MAX_DOCUMENT:
            return None  # no recording is this big: the full read says so by its size
        data = store.objects.get(store.key(name), limit=MAX_DOCUMENT).data
        if len(data) > MAX_DOCUMENT:
            return None  # no recording is this big: the full read says so, reading no more
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError, StoreError):  # a link: the full read says so
        return None
    return skim(text, name)


def _summary(name: str, entry: dict[str, Any]) -> Summary:
    doc, history = entry["doc"], entry["history"]
    created = doc.get("created")
    last = history["last"] or doc.get("last_used")
    return Summary(
        name=name,
        kind=doc.get("kind", "cli"),
        steps=doc.get("steps", 0),
        branches=doc.get("branches", 0),
        pending=doc.get("pending", 0),
        params=doc.get("params", []),
        created=datetime.fromisoformat(created) if created else None,
        last_replayed=last,
        replays=history["replays"],
        from_memory=history["from_memory"],
        healed=history["healed"],
        diverged=history["diverged"],
        outcome_differs=history.get("outcome_differs", 0),
        size=entry["doc_stamp"][1] + entry["thumbs"],
        error=doc.get("error"),
    )


@dataclass(frozen=True)
class TreeLine:
    depth: int
    """Position on the path from the root (0-based): the step number replay reports."""
    indent: int
    """Nesting level: 0 on the trunk, +1 for each branch taken off it."""
    step: Step
    branch_start: bool


def tree(recording: Recording) -> Iterator[TreeLine]:
    """The steps in display order: each path depth-first, a branch right after the step
    it is an alternative to (a branch departing before step 1 follows step 1), before the
    path that step continues."""

    # Iterative, with the children indexed once: a 10,000-step path is no deeper a
    # recursion than a 3-step one, and no slower than linear.
    children: dict[int | None, list[Step]] = {}
    for step in recording.steps:
        children.setdefault(step.parent, []).append(step)

    roots = children.get(None, [])
    todo = [TreeLine(0, 0, roots[0], False)] if roots else []
    while todo:
        line = todo.pop()
        yield line
        kids = children.get(line.step.id, [])
        if kids:  # the path goes on, after the alternatives to this step
            todo.append(TreeLine(line.depth + 1, line.indent, kids[0], False))
        if not line.branch_start:
            alternatives = children[line.step.parent][1:]
            todo.extend(
                TreeLine(line.depth, line.indent + 1, alt, True) for alt in reversed(alternatives)
            )


def _step_number(divergence: dict[str, Any]) -> int | None:
    """The 1-based step number of a history line's divergence. Lines written before it
    carried its `depth` held the 0-based position in `step`."""
    step = divergence.get("step")
    if not isinstance(step, int) or isinstance(step, bool):
        return None
    return step if "depth" in divergence else step + 1


SECOND = timedelta(seconds=1)
HEALS = ("healed", "healed-pending")
"""The outcomes of a replay whose agent's run was saved as a branch."""


def heal_deleted(entry: dict[str, Any], recording: Recording) -> bool:
    """Whether `entry` (a history line) is a heal whose branch is no longer in the tree
    (`mm rm --branch`, `mm prune`). Lines that name the branch (`"branch"`: the id of its
    first step) are judged by it: the step must still be there, and older than the line
    (a later heal may have been given the freed id). Older lines are judged by where the
    heal departed: it is gone when the step the replay stopped after is gone, or when no
    branch departs there any more."""
    if entry.get("outcome") not in HEALS:
        return False
    at = parse_time(entry.get("at"))
    by_id = {s.id: s for s in recording.steps}
    branch = entry.get("branch")
    if isinstance(branch, int) and not isinstance(branch, bool):
        step = by_id.get(branch)
        if step is None:
            return True
        # The line's time is whole seconds, written after the branch's steps were made.
        return step.created is not None and at is not None and step.created > at + SECOND
    path = entry.get("path")
    if not isinstance(path, list) or not all(isinstance(i, int) for i in path):
        return False  # nothing to judge by: listed as it was
    if any(i not in by_id for i in path):
        return True
    node = path[-1] if path else None
    return len(recording.children(node)) < 2


def parse_time(value: object) -> datetime | None:
    """An ISO time from a history line or a summary (UTC when it names no zone); None
    when it is missing or malformed."""
    if not isinstance(value, str):
        return None
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def recent_divergences(
    store: Store, name: str, limit: int = 3, recording: Recording | None = None
) -> list[dict[str, Any]]:
    """The last replays that diverged: when, at which step, why, what differed where (the
    regions, screen pixels, when the history has them), and the live and recorded screens
    (file paths beside the recording). A heal whose branch has since been deleted is left
    out: what it learned is no longer in the tree (the history file keeps its line)."""
    if recording is None:
        with contextlib.suppress(RecordingCorrupt, StoreError, RecordingNotFound):
            recording = store.load(name)
    found = []
    for entry in reversed(store.runs.read(name)):
        d = entry.get("divergence")
        if not isinstance(d, dict):
            continue
        if recording is not None and heal_deleted(entry, recording):
            continue
        files = {}
        for key in ("thumbnail", "recorded", "live_area"):
            # A name in the recording's folder; a path (../../etc/passwd) is never followed.
            if is_plain_file_name(d.get(key)):
                files[key] = store.objects.url(f"{name}/{d[key]}")
        found.append(
            {
                "at": entry.get("at"),
                "worker": entry.get("worker"),
                "outcome": entry.get("outcome"),
                "step": _step_number(d),
                "reason": d.get("reason"),
                "live": files.get("thumbnail"),
                "recorded": files.get("recorded"),
                "live_area": files.get("live_area"),
                "live_box": rect_of(d.get("live_box")),
                "area": rect_of(d.get("area")),
                "regions": _rects(d.get("regions")),
                "offset": _offset(d.get("offset")),
                "branch": entry.get("branch"),
            }
        )
        if len(found) == limit:
            break
    return found


def rect_of(value: object) -> list[int] | None:
    """[x, y, w, h] from a history line, or None when it is missing or malformed."""
    if (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and value[2] > 0
        and value[3] > 0
    ):
        return list(value)
    return None


def _offset(value: object) -> list[int]:
    """How far the task had moved on the live screen; [0, 0] when not said."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return list(value)
    return [0, 0]


def _rects(value: object) -> list[list[int]] | None:
    """The regions that differed; None for a line written before they were kept."""
    if not isinstance(value, list):
        return None
    return [r for r in (rect_of(v) for v in value) if r is not None]
