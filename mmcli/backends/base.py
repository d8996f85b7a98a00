"""The interface every screen/input backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from mmcli.fingerprint import Frame, Rect
from mmcli.model import Action

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
