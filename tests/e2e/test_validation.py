"""Every labelled screen scenario through the real `mm replay --no-agent`: the unsafe ones
stop before acting (exit 3, nothing submitted), the harmless ones replay to the end."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.validation.run import step_at
from benchmarks.validation.scenarios import SCENARIOS, Label, Scenario
from examples.world import WANTED, LoanApp, agent_command
from mmcli.store.recordings import Store
from tests.e2e.conftest import mm

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def recorded(xdisplay: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The loan task recorded twice: on the plain app and with the clock showing, on
    `xdisplay` (a module fixture comes before the test's own DISPLAY is set)."""
    work = tmp_path_factory.mktemp("validation")
    store = work / "store"
    app = LoanApp(work / "record")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DISPLAY", xdisplay)
        _record_both(app, store)
    yield store


def _record_both(app: LoanApp, store: Path) -> None:
    try:
        for name, flags in (("plain", ()), ("clock", ("--clock",))):
            app.start(*flags)
            result = mm(
                "--store",
                str(store),
                "record",
                name,
                "--param",
                "name=John Smith",
                "--observe",
                "1.2",
                "--",
                *agent_command(app),
            )
            assert result.returncode == 0, result.stderr
    finally:
        app.stop()


def move_pointer(app: LoanApp, where: str) -> None:
    from mmcli.backends import open_backend

    with open_backend() as backend:
        backend.move(*((1500, 900) if where == "far" else app.center(where)))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.key for s in SCENARIOS])
def test_scenario(scenario: Scenario, recorded: Path, tmp_path: Path) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        app.start(*scenario.flags)
        if scenario.window_in_front:
            app.open_window_in_front()
        if scenario.pointer:
            move_pointer(app, scenario.pointer)
        result = mm(
            "--store",
            str(recorded),
            "replay",
            scenario.recording,
            "--no-agent",
            "--param",
            f"name={scenario.name}",
            "--timeout",
            "2",
        )
        submitted = app.records()
    finally:
        app.stop()
    if scenario.label is Label.UNSAFE:
        assert result.returncode == 3, result.stderr
        # Before acting at the step the scenario is about (or earlier), never later.
        step = step_at(Store(recorded).load(scenario.recording), scenario.at)
        found = re.search(r"diverged at step (\d+) ", result.stderr)
        assert found and int(found[1]) <= step + 1, result.stderr
        assert submitted == []
    else:
        assert result.returncode == 0, result.stderr
        expected = {**WANTED, "name": scenario.name}
        assert [{k: str(r[k]) for k in expected} for r in submitted] == [expected]


@pytest.mark.parametrize(
    "flags, expected, said",
    [
        (("--position", "150,100"), 0, "found moved by (+50, +0)"),  # on the 4 px grid
        (("--position", "137,113"), 0, "found moved by (+37, +13)"),  # off the grid
        # Moved, and something is wrong there: the reason is what differs at the new place.
        (("--position", "150,100", "--error-label"), 3, "found moved by (+50, +0), but differs"),
        (("--position", "150,100", "--popup-at-start"), 3, "diverged at step 1 "),
    ],
    ids=["moved-50", "moved-37-13", "moved-with-error", "moved-with-popup"],
)
def test_relocate_acts_on_a_moved_window_only_when_it_is_intact(
    flags: tuple[str, ...], expected: int, said: str, recorded: Path, tmp_path: Path
) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        app.start(*flags)
        result = mm(
            "--store", str(recorded), "replay", "plain", "--no-agent", "--relocate",
            "--param", "name=John Smith", "--timeout", "2",
        )  # fmt: skip
        submitted = app.records()
    finally:
        app.stop()
    assert result.returncode == expected, result.stderr
    assert said in result.stderr
    if expected == 0:
        assert [{k: str(r[k]) for k in WANTED} for r in submitted] == [WANTED]
    else:
        assert submitted == []


def test_a_moved_window_without_relocate_says_so(recorded: Path, tmp_path: Path) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        app.start("--position", "160,100")
        result = mm(
            "--store", str(recorded), "replay", "plain", "--no-agent",
            "--param", "name=John Smith", "--timeout", "2",
        )  # fmt: skip
        submitted = app.records()
    finally:
        app.stop()
    assert result.returncode == 3, result.stderr
    said = " ".join(result.stderr.split())
    assert "The window moved 60 px right; replay with --relocate to act there." in said
    assert "next: mm replay plain --relocate (with this run's params)" in said
    assert "replay without --no-agent" not in said  # the agent is not what fits
    assert submitted == []


def test_relocate_progress_tells_where_it_acted(recorded: Path, tmp_path: Path) -> None:
    app = LoanApp(tmp_path / "app")
    try:
        app.start("--position", "160,100")  # recorded at 100,100
        result = mm(
            "--store", str(recorded), "replay", "plain", "--no-agent", "--relocate",
            "--param", "name=Ada Lovelace", "--timeout", "2",
        )  # fmt: skip
        submitted = app.records()
    finally:
        app.stop()
    assert result.returncode == 0, result.stderr
    assert [r["name"] for r in submitted] == ["Ada Lovelace"]
    steps = Store(recorded).load("plain").steps
    clicks = [s.action for s in steps if s.action.kind.value == "click"]
    said = result.stderr
    for click in clicks:
        x, y = click.x, click.y
        assert f"click at ({x + 60}, {y}) (moved by +60,+0 from ({x}, {y}))" in said, said
    assert "/9: type 'Ada Lovelace'" in said, said
