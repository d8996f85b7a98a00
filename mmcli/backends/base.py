"""The interface every screen/input backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

from mmcli.fingerprint import Frame
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
