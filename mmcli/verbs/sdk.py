"""An SDK call's run: `Engine.__call__` performs each task in a run of its document,
opened here as the CLI's verbs open theirs.

The engine is the Python caller's front end, as `cli/` is the shell's: it parses the
call (tags, params), holds its own lock, and asks this verb for the run. The run is a
replay of the document (`Intent.REPLAY`): marked in use throughout, so `mm rm`, `mm mv`,
`mm import --overwrite` and `mm prune` leave the document alone meanwhile, and journaled
by the engine with the call's outcome. A name that is not a recording's name is refused
before anything is opened (`store.lifecycle.check`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mmcli.model import SDK_KIND
from mmcli.store.lifecycle import Intent, OpenRun, begin
from mmcli.store.recordings import Store


@contextlib.contextmanager
def call(store: Store, name: str) -> Iterator[OpenRun]:
    """The run of document `name` in `store` for one engine call, open for the block."""
    with begin(store, name, Intent.REPLAY, SDK_KIND) as opened:
        yield opened
