"""History lines a run could not write to its store, kept on this machine until a later
run of the same recording on the same store writes them first.

A run whose store stopped answering after it acted has done its task: it exits 5 ("done,
not saved: do not retry"), never 1 (a retry would do the task twice), and what it could
not journal is not lost. The lines wait in `$XDG_STATE_HOME/mm/unjournaled/` (default
`~/.local/state/mm/unjournaled/`), one file a store and recording, readable by this user
alone; each is a history line as it would have been written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

MAX_KEPT = 1 << 20
"""Bytes of lines kept for one recording: past this, older ones are not sent again."""


def folder() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "mm" / "unjournaled"


def _file(where: str, name: str) -> Path:
    digest = hashlib.sha256(f"{where}\0{name}".encode()).hexdigest()[:24]
    return folder() / f"{digest}.jsonl"


def keep(where: str, name: str, entry: dict[str, Any]) -> Path:
    """Keep `entry` (a history line of recording `name` in the store `where`) for later;
    where it is kept. `OSError` when even that cannot be written."""
    path = _file(where, name)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = json.dumps({"store": where, **entry}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(line)
    return path


def waiting(where: str, name: str) -> list[dict[str, Any]]:
    """The lines kept for `name` in `where`, oldest first (none: nothing waits)."""
    path = _file(where, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_KEPT + 1)[:MAX_KEPT]
    entries = []
    for line in data.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict) and entry.pop("store", None) == where:
                entries.append(entry)
    return entries


def sent(where: str, name: str) -> None:
    """The lines kept for `name` in `where` are in the store now: forget them."""
    with contextlib.suppress(FileNotFoundError):
        _file(where, name).unlink()
