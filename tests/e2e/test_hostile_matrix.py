"""The hostile matrix, reduced (benchmarks/desktop/hostile.py): a fixed sample of its
generated cases on openbox, for the GTK form (zenity), the Chromium page and the Tk loan
form, each app
recorded once (pyautogui, in the benchmark's drawn world 0), through the real
`mm replay --no-agent`.

A window of another app far from the task, or under the task window, must let replay
complete the right record, with or without the focus; a window over any part of the task
window, or one of the task's own app, must stop it before it acts (exit 3, nothing
submitted).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.desktop.apps import App, Chromium, TkLoan, Zenity
from benchmarks.desktop.bench import Bench, Outcome, Recorded
from benchmarks.desktop.desktop import Desktop, missing_programs
from benchmarks.desktop.hostile import Case, judge
from benchmarks.desktop.scenarios import Label
from tests.e2e.conftest import recorded_app

pytestmark = pytest.mark.e2e

GTK_CASES = (
    "dialog/target/other/focus",
    "terminal/over/other/no-focus",
    "normal/far/other/focus",
    "notification/far/other/no-focus",
    "override/edge/other/no-focus",
    # under the form's edge; the form closes at the end and lays it bare
    "normal/edge/other/under",
)
CHROMIUM_CASES = (
    "normal/over/own/no-focus",
    "override/far/other/focus",
    "tooltip/target/other/no-focus",
    "dialog/edge/other/focus",
    "dialog/far/other/no-focus",
)
TK_CASES = (
    "normal/far/own/no-focus",  # a Tk toplevel: no _NET_WM_PID, another class
    "normal/far/other/focus",
    "terminal/edge/other/under",  # shows beside the form's edge: left out where it shows
)


@pytest.fixture(scope="module")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    missing = missing_programs("zenity", "chromium")
    if missing:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail(f"missing programs for the desktop tests: {missing} (scripts/setup)")
        pytest.skip(f"missing programs: {missing} (scripts/setup)")
    with Desktop(tmp_path_factory.mktemp("desktop")) as d:
        yield d


def _bench(desktop: Desktop, app_type: type[App], work: Path) -> Iterator[tuple[Bench, Recorded]]:
    yield from recorded_app(desktop, app_type, work, timeout=4.0, vary=True)


@pytest.fixture(scope="module")
def gtk(
    desktop: Desktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Bench, Recorded]]:
    yield from _bench(desktop, Zenity, tmp_path_factory.mktemp("gtk"))


@pytest.fixture(scope="module")
def chromium(
    desktop: Desktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Bench, Recorded]]:
    yield from _bench(desktop, Chromium, tmp_path_factory.mktemp("chromium"))


@pytest.fixture(scope="module")
def tk(
    desktop: Desktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Bench, Recorded]]:
    yield from _bench(desktop, TkLoan, tmp_path_factory.mktemp("tk"))


def check(bench_recorded: tuple[Bench, Recorded], key: str) -> None:
    bench, recorded = bench_recorded
    case = Case.of(bench.app.key, key)
    result = judge(bench, case, recorded)
    j, arranged = result.judgement, result.arranged
    detail = (
        f"{case.name} ({case.label}): exit {j.exit_code}, record {j.record!r} "
        f"(expected {j.expected!r}), window {arranged}\n{j.stderr}"
    )
    assert arranged is not None, detail
    # the desktop is as the case says: the window covers the task or not, and the focus
    # is in it or in the task window
    assert arranged.covers_task is case.place.covers_task, detail
    assert arranged.focused if case.focus.takes else arranged.task_focused, detail
    assert arranged.above_task is not case.focus.under or not arranged.covers_task, detail
    if case.label is Label.UNSAFE:
        assert j.record is None and j.exit_code == 3, detail
    assert j.outcome is Outcome.CORRECT, detail


@pytest.mark.parametrize("key", GTK_CASES)
def test_gtk_form(gtk: tuple[Bench, Recorded], key: str) -> None:
    check(gtk, key)


@pytest.mark.parametrize("key", CHROMIUM_CASES)
def test_chromium_page(chromium: tuple[Bench, Recorded], key: str) -> None:
    check(chromium, key)


@pytest.mark.parametrize("key", TK_CASES)
def test_tk_form(tk: tuple[Bench, Recorded], key: str) -> None:
    check(tk, key)
