"""A heal's branch and the outcome it ended on (known: trusted at once; new: pending;
a recording that keeps no outcomes: trusted as before), and what `mm record` says a
fallback will run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from PIL import ImageDraw

from mmcli.capture.gauges import Gauges
from mmcli.capture.integrate import FinishedRun, Into, fallback_lines, integrate
from mmcli.model import Action, ActionKind, Recording
from mmcli.params import Values
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.store.recordings import Store
from tests.helpers import ended_on
from tests.unit.test_integrate import FIELD, OK, SAVE, capture, click, screen


def _run(final_status: str, heal: bool = False) -> FinishedRun:
    """The task (click the field, type, Save, OK), or a heal's part of it (Save, OK),
    ending on a screen whose status line says `final_status`."""
    steps = [
        capture(click(FIELD), screen(), FIELD),
        capture(Action(ActionKind.TYPE, text="abc"), screen(), None),
        capture(click(SAVE), screen("abc"), SAVE),
        capture(click(OK), screen("abc", "Saved"), OK),
    ]
    final = Frame.from_image(screen("", final_status))
    return FinishedRun(steps[2:] if heal else steps, ended_on(final), [], Values(), ["agent"])


def _recorded() -> Recording:
    integrate(Store(), "task", _run("Done"), Into.NEW)
    return Store().load("task")


def _heal(rec: Recording, final_status: str) -> tuple[object, list[str]]:
    said: list[str] = []
    at = rec.steps[1].id  # after the typing: the heal clicks Save and OK
    done = integrate(
        Store(), "task", _run(final_status, heal=True), Into.BRANCH, at=at, progress=said.append
    )
    return done, said


def test_a_heal_that_ends_on_the_recorded_outcome_is_trusted(isolated_store: Path) -> None:
    rec = _recorded()
    assert rec.steps[-1].outcome is not None
    done, said = _heal(rec, "Done")
    assert done.saved and done.steps == 2  # type: ignore[attr-defined]
    assert done.pending is None and done.branch == len(rec.steps)  # type: ignore[attr-defined]
    healed = Store().load("task")
    assert not any(s.pending for s in healed.steps)
    assert said[-1].endswith(f"a known outcome (that of step {len(rec.steps)})")


def test_a_heal_that_ends_on_a_new_outcome_is_pending(isolated_store: Path) -> None:
    rec = _recorded()
    done, said = _heal(rec, "Upload failed - nothing saved")
    first = len(rec.steps)
    assert done.pending == first and done.branch == first  # type: ignore[attr-defined]
    healed = Store().load("task")
    assert [s.id for s in healed.steps if s.pending] == [first]
    assert f"mm approve task {first}" in said[-1]


def test_a_recording_that_keeps_no_outcome_trusts_its_heals(isolated_store: Path) -> None:
    rec = _recorded()
    rec.steps = [replace(s, outcome=None) for s in rec.steps]
    Store().save(rec, overwrite=True)
    done, said = _heal(Store().load("task"), "Upload failed - nothing saved")
    assert done.pending is None  # type: ignore[attr-defined]
    assert not any(s.pending for s in Store().load("task").steps)
    assert said[-1] == "saved a branch of 2 steps"


def test_a_heal_with_no_settled_last_screen_is_not_vouched_for(isolated_store: Path) -> None:
    rec = _recorded()
    run = replace(_run("Done", heal=True), final=None)
    done = integrate(Store(), "task", run, Into.BRANCH, at=rec.steps[1].id)
    assert done.pending == len(rec.steps)


def test_what_a_fallback_will_run_and_values_left_inside_arguments() -> None:
    rec = Recording("r", [], None, command=["john-agent", "--who=John", "{{name}}"])  # type: ignore[arg-type]
    rec.cwd = "/srv/agents"
    lines = fallback_lines(rec, Values({"name": "John", "empty": "", "other": "Zed"}))
    assert (
        lines[0] == "on a divergence, replay runs: john-agent --who=John '{{name}}' in /srv/agents"
    )
    assert len(lines) == 2 and "'name''s value inside an argument" in lines[1].replace('"', "'")
    # The program's own name is not an argument; an empty value is in every text.
    assert fallback_lines(replace(rec, command=["john"]), Values({"name": "john"})) == [
        "on a divergence, replay runs: john in /srv/agents"
    ]
    assert fallback_lines(replace(rec, command=[]), Values({"name": "John"})) == []
    assert fallback_lines(replace(rec, cwd=None), Values())[0].endswith("'{{name}}'")


def test_a_param_s_value_leaves_a_digest_and_an_empty_one_none(isolated_store: Path) -> None:
    integrate(Store(), "task", replace(_run("Done"), values=Values({"word": "abc"})), Into.NEW)
    rec = Store().load("task")
    assert rec.params == ["word"] and len(rec.param_digests["word"]) == 1
    heal = replace(_run("Done", heal=True), values=Values({"word": ""}))
    integrate(Store(), "task", heal, Into.BRANCH, at=rec.steps[1].id)
    assert Store().load("task").param_digests == rec.param_digests


def test_the_window_title_is_the_first_pointed_action_s() -> None:
    run = _run("Done")
    asked: list[tuple[int, int]] = []

    def title_at(x: int, y: int) -> str:
        asked.append((x, y))
        return f"window at {x},{y}"

    typed_first = [run.captures[1], *run.captures]
    recorder = SimpleNamespace(
        captures=typed_first,
        final=run.final,
        volatile=[],
        idle=SimpleNamespace(gauges=Gauges()),
        backend=SimpleNamespace(workarea=lambda: None, window_title_at=title_at),
    )
    finished = FinishedRun.of(recorder, Values(), ["agent"], "/tmp")  # type: ignore[arg-type]
    assert finished.window_title == f"window at {FIELD[0]},{FIELD[1]}" and asked == [FIELD]
    assert (finished.cwd, finished.command) == ("/tmp", ["agent"])
    recorder.captures = [run.captures[1]]
    assert FinishedRun.of(recorder, Values(), []).window_title is None  # type: ignore[arg-type]


TITLE_BAR = Rect(200, 228, 300, 24)
"""A bar inside the task's area that names the run's customer (a title that echoes it)."""


def _titled(name: str, heal: bool = False, shown: str | None = None) -> FinishedRun:
    """The task for customer `name`; its last screen names `shown` (default: `name`) in
    `TITLE_BAR`, as the window system's title there says."""
    run = _run("Done", heal=heal)
    title = f"Invoice - {shown if shown is not None else name}"
    image = screen("", "Done")
    ImageDraw.Draw(image).text((TITLE_BAR.x + 4, TITLE_BAR.y + 4), title, fill="black")
    final = Frame.from_image(image)
    return replace(run, final=ended_on(final, ((TITLE_BAR, title),)), values=Values({"name": name}))


def test_a_heal_whose_title_names_its_own_value_ends_on_the_known_outcome(
    isolated_store: Path,
) -> None:
    integrate(Store(), "task", _titled("Ada"), Into.NEW)
    rec = Store().load("task")
    end = rec.steps[-1].outcome
    assert end is not None and [t.text for t in end.titles] == ["Invoice - {{name}}"]
    at = rec.steps[1].id
    done = integrate(Store(), "task", _titled("Grace", heal=True), Into.BRANCH, at=at)
    assert done.pending is None  # the bar's pixels differ, and name this run's value
    # A bar that names anything else is a difference: the heal is pending.
    other = _titled("Grace", heal=True, shown="Zed")
    assert integrate(Store(), "task", other, Into.BRANCH, at=at).pending is not None
