"""The display: one `mm` drives it at a time, and a virtual one can be started on demand."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from mmcli.errors import DisplayError, LockBusy
from mmcli.locking import acquire

LOCK_WAIT = 60.0


def _dummy_xauthority() -> bytes:
    """One well-formed entry for a display that does not exist.

    python-xlib refuses to connect without an Xauthority file and prints a warning *on
    stdout* when the file has no entries; one unrelated entry silences both, and a server
    started without -auth (Xvfb here) accepts the connection.
    """

    def field(value: bytes) -> bytes:
        return len(value).to_bytes(2, "big") + value

    return (
        b"\x01\x00"
        + field(b"mm-none")
        + field(b"65535")
        + field(b"MIT-MAGIC-COOKIE-1")
        + field(bytes(16))
    )


def ensure_xauthority() -> None:
    """Point XAUTHORITY at a usable file when the user's is missing or empty."""
    current = Path(os.environ.get("XAUTHORITY") or Path.home() / ".Xauthority")
    with contextlib.suppress(OSError):
        if current.stat().st_size > 0:
            return
    path = Path(tempfile.gettempdir()) / f"mm-xauthority-{os.getuid()}"
    if not path.exists() or path.stat().st_size == 0:
        tmp = path.with_suffix(f".{os.getpid()}")
        tmp.write_bytes(_dummy_xauthority())
        os.replace(tmp, path)
    os.environ["XAUTHORITY"] = str(path)


def _lock_path(display: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", display) or "none"
    return Path(tempfile.gettempdir()) / f"mm-display-{safe}.lock"


@contextlib.contextmanager
def display_lock(
    wait: float = LOCK_WAIT,
    display: str | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the exclusive right to drive `display` (default: $DISPLAY).

    A second `mm record`/`mm replay` on the same display waits up to `wait` seconds, then
    fails naming the process that holds it. The lock is an flock: it dies with its process,
    so a killed `mm` never leaves a stale lock behind.
    """
    display = display if display is not None else os.environ.get("DISPLAY", "")
    path = _lock_path(display)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if not acquire(fd, 0) and on_wait is not None and wait > 0:
            on_wait(f"display {display} is in use by another mm{_read_holder(path)}; "
                    f"waiting up to {wait:.0f}s")  # fmt: skip
        if not acquire(fd, wait, poll=0.1):
            raise LockBusy(
                f"display {display} is in use by another mm{_read_holder(path)}; waited {wait:.0f}s"
            )
        pid = f"{os.getpid()}\n".encode()
        os.pwrite(fd, pid, 0)  # never empty for a waiter reading it: write, then trim
        os.ftruncate(fd, len(pid))
        yield
    finally:
        os.close(fd)


def _read_holder(path: Path) -> str:
    """The holder as ' (pid N)', or empty while it has not written its pid yet."""
    with contextlib.suppress(OSError):
        text = path.read_text().strip()
        if text.isdigit():
            return f" (pid {int(text)})"
    return ""


def start_xvfb(width: int = 1920, height: int = 1080) -> tuple[subprocess.Popen[bytes], str]:
    """Start an Xvfb on a free display number; return it and its display name (":N") once
    it accepts clients (-displayfd: Xvfb picks the number and writes it when ready)."""
    if shutil.which("Xvfb") is None:
        raise DisplayError("Xvfb is not installed (apt-get install xvfb)")
    read_fd, write_fd = os.pipe()
    process = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_fd),
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    if not number:
        process.kill()
        raise DisplayError("Xvfb did not start")
    return process, f":{number}"


def stop_xvfb(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()


class VirtualDisplay:
    """An Xvfb server started for the lifetime of a `with` block; sets DISPLAY inside it."""

    def __init__(self, width: int = 1920, height: int = 1080) -> None:
        self.size = (width, height)
        self.process: subprocess.Popen[bytes] | None = None
        self.display = ""
        self._saved: dict[str, str | None] = {}

    def __enter__(self) -> VirtualDisplay:
        self.process, self.display = start_xvfb(*self.size)
        for key in ("DISPLAY", "XAUTHORITY"):
            self._saved[key] = os.environ.get(key)
        os.environ["DISPLAY"] = self.display
        ensure_xauthority()
        return self

    def __exit__(self, *exc: object) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if self.process is not None:
            stop_xvfb(self.process)
