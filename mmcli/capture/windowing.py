"""What the window system tells of the window an action goes to, as a capture keeps it:
which window (`window_of`), the windows over it and its app's others (`around`), and
their title bars with their titles (`titles`). Nothing where the window system says
nothing (no window manager, a VNC desktop)."""

from __future__ import annotations

from collections.abc import Sequence

from mmcli.backends.base import Backend
from mmcli.capture.steps import Capture
from mmcli.model import Action
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import (
    MAX_OVER,
    MAX_TITLES,
    Over,
    WindowRef,
    over_window,
    own_windows,
    title_band,
)


def window_of(backend: Backend, action: Action) -> WindowRef | None:
    """The window an action went to: the one under its point, or, for keys, the one that
    had the keyboard."""
    if action.point is not None:
        return backend.window_at(*action.point)
    return backend.keyboard_window()


def around(backend: Backend, window: WindowRef | None) -> tuple[tuple[Over, ...], tuple[Over, ...]]:
    """The windows over part of `window` now, and the other windows of its app, as the
    window system stacks them (`Step.above`, `Step.own`)."""
    stack = backend.stack() if window is not None else None
    if stack is None or window is None:
        return (), ()
    above = over_window(stack, window) or []
    own = own_windows(stack, window)
    return (
        tuple(Over.of(w) for w in above[:MAX_OVER]),
        tuple(Over.of(w) for w in own[:MAX_OVER]),
    )


def titles(backend: Backend, window: WindowRef | None) -> tuple[tuple[Rect, str], ...]:
    """The title bars of `window` and its app's other windows, with their titles as the
    window system tells them (`Capture.titles`)."""
    stack = backend.stack() if window is not None else None
    if stack is None or window is None:
        return ()
    task = [w for w in stack if w.ref == window]
    found = []
    for w in [*task, *own_windows(stack, window)][:MAX_TITLES]:
        band = title_band(w)
        if band is None:
            continue
        title = backend.window_title_at(band.x + band.w // 2, band.y + band.h // 2)
        if title:
            found.append((band, title))
    return tuple(found)


def last_titles(backend: Backend, captures: Sequence[Capture]) -> tuple[tuple[Rect, str], ...]:
    """The title bars of the last window the task acted in that is still there (a
    dialog's OK closed the dialog: its main window's title bar is the outcome's)."""
    asked: set[WindowRef] = set()
    for capture in reversed(captures):
        if capture.window is None or capture.window in asked:
            continue
        asked.add(capture.window)
        found = titles(backend, capture.window)
        if found:
            return found
    return ()
