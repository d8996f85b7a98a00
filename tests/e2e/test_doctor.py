"""`mm doctor` on a real display, without one, and with each thing it checks broken."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from tests.e2e.conftest import LoanApp, mm

pytestmark = pytest.mark.e2e


def _doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmcli", "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def _by_check(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    return {f["check"]: f for f in json.loads(result.stdout)}


def test_all_green_with_the_app_on_screen(loan_app: LoanApp) -> None:
    loan_app.start()
    result = mm("doctor", "--json")
    assert result.returncode == 0, result.stderr
    found = _by_check(result)
    assert {k: v["status"] for k, v in found.items()} == {
        "store": "ok",
        "sandbox": "ok",  # bubblewrap (scripts/setup installs it)
        "display": "ok",
        "screenshot": "ok",
        "input": "ok",
        "fail-safe": "ok",
        "windows": "skip",  # no window manager on this Xvfb: the pixels judge alone
        "readback": "ok",  # OCR (scripts/setup installs tesseract); no accessibility bus
    }
    assert "1920x1080" in found["display"]["detail"]
    assert found["windows"]["detail"].startswith("no window manager on ")
    assert found["readback"]["detail"].endswith("other fields read by OCR (tesseract)")


def test_no_display_says_how_to_start_one() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = _doctor(env)
    assert result.returncode == 1
    assert "fail display    DISPLAY is not set" in result.stdout
    assert "Xvfb :99" in result.stdout


def test_unreachable_display_fails_clearly() -> None:
    result = _doctor({**os.environ, "DISPLAY": ":987"}, "--json")
    assert result.returncode == 1
    display = _by_check(result)["display"]
    assert display["status"] == "fail" and "cannot connect to :987" in display["detail"]


def test_pointer_in_a_corner_fails(xdisplay: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyautogui

    monkeypatch.setattr(pyautogui, "FAILSAFE", False)
    pyautogui.moveTo(0, 0)
    try:
        result = mm("doctor", "--json")
    finally:
        pyautogui.moveTo(400, 300)
    found = _by_check(result)
    assert result.returncode == 1
    assert found["fail-safe"]["status"] == "fail" and "corner" in found["fail-safe"]["detail"]


def test_input_is_not_tried_while_another_mm_drives_the_display(xdisplay: str) -> None:
    from mmcli.desktop.display import display_lock

    with display_lock(wait=0):
        result = mm("doctor", "--json")
    found = _by_check(result)
    assert found["input"]["status"] == "skip"
    assert "in use by another mm" in found["input"]["detail"]


def test_the_window_structure_is_read_where_a_window_manager_runs(
    desktop: Desktop, tmp_path: Path
) -> None:
    app = LoanApp(tmp_path / "app").start()
    try:
        result = mm("doctor")
        found = _by_check(mm("doctor", "--json"))
    finally:
        app.stop()
    assert result.returncode == 0, result.stderr
    windows = found["windows"]
    assert windows["status"] == "ok", windows
    assert re.fullmatch(
        r"\d+ top-level windows read, [1-9]\d* of them an app's with its class "
        r"\(python-xlib 0\.(3[3-9]|[4-9]\d)(\.\d+)?\)",
        windows["detail"],
    ), windows["detail"]
    assert re.search(r"ok windows +\d+ top-level windows read", result.stdout), result.stdout


def test_store_that_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = _doctor({**env, "MM_HOME": str(blocker / "store")}, "--json")
    store = _by_check(result)["store"]
    assert result.returncode == 1 and store["status"] == "fail"
    assert "--store DIR or MM_HOME" in store["fix"] or "create it" in store["fix"]


def test_doctor_says_whether_windows_are_seen_under_a_notification(
    desktop: Desktop, tmp_path: Path
) -> None:
    """Where the window manager is read, doctor says who keeps each window's pixels for
    the outcome to be seen under a notification: a compositing manager, or the server at
    mm's asking where none runs."""
    found = _by_check(mm("doctor", "--json"))["under"]
    assert found["status"] == "ok", found
    assert found["detail"].startswith("no compositing manager: the server keeps")
    assert found["detail"].endswith("(a typed field under one is not read there: not verified)")
    compositor = subprocess.Popen(["xcompmgr"])
    try:
        deadline = time.monotonic() + 10
        while True:
            found = _by_check(mm("doctor", "--json"))["under"]
            if found["detail"].startswith("a compositing") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        compositor.terminate()
        compositor.wait(timeout=10)
    assert found["status"] == "ok", found
    assert found["detail"].startswith("a compositing manager keeps each window's pixels")
    assert "seen under another app's notification" in found["detail"]
    assert found["detail"].endswith("a typed field under one is read there")
