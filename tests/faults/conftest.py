"""Fixtures for fault tests: the real `mm` in a subprocess, killed, interrupted, starved
of disk, racing another `mm`; a small recording to break; mounts for full and read-only
stores."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.world import LoanApp, agent_command
from mmcli.store.recordings import Store
from tests.e2e.conftest import mm, xdisplay
from tests.helpers import sample_recording

__all__ = ["mm", "xdisplay"]

MM = [sys.executable, "-m", "mmcli"]
REPLAY_SAMPLE = ("replay", "sample", "--param", "name=Ann", "--timeout", "0.2")
"""Replays `sample`: it diverges at its first step within 0.2 s."""
THUMBNAILS = {f"t-{i:04d}.png": f"png {i}".encode() * 50 for i in range(4)}


def snapshot(store: Path) -> dict[str, bytes]:
    """The recordings and their thumbnails, byte for byte: every file of the store but its
    bookkeeping (`.mm/`: locks, replay history) and the live screens a divergence keeps
    for diagnosis (`live-*.png`)."""
    return {
        str(p.relative_to(store)): p.read_bytes()
        for p in sorted(store.rglob("*"))
        if p.is_file()
        and ".mm" not in p.relative_to(store).parts
        and not p.name.startswith("live-")
    }


def save_sample(store: Path, name: str = "sample") -> dict[str, bytes]:
    """A valid recording with thumbnails whose screens never match a real display; the
    store's snapshot after saving it."""
    s = Store(store)
    with s.lock(name):
        s.save(sample_recording(name), THUMBNAILS)
    return snapshot(store)


def one_line_error(stderr: str) -> str:
    """The `mm: error: ...` line, checked to be the only error line and the last line."""
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("mm: error: ")]
    assert len(errors) == 1, stderr
    assert lines[-1] == errors[0], stderr
    assert "Traceback" not in stderr, stderr
    return errors[0]


class Running:
    """`mm` started in the background, in its own session (so an agent it leaves behind
    when killed can be cleaned up), its stderr read line by line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, stdout: object = None):
        self.process = subprocess.Popen(
            [*MM, *args],
            stdout=stdout if stdout is not None else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "120", **(env or {})},
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._seen:
                self.lines.append(line.rstrip("\n"))
                self._seen.notify_all()
        with self._seen:
            self._seen.notify_all()

    def wait_for(self, text: str, timeout: float = 60) -> None:
        """Block until a line of stderr contains `text`."""
        deadline = time.monotonic() + timeout
        with self._seen:
            while not any(text in line for line in self.lines):
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"never saw {text!r}; stderr:\n{self.stderr}")
                self._seen.wait(min(left, 0.2))

    def signal(self, signum: int) -> None:
        os.kill(self.process.pid, signum)

    def wait(self, timeout: float = 60) -> int:
        code = self.process.wait(timeout)
        self._reader.join(5)
        return code

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def kill_leftovers(self) -> None:
        """SIGKILL whatever `mm` started and left running (an orphaned agent)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


@pytest.fixture
def running() -> Iterator[list[Running]]:
    """Collects the background `mm` processes of a test; leaves none behind."""
    started: list[Running] = []
    yield started
    for r in started:
        r.kill_leftovers()


def act(*args: str) -> str:
    """A shell word list running `mm act ARGS` (how a non-Python agent acts)."""
    return " ".join([*MM, "act", *args])


# ---- the loan form, recorded once per session -------------------------------------------


@pytest.fixture(scope="session")
def loan_recording(
    xdisplay: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LoanApp, Path]]:
    """The example agent recorded on the example app, once: the app and a store holding
    `loan`. Tests copy the store; the app is theirs to restart. On `xdisplay`, whatever
    DISPLAY an earlier test in this process left (session fixtures come before a test's
    own DISPLAY is set)."""
    root = tmp_path_factory.mktemp("loan")
    app = LoanApp(root / "app")
    store = root / "store"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DISPLAY", xdisplay)
        app.start()
        try:
            result = mm(
                "--store",
                str(store),
                "record",
                "loan",
                "--observe",
                "0.5",
                "--",
                *agent_command(app),
            )
            assert result.returncode == 0, result.stderr
            assert len(app.records()) == 1
        finally:
            app.stop()
    yield app, store


@pytest.fixture
def loan(loan_recording: tuple[LoanApp, Path], isolated_store: Path) -> Iterator[LoanApp]:
    """The recorded `loan` in this test's store, the app started fresh with nothing submitted."""
    app, recorded = loan_recording
    shutil.copytree(recorded, isolated_store, dirs_exist_ok=True)
    app.out.unlink(missing_ok=True)
    app.start()
    yield app
    app.stop()


# ---- stores on a small or read-only file system -----------------------------------------


class Mount:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read_only(self) -> None:
        _run_mount("-o", "remount,ro", str(self.path))

    def fill(self) -> None:
        """Use up every free byte."""
        with open(self.path / "filler", "wb", buffering=0) as f:
            for size in (65536, 1):
                with contextlib.suppress(OSError):
                    while True:
                        f.write(b"\0" * size)


def _run_mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=True)


@pytest.fixture
def tmpfs_store(isolated_store: Path) -> Iterator[Mount]:
    """The test's store on its own 4 MB tmpfs (root only; skipped where mounting is not
    permitted, e.g. an unprivileged container)."""
    isolated_store.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    try:
        _run_mount("-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(isolated_store))
    except subprocess.CalledProcessError as e:
        pytest.skip(f"cannot mount a tmpfs here ({e.stderr.strip() or 'not permitted'})")
    try:
        yield Mount(isolated_store)
    finally:
        subprocess.run(["umount", "-l", str(isolated_store)], capture_output=True)
