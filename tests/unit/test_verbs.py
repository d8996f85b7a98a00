"""The core entry per verb (`mmcli.verbs`) and the thin commands that call it."""

from __future__ import annotations

import ast
import contextlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

from mmcli.backends import FakeBackend
from mmcli.backends.base import Backend
from mmcli.cli.app import app
from mmcli.errors import Outcome, RecordingCorrupt, RecordingNotFound, UsageError, WrongKind
from mmcli.inventory.kinds import KINDS
from mmcli.model import Action, ActionKind
from mmcli.params import Values
from mmcli.replay.report import ReplayReport
from mmcli.store.recordings import Store
from mmcli.verbs import replay as replay_verb
from mmcli.verbs import show as show_verb
from mmcli.verbs.display import Display
from mmcli.verbs.replay import ReplayRequest
from tests.helpers import count_loads, form_screen
from tests.unit.test_replayer import SUBMIT, form_recording, typing_app

ROOT = Path(__file__).resolve().parents[2]
KIND_NAMES = set(KINDS)
"""Where a kind may be named in a comparison: the kinds table, and the codecs that read
a document's kind line."""
KIND_READERS = {"mmcli/inventory/kinds.py", "mmcli/store/codec.py", "mmcli/store/recordings.py"}


@dataclass(frozen=True)
class FakeDisplay(Display):
    """The example form on the fake backend."""

    @contextlib.contextmanager
    def opened(self, progress: object = None) -> Iterator[Backend]:
        yield FakeBackend(form_screen(), on_action=typing_app)


def _commands(group: typer.Typer) -> Iterator[tuple[str, object]]:
    for command in group.registered_commands:
        yield command.name or command.callback.__name__, command.callback  # type: ignore[union-attr]
    for sub in group.registered_groups:
        assert sub.typer_instance is not None
        yield from _commands(sub.typer_instance)


def test_no_command_function_is_over_40_lines() -> None:
    """A command parses, builds its request, calls once and renders: signature, help and
    body together stay within 40 lines."""
    long = {}
    for name, callback in _commands(app):
        lines, _ = inspect.getsourcelines(callback)  # type: ignore[arg-type]
        if len(lines) > 40:
            long[name] = len(lines)
    assert not long, f"command functions over 40 lines: {long}"
    assert len(list(_commands(app))) >= 20  # every command was seen (act's and batch's too)


def test_no_kind_is_compared_by_its_name_outside_the_kinds_table() -> None:
    """`== "llm"`, `!= "cli"`, `in ("sdk", ...)`: a kind's behaviour is a field of its row
    in `inventory.kinds.KINDS` (or its runner in a verb's table), never a string test."""

    def names_a_kind(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in KIND_NAMES
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_a_kind(e) for e in node.elts)
        return False

    found = []
    for path in sorted((ROOT / "mmcli").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where in KIND_READERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(
                names_a_kind(side) for side in [node.left, *node.comparators]
            ):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.match_case) and names_a_kind(
                getattr(node.pattern, "value", None) or ast.Constant(None)
            ):
                found.append(f"{where}:{node.pattern.lineno}: case")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("table", [replay_verb.REPLAY, show_verb.SHOW], ids=["replay", "show"])
def test_each_verb_has_a_runner_for_every_kind(table: dict[str, object]) -> None:
    assert set(table) == set(KINDS)


def _request(**kw: object) -> ReplayRequest:
    kw.setdefault("timeout", 0.3)
    return ReplayRequest("form", Values({"name": "John"}), FakeDisplay(), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dry_run", "outcome"),
    [(False, Outcome.FROM_MEMORY), (True, Outcome.WOULD_REPLAY)],
    ids=["replayed", "dry-run"],
)
def test_a_replay_request_reads_its_recording_once(
    monkeypatch: pytest.MonkeyPatch, dry_run: bool, outcome: Outcome
) -> None:
    """From the command's request to the report: the kind is read from the document's
    head, the document itself is read and parsed once (params checked, the recorded
    agent taken and the walk done on that one load)."""
    store = Store()
    store.save(form_recording())
    loads, reads = count_loads(monkeypatch)
    report = replay_verb.replay(store, _request(dry_run=dry_run))
    assert isinstance(report, ReplayReport)
    assert report.outcome is outcome
    assert (loads, reads) == (["form"], ["form"])


