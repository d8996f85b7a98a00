"""Typed text reaches the app whole: ASCII through pyautogui, the rest bound to a keycode."""

from __future__ import annotations

from typing import Any

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
