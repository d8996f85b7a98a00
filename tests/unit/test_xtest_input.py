"""`mm act`'s lean input (`backends/xtest.py`): key names and characters to keysyms and
keys, what goes on the wire for each action, and what is released or unbound when an
action is interrupted. The real display is in tests/e2e/test_typing_keymap.py."""

from __future__ import annotations

from typing import Any

import pytest
import Xlib.XK

from mmcli.backends import xtest
from mmcli.backends.xtest import (
    BUTTON_PRESS,
    BUTTON_RELEASE,
    KEY_PRESS,
    KEY_RELEASE,
    MOTION,
    SHIFT,
    Keymap,
    XTest,
)
from mmcli.cli.fastact import FAST_KEYS

X_NAMES = {
    **dict.fromkeys(("enter", "return"), "Return"),
    "tab": "Tab",
    "space": "space",
    "backspace": "BackSpace",
    **dict.fromkeys(("delete", "del"), "Delete"),
    **dict.fromkeys(("esc", "escape"), "Escape"),
    **{k: k.capitalize() for k in ("left", "up", "right", "down", "home", "end", "insert")},
    **dict.fromkeys(("pageup", "pgup"), "Page_Up"),
    **dict.fromkeys(("pagedown", "pgdn"), "Page_Down"),
    **dict.fromkeys(("shift", "shiftleft"), "Shift_L"),
    "shiftright": "Shift_R",
    **dict.fromkeys(("ctrl", "ctrlleft"), "Control_L"),
    "ctrlright": "Control_R",
    **dict.fromkeys(("alt", "altleft"), "Alt_L"),
    "altright": "Alt_R",
    **dict.fromkeys(("win", "winleft"), "Super_L"),
    "winright": "Super_R",
    "capslock": "Caps_Lock",
    "numlock": "Num_Lock",
    "scrolllock": "Scroll_Lock",
    **dict.fromkeys(("printscreen", "print", "prtsc", "prtscr", "prntscrn"), "Print"),
    **{k: k.capitalize() for k in ("pause", "select", "execute", "help")},
    "apps": "Menu",
    **{f"num{i}": f"KP_{i}" for i in range(10)},
    **{k: f"KP_{k.capitalize()}" for k in ("multiply", "add", "separator", "subtract")},
    **{k: f"KP_{k.capitalize()}" for k in ("decimal", "divide")},
    **{f"f{i}": f"F{i}" for i in range(1, 25)},
}
"""The X keysym names pyautogui's X11 layer gives each key name."""


def test_key_names_have_the_keysyms_pyautogui_gives_them() -> None:
    assert set(xtest.NAMED_KEYS) == set(X_NAMES)
    for name, x_name in X_NAMES.items():
        assert xtest.key_keysym(name) == Xlib.XK.string_to_keysym(x_name), name
        assert xtest.key_keysym(name.upper()) == xtest.key_keysym(name)


def test_every_key_the_fast_path_takes_has_a_keysym() -> None:
    for key in FAST_KEYS:
        assert key in xtest.NAMED_KEYS or len(key) == 1, key
    assert xtest.key_keysym("a") == ord("a")
    assert xtest.key_keysym("A") == ord("A")
    assert xtest.needs_shift("A") and xtest.needs_shift("?")
    assert not xtest.needs_shift("a") and not xtest.needs_shift("enter")


def test_characters_are_typed_with_their_own_keysym_or_their_key() -> None:
    assert xtest.char_keysym("\n") == xtest.char_keysym("\r") == 0xFF0D
    assert xtest.char_keysym("\t") == 0xFF09
    assert xtest.char_keysym("é") == 0xE9
    assert xtest.char_keysym("€") == 0x010020AC


# pc105 as Xvfb has it: '<' on the comma key's shifted level and on a key of its own.
ROWS = [[ord("a"), ord("A")], [ord(","), ord("<")], [ord("<"), ord(">")], [], [SHIFT], []]
A, COMMA, LESS, SPARE, SHIFT_KEY, SPARE2 = range(8, 14)


def test_the_keymap_finds_a_keysym_at_its_lowest_level() -> None:
    keymap = Keymap(8, ROWS)
    assert keymap.at[ord("<")] == (LESS, 0)  # not (COMMA, 1): pyautogui's '<' gave '>'
    assert keymap.at[ord(">")] == (LESS, 1)
    assert keymap.at[ord("A")] == (A, 1)
    assert keymap.spare == [SPARE, SPARE2]
    assert keymap.width == 2


class Wire(XTest):
    """An `XTest` with no display: what it would send, in order."""

    def __init__(self, rows: list[list[int]] = ROWS, fail_at: int | None = None) -> None:
        self.keymap = Keymap(8, rows)
        self.sent: list[tuple[Any, ...]] = []
        self.fail_at = fail_at

    def _fake(self, event: int, detail: int, x: int = 0, y: int = 0) -> None:
        if self.fail_at is not None and len(self.sent) == self.fail_at:
            self.fail_at = None  # Ctrl-C once
            raise KeyboardInterrupt
        self.sent.append((event, detail, x, y) if event == MOTION else (event, detail))

    def _sync(self) -> None:
        pass

    def _map(self, code: int, keysym: int) -> None:
        self.sent.append(("map", code, keysym))

    def pointer(self) -> tuple[int, int]:
        return (7, 9)


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xtest.time, "sleep", lambda s: None)


