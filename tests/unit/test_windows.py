"""Finding a moved window by the window system's account of it."""

from __future__ import annotations

from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import WindowRef, relocation

TASK = WindowRef("zenity.Zenity", Rect(80, 90, 400, 300))


def test_the_one_window_of_the_class_and_size_gives_the_offset() -> None:
    live = [
        WindowRef("xterm.XTerm", Rect(0, 0, 400, 300)),
        WindowRef("zenity.Zenity", Rect(140, 80, 400, 300)),
        WindowRef("zenity.Zenity", Rect(600, 90, 200, 100)),  # another size: another window
    ]
    assert relocation(TASK, live) == (60, -10)


def test_none_or_several_candidates_give_no_offset() -> None:
    assert relocation(TASK, [WindowRef("xterm.XTerm", TASK.rect)]) is None
    twins = [WindowRef("zenity.Zenity", Rect(x, 90, 400, 300)) for x in (140, 700)]
    assert relocation(TASK, twins) is None


def test_a_window_without_a_class_is_not_known_by_it() -> None:
    anonymous = WindowRef("", TASK.rect)
    assert relocation(anonymous, [WindowRef("", Rect(140, 90, 400, 300))]) is None
