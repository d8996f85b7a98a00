"""Ctrl-C that never lands in the middle of an X request.

python-xlib keeps its connection's I/O state in flags and locks that an exception raised
mid-request leaves set or held. The next request on that connection (the clean-up after
Ctrl-C: unbinding a keycode, releasing a button, ungrabbing the server) then waits for a
reply nothing reads, forever, and spins once the server has gone. Under `install`, SIGINT
raises at once anywhere else; when the main thread is inside python-xlib, once it has
left it (looked at every `HOLD_CHECK` seconds, by a timer that repeats: a look that
fires just before a blocking call starts is run only once that call returns, and the next
one interrupts it). A second Ctrl-C while one is held raises
at once: a server that never answers cannot keep `mm` from stopping.

Standard library only (`mm act` outside a recorder loads this: no `signal`, which loads
`enum`).
"""

from __future__ import annotations

import _signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

HOLD_CHECK = 0.005
"""Seconds between two looks at whether a held Ctrl-C can be raised (a request on a
healthy connection takes about a millisecond)."""


class _Held:
    def __init__(self) -> None:
        self.error: Callable[[], BaseException] = KeyboardInterrupt
        self.pending = False


_HELD = _Held()


def install(error: Callable[[], BaseException] = KeyboardInterrupt) -> None:
    """From now on SIGINT raises `error()` in the main thread, outside python-xlib."""
    _HELD.error, _HELD.pending = error, False
    _signal.signal(_signal.SIGALRM, _look_again)
    _signal.signal(_signal.SIGINT, _interrupted)


def in_xlib(frame: FrameType | None) -> bool:
    """Whether `frame` or one it was called from runs python-xlib's code."""
    xlib = sys.modules.get("Xlib")
    where = getattr(xlib, "__path__", None)
    if not where:
        return False
    roots = tuple(f"{p}/" for p in where)
    while frame is not None:
        if frame.f_code.co_filename.startswith(roots):
            return True
        frame = frame.f_back
    return False


def _interrupted(signum: int, frame: FrameType | None) -> None:
    if _HELD.pending or not in_xlib(frame):
        _raise()
    _HELD.pending = True
    _signal.setitimer(_signal.ITIMER_REAL, HOLD_CHECK, HOLD_CHECK)


def _look_again(signum: int, frame: FrameType | None) -> None:
    if _HELD.pending and not in_xlib(frame):
        _raise()


def _raise() -> None:
    _HELD.pending = False
    _signal.setitimer(_signal.ITIMER_REAL, 0)
    raise _HELD.error()
