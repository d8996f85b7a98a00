"""The recorded run is checked too: the keys that reached the display (X RECORD) must spell
what the agent said it typed. pyautogui cannot type characters outside ASCII on X11 and
drops them silently: an agent asked to type "José Núñez" typed "Jos Nez", and the
recording was saved with `type '{{customer}}'`. xdotool binds such characters to a spare
key for the instant of their press: the keymap change is recorded with the keys, and the
recording is kept."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import LoanApp, mm

pytestmark = pytest.mark.e2e

NAME = "José Núñez"


def record(store: Path, agent: str) -> tuple[int, str]:
    result = mm(
        "--store", str(store), "record", "customer", "--observe", "0",
        "--param", f"customer={NAME}", "--", "sh", "-c", agent,
    )  # fmt: skip
    return result.returncode, result.stderr


def test_a_name_pyautogui_could_not_type_is_not_recorded(loan_app: LoanApp, tmp_path: Path) -> None:
    loan_app.start()
    x, y = loan_app.center("Name")
    code = f"import pyautogui; pyautogui.click({x}, {y}); pyautogui.write({NAME!r})"
    code_rc, stderr = record(
        tmp_path / "store", f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    )
    assert code_rc == 6, stderr
    assert "the keys that reached the display are not what the agent typed" in stderr
    assert "10 characters reached the display as 7 key presses" in stderr
    assert "pyautogui cannot type characters outside ASCII" in stderr
    assert NAME not in stderr and "Jos" not in stderr  # a param's value is never told
    assert not (tmp_path / "store" / "customer.toml").exists()


def test_a_name_xdotool_typed_through_a_changed_keymap_is_recorded(
    loan_app: LoanApp, tmp_path: Path
) -> None:
    loan_app.start()
    x, y = loan_app.center("Name")
    code_rc, stderr = record(
        tmp_path / "store",
        f'xdotool mousemove {x} {y} click 1 && xdotool type "$MM_PARAM_CUSTOMER"',
    )
    assert code_rc == 0, stderr
    text = (tmp_path / "store" / "customer.toml").read_text()
    assert "{{customer}}" in text and "Jos" not in text