def test_typing_shifts_only_what_needs_it_and_binds_what_is_on_no_key() -> None:
    wire = Wire()
    wire.type("aA<é,", 0)
    assert wire.sent == [
        (KEY_PRESS, A), (KEY_RELEASE, A),
        (KEY_PRESS, SHIFT_KEY), (KEY_PRESS, A), (KEY_RELEASE, A), (KEY_RELEASE, SHIFT_KEY),
        (KEY_PRESS, LESS), (KEY_RELEASE, LESS),
        ("map", SPARE, 0xE9), (KEY_PRESS, SPARE), (KEY_RELEASE, SPARE), ("map", SPARE, 0),
        (KEY_PRESS, COMMA), (KEY_RELEASE, COMMA),
    ]  # fmt: skip


def test_more_characters_on_no_key_than_spare_keycodes_are_bound_in_turns() -> None:
    wire = Wire()
    wire.type("éßé€", 0)
    maps = [s for s in wire.sent if s[0] == "map"]
    assert maps == [
        ("map", SPARE, 0xDF), ("map", SPARE2, 0xE9), ("map", SPARE, 0), ("map", SPARE2, 0),
        ("map", SPARE, 0x010020AC), ("map", SPARE, 0),
    ]  # fmt: skip
    presses = [s[1] for s in wire.sent if s[0] == KEY_PRESS]
    assert presses == [SPARE2, SPARE, SPARE2, SPARE]


def test_no_spare_keycode_is_a_display_error() -> None:
    from mmcli.errors import DisplayError

    with pytest.raises(DisplayError, match="no free keycode"):
        Wire(rows=[[ord("a")]]).type("é", 0)


def test_pointer_actions_move_before_each_press_and_release() -> None:
    wire = Wire()
    wire.give({"kind": "click", "x": 5, "y": 6, "button": "right", "clicks": 2})
    move = (MOTION, 0, 5, 6)
    once = [move, (BUTTON_PRESS, 3), move, (BUTTON_RELEASE, 3)]
    assert wire.sent == once * 2
    wire.sent.clear()
    wire.give({"kind": "scroll", "amount": -2})  # at the pointer
    here = (MOTION, 0, 7, 9)
    assert wire.sent == [here, (BUTTON_PRESS, 5), here, (BUTTON_RELEASE, 5)] * 2
    wire.sent.clear()
    wire.give({"kind": "drag", "x": 0, "y": 0, "x2": 100, "y2": 10})
    assert wire.sent[:2] == [(MOTION, 0, 0, 0), (BUTTON_PRESS, 1)]
    assert [s for s in wire.sent if s[0] == MOTION][1:] == [
        *((MOTION, 0, 10 * i, i) for i in range(1, 11)),
        (MOTION, 0, 100, 10),
    ]
    assert wire.sent[-1] == (BUTTON_RELEASE, 1)


def test_hotkey_presses_in_order_and_releases_in_reverse() -> None:
    wire = Wire(rows=[*ROWS, [0xFFE3]])
    ctrl = 14
    wire.give({"kind": "hotkey", "keys": ["ctrl", "A"]})
    assert wire.sent == [
        (KEY_PRESS, ctrl),
        (KEY_PRESS, SHIFT_KEY), (KEY_PRESS, A), (KEY_RELEASE, SHIFT_KEY),  # as pyautogui
        (KEY_RELEASE, A), (KEY_RELEASE, ctrl),
    ]  # fmt: skip


def test_an_interrupted_hotkey_releases_what_it_held() -> None:
    wire = Wire(rows=[*ROWS, [0xFFE3]], fail_at=1)
    with pytest.raises(KeyboardInterrupt):
        wire.hotkey(["ctrl", "a"])
    assert wire.sent == [(KEY_PRESS, 14), (KEY_RELEASE, 14)]


def test_an_interrupted_drag_releases_the_button() -> None:
    wire = Wire(fail_at=4)
    with pytest.raises(KeyboardInterrupt):
        wire.drag((0, 0), (50, 50))
    assert wire.sent[-2:] == [(MOTION, 0, 50, 50), (BUTTON_RELEASE, 1)]


def test_an_interrupted_typing_unbinds_its_keycodes() -> None:
    wire = Wire(fail_at=1)
    with pytest.raises(KeyboardInterrupt):
        wire.type("é", 0)
    assert wire.sent == [("map", SPARE, 0xE9), ("map", SPARE, 0)]


def test_a_named_key_on_no_key_is_bound_for_its_press() -> None:
    wire = Wire()
    wire.press(["f5"])
    assert wire.sent == [
        ("map", SPARE, 0xFFC2), (KEY_PRESS, SPARE), (KEY_RELEASE, SPARE), ("map", SPARE, 0)
    ]  # fmt: skip


def test_typing_interrupted_while_the_keymap_settles_unbinds_its_keycodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C in the pause after binding, before the keys: the `with` body was never
    entered, and the keycodes are unbound all the same."""

    def ctrl_c(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(xtest.time, "sleep", ctrl_c)
    wire = Wire()
    with pytest.raises(KeyboardInterrupt):
        wire.type("é", 0)
    assert wire.sent == [("map", SPARE, 0xE9), ("map", SPARE, 0)]


def test_key_names_valid_and_a_name_with_no_key_given_as_nothing() -> None:
    """As pyautogui's X11 layer has them: `mm act` refuses what it does not know, and a
    recorded press of a name no key has here (pyautogui's `volumeup`) does nothing."""
    keys = XTest.__new__(XTest)
    assert keys.valid_key("enter") and keys.valid_key("F13") and keys.valid_key("a")
    assert keys.valid_key("\t") and keys.valid_key("~")
    assert not keys.valid_key("notakey") and not keys.valid_key("é")
    assert not keys.valid_key("A")  # a capital is typed, not pressed as a key name
    assert xtest._known(["ctrl", "volumeup", "a", "A"]) == ["ctrl", "a", "A"]
