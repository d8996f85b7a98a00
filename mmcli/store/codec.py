"""Text <-> recording: the versioned TOML document.

`dumps` writes the current `FORMAT_VERSION`; `loads` accepts it and every older version
it knows how to upgrade, and refuses anything else with a `RecordingCorrupt` that names
the file and the problem. Nothing here touches the disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import tomli_w

from mmcli.errors import RecordingCorrupt, WrongKind
from mmcli.model import (
    BUTTONS,
    FORMAT_VERSION,
    MAX_LANDED_TEXT,
    Action,
    ActionKind,
    EndScreen,
    Landed,
    Recording,
    Step,
)
from mmcli.store import validate
from mmcli.store.fields import (
    as_bool,
    as_coordinate,
    as_datetime,
    as_file_name,
    as_hex,
    as_int,
    as_list,
    as_pair,
    as_rect,
    as_str,
)

if TYPE_CHECKING:  # numpy is imported only where a fingerprint is decoded: `mm ls` needs none
    from mmcli.screen.counts import CountLine
    from mmcli.screen.fingerprint import Fingerprint, Rect
    from mmcli.screen.windows import Over, TitleBar, WindowRef

Document = dict[str, Any]

GRID = re.compile(r"([1-9][0-9]{0,2})x([1-9][0-9]{0,2})")
MAX_DOCUMENT = validate.MAX_DOCUMENT


def _from_v1(doc: Document) -> Document:
    """Version 1 had no outcomes and no pending branches: its paths end unchecked."""
    return {**doc, "format_version": 2}


def _from_v2(doc: Document) -> Document:
    """Version 2 kept a literal `{{` in the agent's command as typed: its `{{key}}`s were
    all read as placeholders, and still are."""
    return {**doc, "format_version": 3}


UPGRADES: dict[int, Callable[[Document], Document]] = {1: _from_v1, 2: _from_v2}
"""`UPGRADES[n]` turns a version-n document into a version-(n+1) one."""


def dumps(recording: Recording) -> str:
    return tomli_w.dumps(_document(recording))


def loads(text: str, source: str = "<recording>") -> Recording:
    """The recording `text` holds, validated in full (see validate.py), or
    `RecordingCorrupt` naming `source` and the problem in one line."""
    doc = validate.read_toml(text, source)
    try:
        recording = _recording(_upgrade(doc, source))
        validate.check_recording(recording)
        return recording
    except RecordingCorrupt:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        problem = f"missing field {e}" if isinstance(e, KeyError) else str(e) or type(e).__name__
        raise RecordingCorrupt(f"{source}: {problem}") from None


def _upgrade(doc: Document, source: str) -> Document:
    kind = doc.get("kind", "cli")
    if kind == "sdk":
        raise WrongKind(
            f"{source}: written by the Python SDK (kind = 'sdk'); "
            "it is replayed from Python with mmcli.Engine, not by mm replay"
        )
    if kind == "llm":
        raise WrongKind(
            f"{source}: recorded at the model API (kind = 'llm'); it has no screen steps"
        )
    if kind != "cli":
        raise RecordingCorrupt(f"{source}: unknown kind {kind!r}; not an mm recording")
    return validate.upgraded(doc, source, FORMAT_VERSION, UPGRADES)


# ---- recording -> document -------------------------------------------------------------


def _document(rec: Recording) -> Document:
    doc: Document = {
        "format_version": FORMAT_VERSION,
        "name": rec.name,
        "created": rec.created,
        "command": list(rec.command),
        "params": list(rec.params),
        "secrets": list(rec.secrets),
        "policy": rec.policy,
        "ignore": [r.as_list() for r in rec.ignore],
        "volatile": [r.as_list() for r in rec.volatile],
    }
    if rec.area is not None:
        doc["area"] = rec.area.as_list()
    if rec.cwd is not None:
        doc["cwd"] = rec.cwd
    if rec.param_digests:
        doc["param_digests"] = {k: list(v) for k, v in sorted(rec.param_digests.items())}
    if rec.window_title is not None:
        doc["window_title"] = rec.window_title
    if rec.commit_steps is not None:
        doc["commit_steps"] = rec.commit_steps
    doc.update(rec.extra)
    doc["steps"] = [_step_doc(s) for s in rec.steps]
    return doc


def _step_doc(step: Step) -> Document:
    doc: Document = {"id": step.id}
    if step.parent is not None:
        doc["parent"] = step.parent
    if step.created is not None:
        doc["created"] = step.created
    if step.thumbnail:
        doc["thumbnail"] = step.thumbnail
    if step.effect is not None:
        doc["effect"] = step.effect.as_list()
    if step.pending:
        doc["pending"] = True
    doc["action"] = _action_doc(step.action)
    doc["screen"] = fingerprint_doc(step.fingerprint)
    if step.window is not None:
        doc["window"] = _window_doc(step.window)
    if step.landed is not None:
        doc["landed"] = _landed_doc(step.landed)
    if step.above:
        doc["above"] = [
            {"class": o.wm_class, "rect": o.frame.as_list(), "kind": o.kind} for o in step.above
        ]
    if step.own:
        doc["own"] = [
            {"class": o.wm_class, "rect": o.frame.as_list(), "kind": o.kind} for o in step.own
        ]
    if step.titles:
        doc["titles"] = _titles_doc(step.titles)
    if step.counts:
        doc["counts"] = _counts_doc(step.counts)
    if step.outcome is not None:
        outcome: Document = {"screen": fingerprint_doc(step.outcome.fingerprint)}
        if step.outcome.thumbnail:
            outcome["thumbnail"] = step.outcome.thumbnail
        if step.outcome.titles:
            outcome["titles"] = _titles_doc(step.outcome.titles)
        if step.outcome.counts:
            outcome["counts"] = _counts_doc(step.outcome.counts)
        if step.outcome.vacated:
            outcome["vacated"] = [r.as_list() for r in step.outcome.vacated]
        if step.outcome.under is not None:
            outcome["under"] = _window_doc(step.outcome.under)
        doc["outcome"] = outcome
    return doc


def _window_doc(window: WindowRef) -> Document:
    return {"class": window.wm_class, "rect": window.rect.as_list()}


def _titles_doc(titles: Sequence[TitleBar]) -> list[Document]:
    return [{"rect": t.rect.as_list(), "text": t.text} for t in titles]


def _counts_doc(counts: Sequence[CountLine]) -> list[Document]:
    docs = []
    for c in counts:
        doc: Document = {
            "rect": c.rect.as_list(),
            "text": c.text,
            "chars": c.chars,
            "words": c.words,
        }
        if c.row is not None:
            doc["row"] = c.row.as_list()
            doc["cells"] = list(c.cells)
        if c.over:
            doc["over"] = c.over
        docs.append(doc)
    return docs


def _landed_doc(landed: Landed) -> Document:
    doc: Document = {"source": landed.source}
    if landed.text is not None:
        doc["text"] = landed.text
    if landed.box is not None:
        doc["box"] = landed.box.as_list()
    if landed.redone:
        doc["redone"] = True
    return doc


_ACTION_DEFAULTS = Action(ActionKind.CLICK)


def _action_doc(action: Action) -> Document:
    doc: Document = {"kind": str(action.kind)}
    for name in ("x", "y", "x2", "y2", "button", "clicks", "text", "amount", "key_ms"):
        value = getattr(action, name)
        if value is not None and value != getattr(_ACTION_DEFAULTS, name):
            doc[name] = value
    if action.keys:
        doc["keys"] = list(action.keys)
    return doc


def fingerprint_doc(fp: Fingerprint) -> Document:
    """A fingerprint as a TOML table (also used by the SDK for stored screen checks)."""
    doc: Document = {
        "size": [fp.width, fp.height],
        "grid": f"{fp.grid.cols}x{fp.grid.rows}",
        "hashes": str(fp.grid),
        "tones": fp.grid.tones_hex(),
        "details": fp.grid.details_hex(),
    }
    if fp.patch is not None:
        doc["target"] = [fp.patch.x, fp.patch.y]
        doc["patch"] = str(fp.patch)
    if fp.pointer is not None:
        doc["pointer"] = list(fp.pointer)
    if fp.masks:
        doc["masks"] = [m.as_list() for m in fp.masks]
    return doc


# ---- document -> recording -------------------------------------------------------------

_KNOWN = {
    "format_version",
    "name",
    "created",
    "command",
    "params",
    "secrets",
    "policy",
    "ignore",
    "volatile",
    "area",
    "cwd",
    "param_digests",
    "window_title",
    "commit_steps",
    "steps",
}


def _recording(doc: Document) -> Recording:
    name = as_str(doc["name"], "name")
    created = as_datetime(doc["created"], "created")
    steps = [_step(s, i) for i, s in enumerate(as_list(doc.get("steps", []), "steps"))]
    if not steps:
        raise ValueError("no steps (a cut-off file?); nothing to replay")
    ids = {s.id for s in steps}
    if len(ids) != len(steps):
        raise ValueError("two steps share an id")
    for s in steps:
        if s.parent is not None and s.parent not in ids:
            raise ValueError(f"step {s.id} follows step {s.parent}, which does not exist")
    _check_tree(steps)
    return Recording(
        name=name,
        steps=steps,
        created=created,
        command=[as_str(c, "command") for c in as_list(doc.get("command", []), "command")],
        params=[as_str(p, "params") for p in as_list(doc.get("params", []), "params")],
        secrets=[as_str(p, "secrets") for p in as_list(doc.get("secrets", []), "secrets")],
        ignore=[as_rect(r, "ignore") for r in as_list(doc.get("ignore", []), "ignore")],
        volatile=[as_rect(r, "volatile") for r in as_list(doc.get("volatile", []), "volatile")],
        area=as_rect(doc["area"], "area") if "area" in doc else None,
        policy=as_str(doc.get("policy", "default"), "policy"),
        cwd=as_str(doc["cwd"], "cwd") if "cwd" in doc else None,
        param_digests=_digests(doc.get("param_digests", {})),
        window_title=as_str(doc["window_title"], "window_title") if "window_title" in doc else None,
        commit_steps=_commit_steps(doc["commit_steps"]) if "commit_steps" in doc else None,
        format_version=FORMAT_VERSION,
        extra={k: v for k, v in doc.items() if k not in _KNOWN},
    )


def _point(value: Any, where: str) -> tuple[int, int]:
    x, y = (as_coordinate(v, where) for v in as_pair(value, where))
    return (x, y)


def _commit_steps(value: Any) -> int:
    steps = as_int(value, "commit_steps")
    if steps < 1:
        raise ValueError(f"commit_steps is {steps}: at least 1 (the last action)")
    return steps


def _digests(doc: Any) -> dict[str, list[str]]:
    if not isinstance(doc, dict):
        raise ValueError("param_digests is not a table")
    return {
        as_str(k, "param_digests"): [as_str(d, f"param_digests.{k}") for d in as_list(v, k)]
        for k, v in doc.items()
    }


def _check_tree(steps: list[Step]) -> None:
    """Every step must lead back to a first step: a loop of parents is no task."""
    parent = {s.id: s.parent for s in steps}
    rooted: set[int] = set()
    for s in steps:
        path: list[int] = []
        on_path: set[int] = set()
        node: int | None = s.id
        while node is not None and node not in rooted:
            if node in on_path:
                raise ValueError(f"step {node} follows itself (a loop of parents)")
            path.append(node)
            on_path.add(node)
            node = parent[node]
        rooted.update(path)


def _step(doc: Any, index: int) -> Step:
    where = f"steps[{index}]"
    if not isinstance(doc, dict):
        raise ValueError(f"{where} is not a table")
    parent = doc.get("parent")
    return Step(
        id=as_int(doc["id"], f"{where}.id"),
        parent=None if parent is None else as_int(parent, f"{where}.parent"),
        action=_action(doc["action"], f"{where}.action"),
        fingerprint=fingerprint_from_doc(doc["screen"], f"{where}.screen"),
        thumbnail=as_file_name(doc["thumbnail"], f"{where}.thumbnail")
        if "thumbnail" in doc
        else None,
        effect=as_rect(doc["effect"], f"{where}.effect") if "effect" in doc else None,
        created=as_datetime(doc["created"], f"{where}.created") if "created" in doc else None,
        outcome=_outcome(doc["outcome"], f"{where}.outcome") if "outcome" in doc else None,
        pending=as_bool(doc.get("pending", False), f"{where}.pending"),
        window=_window(doc["window"], f"{where}.window") if "window" in doc else None,
        above=_above(doc["above"], f"{where}.above") if "above" in doc else (),
        own=_above(doc["own"], f"{where}.own") if "own" in doc else (),
        landed=_landed(doc["landed"], f"{where}.landed") if "landed" in doc else None,
        titles=_titles(doc["titles"], f"{where}.titles") if "titles" in doc else (),
        counts=_counts(doc["counts"], f"{where}.counts") if "counts" in doc else (),
    )


def _titles(doc: Any, where: str) -> tuple[TitleBar, ...]:
    from mmcli.screen.windows import MAX_TITLE, MAX_TITLES, TitleBar

    if not isinstance(doc, list) or len(doc) > MAX_TITLES:
        raise ValueError(f"{where}: a list of at most {MAX_TITLES} title bars")
    found = []
    for i, entry in enumerate(doc):
        if not isinstance(entry, dict):
            raise ValueError(f"{where}[{i}] is not a table")
        text = as_str(entry["text"], f"{where}[{i}].text")
        if len(text) > MAX_TITLE:
            raise ValueError(f"{where}[{i}].text: longer than {MAX_TITLE} characters")
        found.append(TitleBar(as_rect(entry["rect"], f"{where}[{i}].rect"), text))
    return tuple(found)


def _counts(doc: Any, where: str) -> tuple[CountLine, ...]:
    from mmcli.screen.counts import CELL, MAX_COUNT_LINES, MAX_COUNT_TEXT, MAX_ROW_CELLS, CountLine

    if not isinstance(doc, list) or len(doc) > MAX_COUNT_LINES:
        raise ValueError(f"{where}: a list of at most {MAX_COUNT_LINES} count lines")
    found = []
    for i, entry in enumerate(doc):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{at} is not a table")
        text = as_str(entry["text"], f"{at}.text")
        if len(text) > MAX_COUNT_TEXT:
            raise ValueError(f"{at}.text: longer than {MAX_COUNT_TEXT} characters")
        rect = as_rect(entry["rect"], f"{at}.rect")
        chars, words = as_int(entry["chars"], f"{at}.chars"), as_int(entry["words"], f"{at}.words")
        if "row" not in entry:
            found.append(CountLine(rect, text, chars, words))
            continue
        cells = entry.get("cells")
        if (
            not isinstance(cells, list)
            or not 0 < len(cells) <= MAX_ROW_CELLS
            or not all(isinstance(c, str) and CELL.fullmatch(c) for c in cells)
            or cells.count("") != 1
        ):
            raise ValueError(
                f"{at}.cells: a list of at most {MAX_ROW_CELLS} cell digests (16 hex "
                'digits), the count\'s own cell "" once'
            )
        row = as_rect(entry["row"], f"{at}.row")
        over = entry.get("over", "")
        if not isinstance(over, str) or not CELL.fullmatch(over) or bool(over) == bool(text):
            raise ValueError(f"{at}.over: a cell digest (16 hex digits) where the text is empty")
        found.append(CountLine(rect, text, chars, words, row, tuple(cells), over))
    return tuple(found)


def _window(doc: Any, where: str) -> WindowRef:
    from mmcli.screen.windows import MAX_CLASS, WindowRef

    if not isinstance(doc, dict):
        raise ValueError(f"{where} is not a table")
    wm_class = as_str(doc.get("class", ""), f"{where}.class")
    if len(wm_class) > MAX_CLASS:
        raise ValueError(f"{where}.class: longer than {MAX_CLASS} characters")
    return WindowRef(wm_class, as_rect(doc["rect"], f"{where}.rect"))


LANDED_SOURCES = ("", "accessibility", "ocr")


def _landed(doc: Any, where: str) -> Landed:
    if not isinstance(doc, dict):
        raise ValueError(f"{where} is not a table")
    source = as_str(doc.get("source", ""), f"{where}.source")
    if source not in LANDED_SOURCES:
        raise ValueError(f"{where}.source: one of {', '.join(map(repr, LANDED_SOURCES))}")
    text = as_str(doc["text"], f"{where}.text") if "text" in doc else None
    if text is not None and len(text) > MAX_LANDED_TEXT:
        raise ValueError(f"{where}.text: longer than {MAX_LANDED_TEXT} characters")
    box = as_rect(doc["box"], f"{where}.box") if "box" in doc else None
    return Landed(source, text, box, as_bool(doc.get("redone", False), f"{where}.redone"))


def _above(doc: Any, where: str) -> tuple[Over, ...]:
    from mmcli.screen.windows import MAX_OVER, Over

    if not isinstance(doc, list) or len(doc) > MAX_OVER:
        raise ValueError(f"{where}: a list of at most {MAX_OVER} windows")
    found = []
    for i, entry in enumerate(doc):
        window = _window(entry, f"{where}[{i}]")
        kind = as_str(entry.get("kind", ""), f"{where}[{i}].kind")
        if len(kind) > MAX_KIND:
            raise ValueError(f"{where}[{i}].kind: longer than {MAX_KIND} characters")
        found.append(Over(window.wm_class, window.rect, kind))
    return tuple(found)


MAX_KIND = 32
"""The longest window type (EWMH, after `_NET_WM_WINDOW_TYPE_`) a recording keeps."""


def _outcome(doc: Any, where: str) -> EndScreen:
    if not isinstance(doc, dict):
        raise ValueError(f"{where} is not a table")
    fingerprint = fingerprint_from_doc(doc["screen"], f"{where}.screen")
    if fingerprint.patch is not None:
        raise ValueError(f"{where}.screen has a target; an outcome has none")
    thumbnail = None
    if "thumbnail" in doc:
        thumbnail = as_file_name(doc["thumbnail"], f"{where}.thumbnail")
    titles = _titles(doc["titles"], f"{where}.titles") if "titles" in doc else ()
    counts = _counts(doc["counts"], f"{where}.counts") if "counts" in doc else ()
    vacated = _vacated(doc["vacated"], f"{where}.vacated") if "vacated" in doc else ()
    under = _window(doc["under"], f"{where}.under") if "under" in doc else None
    return EndScreen(fingerprint, thumbnail, titles, counts, vacated, under)


def _vacated(doc: Any, where: str) -> tuple[Rect, ...]:
    from mmcli.screen.windows import MAX_VACATED

    if not isinstance(doc, list) or len(doc) > MAX_VACATED:
        raise ValueError(f"{where}: a list of at most {MAX_VACATED} rectangles")
    return tuple(as_rect(r, f"{where}[{i}]") for i, r in enumerate(doc))


def _action(doc: Any, where: str) -> Action:
    if not isinstance(doc, dict):
        raise ValueError(f"{where} is not a table")
    try:
        kind = ActionKind(doc["kind"])
    except ValueError:
        raise ValueError(f"{where}.kind: unknown action {doc['kind']!r}") from None
    opt = {k: as_coordinate(doc[k], f"{where}.{k}") for k in ("x", "y", "x2", "y2") if k in doc}
    button = as_str(doc.get("button", "left"), f"{where}.button")
    if button not in BUTTONS:
        raise ValueError(f"{where}.button must be one of {', '.join(BUTTONS)}")
    return Action(
        kind=kind,
        button=button,
        clicks=as_int(doc.get("clicks", 1), f"{where}.clicks"),
        text=as_str(doc.get("text", ""), f"{where}.text"),
        keys=tuple(
            as_str(k, f"{where}.keys") for k in as_list(doc.get("keys", []), f"{where}.keys")
        ),
        amount=as_int(doc.get("amount", 0), f"{where}.amount"),
        key_ms=as_int(doc["key_ms"], f"{where}.key_ms") if "key_ms" in doc else None,
        **opt,
    )


def fingerprint_from_doc(doc: Any, where: str) -> Fingerprint:
    """Parse a `fingerprint_doc` table; `ValueError` names the field (under `where`)."""
    from mmcli.screen.fingerprint import Fingerprint, Grid, Patch

    if not isinstance(doc, dict):
        raise ValueError(f"{where} is not a table")
    width, height = (as_int(v, f"{where}.size") for v in as_pair(doc["size"], f"{where}.size"))
    cols_rows = GRID.fullmatch(as_str(doc["grid"], f"{where}.grid"))
    if cols_rows is None:
        raise ValueError(f"{where}.grid must look like 16x9")
    cols, rows = int(cols_rows[1]), int(cols_rows[2])
    try:
        grid = Grid.parse(
            cols,
            rows,
            as_hex(doc["hashes"], "hashes"),
            as_hex(doc["tones"], "tones"),
            as_hex(doc["details"], "details"),
        )
        patch = None
        if "patch" in doc:
            tx, ty = (as_coordinate(v, "target") for v in as_pair(doc["target"], "target"))
            patch = Patch.parse(tx, ty, as_hex(doc["patch"], "patch"))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    pointer = _point(doc["pointer"], f"{where}.pointer") if "pointer" in doc else None
    masks = tuple(as_rect(m, f"{where}.masks") for m in as_list(doc.get("masks", []), where))
    return Fingerprint(width, height, grid, patch, pointer, masks)
