"""The interface every screen/input backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mmcli.fingerprint import Frame, Rect
from mmcli.model import Action

if TYPE_CHECKING:
    from mmcli.input_watch import EventSource, Grabber

FAILSAFE_MARGIN = 0
"""How far (px) from a corner the pointer may be and still count as 'in the corner'."""


class Backend(ABC):
    """One display: its pixels, its pointer, its keyboard and mouse."""

    @abstractmethod
    def size(self) -> tuple[int, int]: ...

    @abstractmethod
    def grab(self) -> Frame: ...

    @abstractmethod
    def pointer(self) -> tuple[int, int]: ...

    @abstractmethod
    def move(self, x: int, y: int) -> None: ...

    @abstractmethod
    def perform(self, action: Action) -> None:
        """Perform `action` (already rendered: no placeholders left)."""

    def grab_rect(self, rect: Rect) -> np.ndarray:
        """The full-resolution BGRX pixels of a rectangle of the screen, (h, w, 4); works
        inside `perform_checked`'s check."""
        return self.grab().pixels[rect.y : rect.bottom, rect.x : rect.right]

    def perform_checked(self, action: Action, unchanged: Callable[[], bool]) -> bool:
        """Perform `action` only if `unchanged()` holds at the moment of acting; False if it
        did not (nothing was done). Backends that can hold the display still between the
        check and the action do so; this default only narrows the gap."""
        if not unchanged():
            return False
        self.perform(action)
        return True

    def workarea(self) -> Rect | None:
        """The part of the screen windows may use, less the desktop's panels (None: the
        whole screen, or not known)."""
        return None

    def focus_window_at(self, x: int, y: int) -> bool:
        """Give the keyboard focus to the window at (x, y) if another window has it, as a
        click there would (click-to-focus); True if the focus moved. Backends without a
        window manager to ask do nothing."""
        return False

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def open_grabber(self) -> Grabber:
        """Something with `grab()` and `close()` for another thread to grab the screen
        with (the backend's own grabber may not be shared between threads)."""
        return _SharedGrabber(self)

    def input_source(self) -> EventSource | None:
        """A source of the display's device events (`input_watch.EventSource`), or None
        where input cannot be watched. Raises `DisplayError` when it should be possible
        but fails."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def in_failsafe_corner(point: tuple[int, int], size: tuple[int, int]) -> bool:
    """True when the pointer is in a screen corner: the user's way to stop a replay."""
    x, y = point
    w, h = size
    m = FAILSAFE_MARGIN
    near_x = x <= m or x >= w - 1 - m
    near_y = y <= m or y >= h - 1 - m
    return near_x and near_y


class _SharedGrabber:
    def __init__(self, backend: Backend) -> None:
        self.grab = backend.grab

    def close(self) -> None:
        pass
