"""`mm show`'s core: a document of any kind as data to render (and, for a screen
recording, its HTML page written). Each kind's view comes from its row of `SHOW`, one
row per kind of `inventory.kinds.KINDS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmcli.errors import MMError, UsageError
from mmcli.model import shown_command
from mmcli.store.recordings import Store, validate_name

if TYPE_CHECKING:
    from mmcli.inventory.catalog import TreeLine
    from mmcli.llm.document import LLMRecording
    from mmcli.llm.tree import Node
    from mmcli.model import Recording


@dataclass
class ScreenView:
    """A screen recording: its tree in display order, the steps whose thumbnail is
    unusable, its recent divergences; `html`: the page written, if asked."""

    recording: Recording
    lines: list[TreeLine]
    problems: dict[int, str]
    divergences: list[dict[str, Any]]
    html: Path | None = None

    def masked_share(self, line: TreeLine) -> float:
        from mmcli.capture.integrate import masked_share

        return masked_share(self.recording, line.step)

    def as_json(self) -> dict[str, Any]:
        rec = self.recording
        return {
            "name": rec.name,
            "command": shown_command(rec.command),
            "cwd": rec.cwd,
            "params": rec.params,
            "window_title": rec.window_title,
            "steps": [
                {
                    "step": t.depth + 1,
                    "id": t.step.id,
                    "parent": t.step.parent,
                    "depth": t.depth,
                    "action": t.step.action.describe(),
                    "thumbnail": t.step.thumbnail,
                    "thumbnail_problem": self.problems.get(t.step.id),
                    "masks": [m.as_list() for m in t.step.fingerprint.masks],
                    "masked_share": round(self.masked_share(t), 3),
                    "pending": t.step.pending,
                    "outcome": t.step.outcome.thumbnail if t.step.outcome else None,
                }
                for t in self.lines
            ],
            "divergences": self.divergences,
        }


@dataclass
class ModelView:
    """A model-API recording: its exchanges in tree order (depth, node, one line)."""

    name: str
    recording: LLMRecording
    lines: list[tuple[int, Node, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "llm",
            "command": shown_command(self.recording.command),
            "params": self.recording.params,
            "exchanges": [
                {"id": n.id, "parent": n.parent, "depth": d, "answer": text}
                for d, n, text in self.lines
            ],
        }


@dataclass
class SDKView:
    """A Python SDK document: its trajectories and their calls (no screens to draw)."""

    name: str
    outline: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return self.outline


View = ScreenView | ModelView | SDKView


def show(store: Store, name: str, html: Path | None = None) -> View:
    validate_name(name)
    from mmcli.inventory.kinds import kind_of_stored

    return SHOW[kind_of_stored(store, name).name](store, name, html)


def _show_screen(store: Store, name: str, html: Path | None) -> View:
    from mmcli.inventory.catalog import recent_divergences, tree
    from mmcli.store.thumbnails import unusable

    recording = store.load(name)
    view = ScreenView(
        recording,
        list(tree(recording)),
        {step.id: problem for step, problem in unusable(store, recording)},
        recent_divergences(store, name),
    )
    if html is not None:
        _write_html(store, view, html)
        view.html = html
    return view


def _write_html(store: Store, view: ScreenView, html: Path) -> None:
    from mmcli.inventory.report import render
    from mmcli.store.recordings import atomic_write

    rec = view.recording
    page = render(rec, lambda f: store.read_thumbnail(rec.name, f), view.divergences)
    try:
        atomic_write(html, page.encode("utf-8"))
    except OSError as e:
        raise MMError(f"{html}: cannot write ({e.strerror})") from None


def _show_model(store: Store, name: str, html: Path | None) -> View:
    from mmcli.llm.document import load, outline

    if html is not None:
        raise UsageError(f"{name!r} was recorded at the model API: no HTML report for it")
    rec = load(store, name)
    return ModelView(name, rec, outline(rec))


def _show_sdk(store: Store, name: str, html: Path | None) -> View:
    from mmcli.sdk.document import outline

    if html is not None:
        raise UsageError(
            f"{name!r} was written by the Python SDK: it has no screens for an HTML report"
        )
    return SDKView(name, outline((store, name)))


SHOW: dict[str, Callable[[Store, str, Path | None], View]] = {
    "cli": _show_screen,
    "llm": _show_model,
    "sdk": _show_sdk,
}
"""Each kind's view, by the name `inventory.kinds.KINDS` gives it."""
