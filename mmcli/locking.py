"""Advisory file locks (flock): released by the kernel when their process dies, so a
killed `mm` never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import time


def acquire(fd: int, timeout: float, poll: float = 0.05) -> bool:
    """Take an exclusive lock on `fd`, waiting up to `timeout` seconds; False if another
    process still holds it then."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll)
