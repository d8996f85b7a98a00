"""A small desktop for end-to-end tests: an Xvfb with a window manager (openbox), and
third-party apps from Debian driven and observed from outside (zenity forms).

Independent of mmcli's internals but for starting Xvfb; each piece is skipped cleanly
where its package is missing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from mmcli.desktop.display import start_xvfb, stop_xvfb


@contextlib.contextmanager
def display_env(display: str) -> Iterator[str]:
    """`DISPLAY` set to `display` inside the block, for what a test starts there (mm, an
    app, an agent), and set back after it."""
    before = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    try:
        yield display
    finally:
        if before is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = before


def terminate(proc: subprocess.Popen[bytes], wait: float = 10) -> None:
    """Stop an app the test started: SIGTERM, then SIGKILL after `wait` seconds."""
    proc.terminate()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def need(*commands: str) -> None:
    """Skip the test when a command it needs is not installed (see scripts/setup)."""
    missing = [c for c in commands if shutil.which(c) is None]
    if missing:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail(f"{', '.join(missing)} required but not installed (scripts/setup)")
        pytest.skip(f"{', '.join(missing)} not installed (scripts/setup installs them)")


def wait_until(check: object, timeout: float = 30.0, what: str = "condition") -> object:
    """Poll `check()` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()  # type: ignore[operator]
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.1)


def x(*args: str, display: str) -> subprocess.CompletedProcess[str]:
    """Run an X client command on `display`, output captured."""
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=30)


class Desktop:
    """An Xvfb with openbox managing its windows (title bars, focus on click)."""

    def __init__(self) -> None:
        self.display = ""
        self._xvfb: subprocess.Popen[bytes] | None = None
        self._wm: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Desktop:
        need("Xvfb", "openbox", "wmctrl", "xdotool")
        self._xvfb, self.display = start_xvfb()
        self._wm = subprocess.Popen(
            ["openbox"],
            env={**os.environ, "DISPLAY": self.display},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(
            lambda: x("wmctrl", "-m", display=self.display).returncode == 0,
            what="openbox to own the window manager selection",
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._wm is not None:
            self._wm.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._wm.wait(5)
        if self._xvfb is not None:
            stop_xvfb(self._xvfb)


class ZenityForm:
    """`zenity --forms` with named entries; what it prints after OK is the submitted record."""

    def __init__(self, desktop: Desktop, title: str, fields: list[str]) -> None:
        need("zenity")
        self.desktop = desktop
        self.title = title
        args = [f"--add-entry={f}" for f in fields]
        self.process = subprocess.Popen(
            ["zenity", "--forms", f"--title={title}", f"--text={title}", *args],
            env={**os.environ, "DISPLAY": desktop.display},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.window = str(wait_until(self._find, what=f"the {title!r} window"))

    def _find(self) -> str:
        found = x("xdotool", "search", "--name", f"^{self.title}$", display=self.desktop.display)
        return found.stdout.split()[0] if found.stdout.split() else ""

    def move(self, left: int, top: int) -> None:
        """Move the window (openbox centres a new one: a moved one is a changed screen)."""
        before = self.position()
        d = self.desktop.display
        x("xdotool", "windowmove", "--sync", self.window, str(left), str(top), display=d)
        wait_until(lambda: self.position() != before, what="the window to move")

    def position(self) -> tuple[int, int]:
        out = x(
            "xdotool", "getwindowgeometry", "--shell", self.window, display=self.desktop.display
        )
        values = dict(line.split("=", 1) for line in out.stdout.split())
        return int(values["X"]), int(values["Y"])

    def submitted(self, timeout: float = 30.0) -> str:
        """The record printed when the form was submitted ('' if it was cancelled)."""
        out, _ = self.process.communicate(timeout=timeout)
        return out.strip()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


@contextlib.contextmanager
def zenity_form(desktop: Desktop, title: str, fields: list[str]) -> Iterator[ZenityForm]:
    form = ZenityForm(desktop, title, fields)
    try:
        yield form
    finally:
        form.close()
