"""A process killed (-9) in the middle of saving or while holding a lock: the store is
never left with a half-written recording, and no lock outlives its process."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mmcli.desktop.display import display_lock
from mmcli.errors import LockBusy
from mmcli.model import Recording
from mmcli.store import recordings as store_module
from mmcli.store.recordings import Store
from tests.helpers import sample_recording

ROOT = Path(__file__).resolve().parents[2]


def _version(tag: str, steps: int) -> tuple[Recording, dict[str, bytes]]:
    """A recording whose command and thumbnails all carry `tag`."""
    base = sample_recording("crash")
    chain = [base.steps[i % 4] for i in range(steps)]
    base.steps = [
        replace(s, id=n, parent=n - 1 if n else None, thumbnail=f"{tag}-{n}.png")
        for n, s in enumerate(chain)
    ]
    base.command = ["agent", tag]
    return base, {f"{tag}-{n}.png": tag.encode() * 5000 for n in range(steps)}


class _CrashAt:
    """Counts the store's file-system operations and SIGKILLs the process at the Nth,
    before it happens; a write is torn: half its bytes reach the file first."""

    def __init__(self, point: int) -> None:
        self.point = point
        self.count = 0

    def tick(self, torn: Callable[[], None] | None = None) -> None:
        self.count += 1
        if self.count == self.point:
            if torn is not None:
                torn()
            os.kill(os.getpid(), signal.SIGKILL)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("replace", "fsync", "unlink", "mkdir", "rename"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, self._wrap(real))
        real_open = open

        def hooked_open(*args: Any, **kwargs: Any) -> _TornFile:
            self.tick()
            return _TornFile(real_open(*args, **kwargs), self)

        monkeypatch.setattr(store_module, "open", hooked_open, raising=False)

    def _wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def hooked(*args: Any, **kwargs: Any) -> Any:
            self.tick()
            return real(*args, **kwargs)

        return hooked


class _TornFile:
    def __init__(self, f: Any, crash: _CrashAt) -> None:
        self.f = f
        self.crash = crash

    def write(self, data: bytes) -> int:
        self.crash.tick(lambda: (self.f.write(data[: len(data) // 2]), self.f.flush()))
        return int(self.f.write(data))

    def flush(self) -> None:
        self.f.flush()

    def fileno(self) -> int:
        return int(self.f.fileno())

    def __enter__(self) -> _TornFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()


def _save_crashing_at(point: int, root: Path, rec: Recording, thumbs: dict[str, bytes]) -> bool:
    """Save in a forked child that kills itself at the `point`th operation; True if it
    died before the save returned."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            with pytest.MonkeyPatch.context() as mp:
                _CrashAt(point).install(mp)
                store = Store(root)
                with store.lock("crash"):
                    store.save(rec, thumbs)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0
    return False


def test_kill_9_at_every_step_of_a_save_leaves_a_whole_recording(isolated_store: Path) -> None:
    old, old_thumbs = _version("old", 3)
    new, new_thumbs = _version("new", 5)
    seen = set()
    point = 0
    while True:
        point += 1
        assert point < 200
        shutil.rmtree(isolated_store, ignore_errors=True)
        Store(isolated_store).save(old, old_thumbs)
        crashed = _save_crashing_at(point, isolated_store, new, new_thumbs)
        store = Store(isolated_store)
        assert store.names() == ["crash"]
        loaded = store.load("crash")
        tag = loaded.command[1]
        assert loaded == (old if tag == "old" else new)
        for step in loaded.steps:
            assert step.thumbnail is not None
            assert (
                store.thumbs.folder("crash") / step.thumbnail
            ).read_bytes() == tag.encode() * 5000
        seen.add(tag)
        if not crashed:
            break
    assert seen == {"old", "new"}
    assert point > 10  # every write, fsync and rename of the save was a crash point


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    assert process.wait(10) == -signal.SIGKILL


SAVE_LOCK_HOLDER = """
import sys, time
from mmcli.store.recordings import Store
with Store(sys.argv[1]).lock("held"):
    print("ready", flush=True)
    time.sleep(60)
"""

DISPLAY_LOCK_HOLDER = """
import sys, time
from mmcli.desktop.display import display_lock
with display_lock(display=sys.argv[1]):
    print("ready", flush=True)
    time.sleep(60)
"""


def test_a_store_lock_dies_with_its_process(isolated_store: Path) -> None:
    holder = _start(SAVE_LOCK_HOLDER, str(isolated_store))
    with (
        pytest.raises(LockBusy, match="being written by another mm"),
        Store(isolated_store).lock("held", timeout=0.2),
    ):
        pass
    _kill(holder)
    started = time.monotonic()
    with Store(isolated_store).lock("held", timeout=0):
        pass
    assert time.monotonic() - started < 0.5


def test_a_display_lock_dies_with_its_process() -> None:
    display = f":mm-fault-{os.getpid()}"
    holder = _start(DISPLAY_LOCK_HOLDER, display)
    with (
        pytest.raises(LockBusy, match=f"pid {holder.pid}"),
        display_lock(wait=0.2, display=display),
    ):
        pass
    _kill(holder)
    with display_lock(wait=0, display=display):
        pass
