"""A VNC server's lag remembered between runs on this machine.

A connection learns its server's lag from its first clicks (`serverlag`); until three
have told one, a screen counts as still `SERVER_LAG` after the last change alone, and a
server that sends its updates 400 ms late had its first two clicks judged on a screen it
had not brought up to date. The lags a connection learned are kept when it closes, in
`$XDG_STATE_HOME/mm/vnc-lags.json` (default `~/.local/state/mm/`), readable by this user
alone, one entry a server (`HOST:PORT`), and the next connection to that server starts
from them. A remembered lag only ever lengthens the wait (the stillness of `SERVER_LAG`
holds whatever it says), and the connection's own clicks replace it as they tell theirs.
A file that cannot be read, or holds anything but lags, is as good as none.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

from mmcli.store.storefs import atomic_write

FILE_NAME = "vnc-lags.json"
MAX_SERVERS = 64
"""Servers remembered at most: the ones connected to last."""
MAX_LAG = 5.0
"""A remembered lag longer than this (s) is no lag a server told: the file is not ours."""
MAX_AGE = 30 * 24 * 3600
"""A server's lags are forgotten this long (s) after they were learned."""
MAX_BYTES = 1 << 16


def folder() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "mm"


def recalled(server: str) -> list[float]:
    """The lags last learned of `server` (`HOST:PORT`), oldest first; none when not known,
    too old, or the file is unreadable."""
    entry = _read().get(server)
    if not isinstance(entry, dict):
        return []
    lags, at = entry.get("lags"), entry.get("at")
    if not isinstance(at, int | float) or not 0 <= time.time() - at <= MAX_AGE:
        return []
    if not isinstance(lags, list) or not all(_is_lag(x) for x in lags):
        return []
    return [float(x) for x in lags]


def remember(server: str, lags: Sequence[float]) -> None:
    """Keep `lags` as what `server` told last (nothing kept when there are none). A file
    that cannot be written is left as it is: a remembered lag saves a wait, no more."""
    if not lags:
        return
    entries = {k: v for k, v in _read().items() if k != server and isinstance(v, dict)}
    entries[server] = {"lags": [round(x, 4) for x in lags], "at": int(time.time())}
    newest = sorted(entries.items(), key=lambda kv: _at(kv[1]))[-MAX_SERVERS:]
    path = folder() / FILE_NAME
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.is_symlink():
            return
        atomic_write(path, json.dumps(dict(newest), sort_keys=True).encode())
        os.chmod(path, 0o600)


def _read() -> dict[str, object]:
    try:
        fd = os.open(folder() / FILE_NAME, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        return {}
    try:
        doc = json.loads(data)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _is_lag(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= MAX_LAG


def _at(entry: object) -> float:
    at = entry.get("at") if isinstance(entry, dict) else None
    return float(at) if isinstance(at, int | float) else 0.0
