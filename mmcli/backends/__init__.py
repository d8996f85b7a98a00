"""OS access behind one small interface: grab the screen, read the pointer, perform input.

`open_backend()` picks the implementation at run time (X11 today); tests use `FakeBackend`.

May import: the vocabulary, `screen`, `store` (and `desktop`, its own layer).
"""

from __future__ import annotations

from mmcli.backends.base import Backend, in_failsafe_corner
from mmcli.backends.fake import FakeBackend


def open_backend() -> Backend:
    from mmcli.backends.x11 import X11Backend

    return X11Backend()


__all__ = ["Backend", "FakeBackend", "in_failsafe_corner", "open_backend"]
