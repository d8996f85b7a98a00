"""The X11 backend shares its process with the program using mm (the SDK): it must leave
pyautogui's process-wide settings as that program set them."""

from __future__ import annotations

import time
import types
from collections.abc import Iterator

import pytest

from mmcli.model import Action, ActionKind

pytestmark = pytest.mark.e2e


@pytest.fixture
def settings_written() -> Iterator[list[str]]:
    """Each pyautogui setting written while the test runs, however briefly."""
    import pyautogui

    written: list[str] = []

    class Watched(types.ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            if name.isupper():
                written.append(name)
            super().__setattr__(name, value)

    pyautogui.__class__ = Watched
    try:
        yield written
    finally:
        pyautogui.__class__ = types.ModuleType


def test_the_backend_never_writes_a_pyautogui_setting(
    xdisplay: str, settings_written: list[str]
) -> None:
    """Not even for the time of one action: the program using mm may read them from another
    thread."""
    from mmcli.backends import open_backend

    with open_backend() as backend:
        backend.move(0, 0)
        for action in (
            Action(ActionKind.CLICK, x=400, y=300, clicks=2),
            Action(ActionKind.TYPE, text="ab <é>"),
            Action(ActionKind.PRESS, keys=("shift",), clicks=2),
            Action(ActionKind.HOTKEY, keys=("ctrl", "shift")),
            Action(ActionKind.SCROLL, x=400, y=300, amount=-2),
            Action(ActionKind.DRAG, x=300, y=300, x2=320, y2=310),
            Action(ActionKind.MOVE, x=410, y=290),
        ):
            backend.perform(action)
        assert backend.pointer() == (410, 290)
    assert settings_written == []


def test_the_backend_leaves_pyautogui_settings_alone(
    xdisplay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyautogui

    from mmcli.backends import open_backend

    monkeypatch.setattr(pyautogui, "PAUSE", 0.8)
    monkeypatch.setattr(pyautogui, "FAILSAFE", True)
    with open_backend() as backend:
        backend.move(400, 300)
        started = time.monotonic()
        for _ in range(3):
            backend.perform(Action(ActionKind.PRESS, keys=("shift",)))
        elapsed = time.monotonic() - started
    assert (pyautogui.PAUSE, pyautogui.FAILSAFE) == (0.8, True)
    assert elapsed < 1.6, f"mm's input took pyautogui's PAUSE: {elapsed:.2f} s for 3 keys"


def test_the_pointer_in_a_corner_is_not_pyautoguis_to_judge(
    xdisplay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mm's own fail-safe (replay stops between two actions with the pointer in a corner)
    is the one that counts: the program's FAILSAFE = True does not make mm's input raise,
    and is still True after."""
    import pyautogui

    from mmcli.backends import open_backend

    monkeypatch.setattr(pyautogui, "FAILSAFE", True)
    with open_backend() as backend:
        backend.move(0, 0)
        backend.perform(Action(ActionKind.CLICK, x=400, y=300))
        assert backend.pointer() == (400, 300)
    assert pyautogui.FAILSAFE is True
