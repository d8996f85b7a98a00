"""Typed text reaches the app whole: ASCII through pyautogui's X11 layer, the rest bound to
a keycode."""

from __future__ import annotations

from typing import ClassVar

import pytest

from mmcli.backends import xinput as x11


class Keys:
    """pyautogui's X11 layer, noting each key pressed and released."""

    def __init__(self, typed: list[tuple[str, str]]) -> None:
        self.typed = typed
        self.down: list[str] = []

    def _keyDown(self, key: str) -> None:
        self.down.append(key)

    def _keyUp(self, key: str) -> None:
        assert self.down.pop() == key, "a key released before it was pressed"
        self.typed.append(("pyautogui", key))


def joined(typed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Consecutive keys of the same channel as one run."""
    out: list[tuple[str, str]] = []
    for how, text in typed:
        if out and out[-1][0] == how == "pyautogui":
            out[-1] = (how, out[-1][1] + text)
        else:
            out.append((how, text))
    return out


def test_text_is_split_into_ascii_runs_and_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    typed: list[tuple[str, str]] = []

    class Gui:
        platformModule = Keys(typed)

    monkeypatch.setattr(x11, "type_unicode", lambda text, pause: typed.append(("remap", text)))
    x11.type_text(Gui(), "Zoë Émile → ok")
    assert joined(typed) == [
        ("pyautogui", "Zo"),
        ("remap", "ë"),
        ("pyautogui", " "),
        ("remap", "É"),
        ("pyautogui", "mile "),
        ("remap", "→"),
        ("pyautogui", " ok"),
    ]


def test_keysyms_of_latin1_and_other_characters() -> None:
    assert x11.keysym_of("a") == ord("a")
    assert x11.keysym_of("É") == 0xC9
    assert x11.keysym_of("→") == 0x01002192


def test_a_character_the_keymap_shifts_into_another_is_remapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    typed: list[tuple[str, str]] = []

    class Display:  # Xvfb's keymap: keycode 94 is less / greater, 60 period / greater
        def keycode_to_keysym(self, code: int, level: int) -> int:
            known = {(94, 0): ord("<"), (94, 1): ord(">"), (60, 1): ord(">"), (38, 0): ord("a")}
            return known.get((code, level), 0)

    class Platform(Keys):
        keyboardMapping: ClassVar[dict[str, int]] = {"<": 94, ">": 60, "a": 38}
        _display = Display()

    class Gui:
        platformModule = Platform(typed)

        def isShiftCharacter(self, char: str) -> bool:
            return char in "<>"

    monkeypatch.setattr(x11, "type_unicode", lambda text, pause: typed.append(("remap", text)))
    x11.type_text(Gui(), "a<a>")
    assert joined(typed) == [("pyautogui", "a"), ("remap", "<"), ("pyautogui", "a>")]


def test_keys_are_typed_no_faster_than_the_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release and the next press never share an X timestamp: toolkits would read a
    repeated key as auto-repeat and drop it (see tests/e2e/test_typing_pace.py)."""
    typed: list[tuple[str, str]] = []
    slept: list[float] = []

    class Gui:
        platformModule = Keys(typed)

    monkeypatch.setattr(x11.time, "sleep", slept.append)
    x11.type_text(Gui(), "5000", 0.012)
    assert joined(typed) == [("pyautogui", "5000")]
    assert slept == [0.012] * 3


def test_typing_pause_keeps_the_recorded_pace_within_bounds() -> None:
    from mmcli.model import Action, ActionKind
    from mmcli.pace import KEY_PAUSE_MAX, KEY_PAUSE_MIN, KEY_PAUSE_UNKNOWN

    def pause(ms: int | None) -> float:
        return Action(ActionKind.TYPE, text="x", key_ms=ms).typing_pause()

    assert pause(12) == 0.012
    assert pause(0) == KEY_PAUSE_MIN > 0
    assert pause(5000) == KEY_PAUSE_MAX
    assert pause(None) == KEY_PAUSE_UNKNOWN
