"""Shared fixtures: every test gets its own empty store; no test touches real recordings.

Two lanes (README, "Tests"): the full one (`scripts/test`) runs everything; the fast one
(`scripts/test --fast`) runs what needs no display, no app and no server. A test needs
them when it lives in tests/e2e, uses a fixture that starts one (`FULL_LANE_FIXTURES`), or
is marked `e2e` itself; the fast lane runs with no DISPLAY and with X servers, VNC servers
and the store and fleet servers made to fail at once, so a test that needs one and is not
marked fails there, saying so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

FULL_LANE_FIXTURES = frozenset(
    {
        "xdisplay",  # tests/e2e: an Xvfb
        "desktop",  # tests/e2e: Xvfb and a window manager
        "vnc",
        "vnc_locked",
        "loan_app",
        "small_display",  # tests/llm
        "x_env",  # tests/examples
        "seaweed",  # tests/store: a real S3 server
        "s3_env",
        "s3_url",
        "rclone",  # tests/store: an S3 server that ignores conditional puts
        "loan_recording",  # tests/faults
    }
)
"""Fixtures that start a display, an app or a server: a test that uses one is `e2e`."""

FAST_LANE_REFUSES = ("Xvfb", "Xephyr", "x11vnc", "weed", "rclone", "temporal")
"""Programs the fast lane makes fail at once (found first on PATH there)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.path))
        needs = path.is_relative_to(here / "e2e") or bool(
            FULL_LANE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        )
        if needs and item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", autouse=True)
def fast_lane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """In the fast lane (MM_TEST_LANE=fast): no DISPLAY, and every program in
    `FAST_LANE_REFUSES` fails saying the test belongs to the full lane."""
    if os.environ.get("MM_TEST_LANE") != "fast":
        yield
        return
    shims = tmp_path_factory.mktemp("fast-lane-bin")
    for name in FAST_LANE_REFUSES:
        shim = shims / name
        shim.write_text(
            "#!/bin/sh\n"
            f'echo "fast lane: {name} is not started here; mark the test e2e '
            '(tests/conftest.py)" >&2\nexit 97\n'
        )
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("DISPLAY", raising=False)
        patch.setenv("PATH", f"{shims}{os.pathsep}{os.environ.get('PATH', '')}")
        yield


@pytest.fixture(autouse=True)
def display_of_the_test(request: pytest.FixtureRequest) -> None:
    """A test that uses `xdisplay` (and no desktop of its own), in any folder, runs with
    DISPLAY naming it, whatever an earlier test in this process left there
    (`open_backend(":N")` run in-process writes DISPLAY; on a pytest worker, modules come
    in any order), on a display with no window manager's leftovers."""
    names = request.fixturenames
    if "xdisplay" in names and "desktop" not in names:
        display = request.getfixturevalue("xdisplay")
        request.getfixturevalue("monkeypatch").setenv("DISPLAY", display)
        _no_window_manager_left(display)


WM_ROOT_PROPERTIES = (
    "_NET_SUPPORTING_WM_CHECK",
    "_NET_CLIENT_LIST",
    "_NET_CLIENT_LIST_STACKING",
    "_NET_ACTIVE_WINDOW",
    "_NET_WORKAREA",
)
"""What a window manager leaves on the root window, and outlives it."""


def _no_window_manager_left(display: str) -> None:
    """The session's display as a test expects it, bare: the root properties a window
    manager (or a test standing in for one) set on it earlier are gone, or `mm doctor`
    reads a stale window stack there."""
    from Xlib import display as xlib_display

    conn = xlib_display.Display(display)
    try:
        root = conn.screen().root
        for name in WM_ROOT_PROPERTIES:
            root.delete_property(conn.intern_atom(name))
        conn.sync()
    finally:
        conn.close()


@pytest.fixture(autouse=True)
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = tmp_path / "store"
    monkeypatch.setenv("MM_HOME", str(store))
    # History lines a run could not write wait here (mmcli/store/spool.py), not in ~.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MM_RECORD_SOCKET", raising=False)
    return store
