"""Typed text reaches the app whole: ASCII through pyautogui, the rest bound to a keycode."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from mmcli.backends import x11


def test_text_is_split_into_ascii_runs_and_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    typed: list[tuple[str, str]] = []

    class Gui:
        def write(self, text: str, **kwargs: Any) -> None:
            typed.append(("pyautogui", text))

    monkeypatch.setattr(x11, "type_unicode", lambda text: typed.append(("remap", text)))
    x11.type_text(Gui(), "Zoë Émile → ok")
    assert typed == [
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

    class Platform:
        keyboardMapping: ClassVar[dict[str, int]] = {"<": 94, ">": 60, "a": 38}
        _display = Display()

    class Gui:
        platformModule = Platform()

        def isShiftCharacter(self, char: str) -> bool:
            return char in "<>"

        def write(self, text: str, **kwargs: Any) -> None:
            typed.append(("pyautogui", text))

    monkeypatch.setattr(x11, "type_unicode", lambda text: typed.append(("remap", text)))
    x11.type_text(Gui(), "a<a>")
    assert typed == [("pyautogui", "a"), ("remap", "<"), ("pyautogui", "a>")]
