"""The interface every screen/input backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from mmcli.fingerprint import Frame
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
