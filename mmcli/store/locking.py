"""Advisory file locks (flock): released by the kernel when their process dies, so a
killed `mm` never leaves a stale lock behind; and the per-user folder where locks that are
not in a store live (the display lock)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import time
from pathlib import Path

from mmcli.errors import MMError


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


def runtime_dir() -> Path:
    """The user's own folder for locks: `$XDG_RUNTIME_DIR/mm` when that is set and is a
    folder of ours that only we can enter, else `mm-<uid>` in the temporary folder. Either
    is created mode 0700 and checked to be a real folder (not a link), owned by us, that
    nobody else can write to: other users cannot plant a link or a file in it.
    `MMError` (one line naming the path) when that cannot be had."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        with contextlib.suppress(MMError):
            _own_folder(Path(xdg), create=False)
            return _own_folder(Path(xdg) / "mm", create=True)
    return _own_folder(Path(tempfile.gettempdir()) / f"mm-{os.getuid()}", create=True)


def _own_folder(path: Path, create: bool) -> Path:
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    try:
        st = os.lstat(path)
    except OSError as e:
        raise MMError(f"{path}: cannot use it for locks ({e.strerror})") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise MMError(f"{path}: is not a folder (a link?); remove it so mm can keep its locks")
    if st.st_uid != os.getuid():
        raise MMError(f"{path}: belongs to another user; remove it so mm can keep its locks")
    if st.st_mode & 0o077:
        if not create:
            raise MMError(f"{path}: others may enter it")
        os.chmod(path, 0o700)  # ours: made by an older mm or by hand
    return path
