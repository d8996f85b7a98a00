"""End-to-end fixtures: a real X server (Xvfb), the real example app, the real `mm`."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.desktop.apps import App
from benchmarks.desktop.bench import Bench, Recorded
from benchmarks.desktop.desktop import Desktop, missing_programs
from examples.vncserver import VncServer
from examples.world import WANTED, LoanApp, agent_command
from mmcli.desktop.display import VirtualDisplay
from tests.desktop import display_env

__all__ = ["PASSWORD", "WANTED", "LoanApp", "agent_command", "mm"]

PASSWORD = "t0p-s3cr"
"""The password of the VNC server `vnc_locked` starts."""


@pytest.fixture(scope="session")
def xdisplay() -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    with VirtualDisplay() as display, display_env(display.display):
        yield display.display  # what the tests start runs there


@pytest.fixture(scope="module")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    """A desktop with a window manager (openbox) and no panel, on an Xvfb of its own
    (tests/e2e/test_desktop.py has its own, with a panel)."""
    missing = missing_programs()
    if missing:
        pytest.fail(f"missing programs for the desktop tests: {missing} (scripts/setup)")
    with Desktop(tmp_path_factory.mktemp("desktop"), panel=False) as d:
        yield d


def recorded_app(
    desktop: Desktop, app_type: type[App], work: Path, timeout: float, vary: bool
) -> Iterator[tuple[Bench, Recorded]]:
    """For a module fixture: `app_type` started on `desktop` and recorded once (recording
    0); `vary`: in the benchmark's drawn world 0, else at HOME with the default themes.
    Closed, and the themes set back, when the module is done."""
    app = app_type(desktop, work / "app")
    bench = Bench(desktop, app, work / "store", timeout=timeout, vary=vary)
    try:
        yield bench, bench.record(0)
    finally:
        app.close()
        desktop.set_theme("")


@pytest.fixture
def vnc(xdisplay: str) -> Iterator[VncServer]:
    """x11vnc serving the test display, no password."""
    if shutil.which("x11vnc") is None:
        pytest.fail("x11vnc is required (apt-get install x11vnc; scripts/setup installs it)")
    with VncServer(xdisplay) as server:
        yield server


@pytest.fixture
def vnc_locked(xdisplay: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[VncServer]:
    """x11vnc asking for `PASSWORD`, given to mm in the environment."""
    if shutil.which("x11vnc") is None:
        pytest.fail("x11vnc is required (apt-get install x11vnc; scripts/setup installs it)")
    with VncServer(xdisplay, PASSWORD) as server:
        monkeypatch.setenv("MM_VNC_PASSWORD", PASSWORD)
        yield server


@pytest.fixture
def loan_app(xdisplay: str, tmp_path: Path) -> Iterator[LoanApp]:
    app = LoanApp(tmp_path / "app")
    yield app
    app.stop()


def mm(
    *args: str, timeout: float = 180, cwd: str | Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real `mm` command in a subprocess (in folder `cwd`), output captured."""
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "120"},
        cwd=cwd,
    )
    sys.stderr.write(result.stderr)
    return result


@contextlib.contextmanager
def loan_recorded(work: Path) -> Iterator[tuple[LoanApp, Path]]:
    """The loan task recorded once by the example agent on the current display, in a
    store of its own under `work` (the pointer parked off the form first); the app
    stopped at the end."""
    store = work / "store"
    app = LoanApp(work / "app")
    try:
        app.start()
        subprocess.run(["xdotool", "mousemove", "3", "400"], check=True)
        done = mm(
            "--store", str(store), "record", "loan", "--observe", "0", "--", *agent_command(app)
        )
        assert done.returncode == 0, done.stderr
        assert len(app.records()) == 1
        yield app, store
    finally:
        app.stop()
