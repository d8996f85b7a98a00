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
    MAX_VACATED,
    SHADOW,
    Over,
    WindowRef,
    over_window,
    own_windows,
    shown,
    title_band,
)


def window_of(backend: Backend, action: Action) -> WindowRef | None:
    """The window an action went to: the one under its point, or, for keys, the one that
    had the keyboard."""
    if action.point is not None:
        return backend.window_at(*action.point)
    return backend.keyboard_window()


def around(
    backend: Backend, window: WindowRef | None
) -> tuple[tuple[Over, ...], tuple[Over, ...], tuple[Rect, ...]]:
    """The windows over part of `window` now, and the other windows of its app, as the
    window system stacks them (`Step.above`, `Step.own`); and the frames of `window` and
    of those of its app (`Capture.frames`)."""
    stack = backend.stack() if window is not None else None
    if stack is None or window is None:
        return (), (), ()
    above = over_window(stack, window) or []
    own = own_windows(stack, window)
    frames = [w.frame for w in stack if w.ref == window] + [w.frame for w in own]
    return (
        tuple(Over.of(w) for w in above[:MAX_OVER]),
        tuple(Over.of(w) for w in own[:MAX_OVER]),
        tuple(frames[:MAX_OVER]),
    )


def vacated(backend: Backend, last: Capture | None) -> tuple[Rect, ...]:
    """Where the task's windows stood before the last action (`last`: the window it went
    to and that app's others), with their shadows' reach (`SHADOW`), and no window
    stands now but the desktop's: what the last action laid bare (`EndScreen.vacated`)."""
    if last is None or not last.frames:
        return ()
    stack = backend.stack()
    if stack is None:
        return ()
    standing = [w.frame for w in stack if w.kind != "DESKTOP"]
    gone = [f for f in last.frames if f not in standing]
    bare = [p for f in gone for p in shown(f.grow(SHADOW), standing)]
    return tuple(bare[:MAX_VACATED])


def under_pointer(
    backend: Backend, pointer: tuple[int, int], captures: Sequence[Capture]
) -> WindowRef | None:
    """The task's window under `pointer` now (`EndScreen.under`): one of the app's the
    task acted in. None: another app's window, the desktop, or nothing told."""
    window = backend.window_at(*pointer)
    classes = {c.window.wm_class for c in captures if c.window is not None}
    return window if window is not None and window.wm_class in classes else None


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