def test_the_recorded_agent_is_the_fallback_unless_refused() -> None:
    rec = form_recording()
    rec.cwd = "/srv/agent"
    assert _request().options(rec).agent == ["agent"]
    assert _request().options(rec).agent_cwd == "/srv/agent"
    assert _request(no_agent=True).options(rec).agent is None
    given = _request(agent=["other"]).options(rec)
    assert (given.agent, given.agent_cwd) == (["other"], None)


def test_a_name_not_recorded_yet_needs_an_agent() -> None:
    with pytest.raises(RecordingNotFound):
        replay_verb.replay(Store(), _request())
    with pytest.raises(RecordingNotFound):
        replay_verb.replay(Store(), _request(agent=["agent"], dry_run=True))


def test_a_missing_param_is_refused_before_the_display_opens() -> None:
    store = Store()
    store.save(form_recording())

    @dataclass(frozen=True)
    class NoDisplay(Display):
        def opened(self, progress: object = None) -> contextlib.AbstractContextManager[Backend]:
            raise AssertionError("the display was opened")

    request = ReplayRequest("form", Values(), NoDisplay(), timeout=0.3)
    with pytest.raises(UsageError, match="name"):
        replay_verb.replay(store, request)


def test_an_sdk_document_is_not_replayed_by_mm_replay() -> None:
    store = Store()
    store.write_document("doc", 'kind = "sdk"\nformat_version = 1\nname = "doc"\n')
    with pytest.raises(WrongKind, match=r"mmcli\.Engine"):
        replay_verb.replay(store, ReplayRequest("doc", display=FakeDisplay()))


def test_usage_is_refused_before_the_store_is_read() -> None:
    with pytest.raises(UsageError, match="exclude each other"):
        ReplayRequest("form", agent=["a"], no_agent=True).check()
    with pytest.raises(UsageError, match="--params-file"):
        ReplayRequest("form", before_each="true").check()


def test_a_batch_reads_its_recording_once_until_a_row_changes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Three rows replayed from memory: one read of the document for the whole batch
    (columns checked, the recorded agent taken, every row walked)."""
    store = Store()
    store.save(form_recording())
    rows = tmp_path / "rows.csv"
    rows.write_text("name\nAda\nGrace\nAlan\n")
    loads, _ = count_loads(monkeypatch)

    def filing_app(backend: FakeBackend, action: Action) -> None:
        typing_app(backend, action)
        if action.kind is ActionKind.CLICK and (action.x, action.y) == SUBMIT:
            backend.screen = form_screen()  # filed: the form is empty for the next row

    @dataclass(frozen=True)
    class FilingDisplay(Display):
        @contextlib.contextmanager
        def opened(self, progress: object = None) -> Iterator[Backend]:
            yield FakeBackend(form_screen(), on_action=filing_app)

    request = ReplayRequest("form", Values(), FilingDisplay(), timeout=0.3, params_file=rows)
    report = replay_verb.replay(store, request)
    assert isinstance(report, replay_verb.BatchReport)
    assert [(r.outcome, r.detail) for r in report.rows] == [("from-memory", "")] * 3
    assert loads == ["form"]


def test_a_document_of_a_kind_mm_does_not_know_is_one_line_error() -> None:
    store = Store()
    store.write_document("odd", 'kind = "weird"\nname = "odd"\n')
    with pytest.raises(RecordingCorrupt, match="unknown kind 'weird'"):
        replay_verb.replay(store, ReplayRequest("odd", display=FakeDisplay()))
    with pytest.raises(RecordingCorrupt, match="unknown kind 'weird'"):
        show_verb.show(store, "odd")
