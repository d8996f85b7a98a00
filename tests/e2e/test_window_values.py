"""Values from the window system are sanitised, never a reason to lose a run: a window
title holding a NUL byte and a terminal escape (any app may set them) is kept without
them, and the recording is saved (before: `not saved: window_title must be a title of at
most 1000 characters`, exit 1, the agent's run lost)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from tests.e2e.conftest import LoanApp, mm

pytestmark = pytest.mark.e2e

TITLE = "Acme\x00 Loan\x1b]0;pwned\x07\x1b[2J Intake"


def set_title(display: str, title: str) -> None:
    """Set the form window's WM_NAME and _NET_WM_NAME to `title`, bytes as given."""
    from Xlib import X, Xatom
    from Xlib import display as xdisplay

    d = xdisplay.Display(display)
    try:
        root = d.screen().root
        utf8 = d.intern_atom("UTF8_STRING")
        net_name = d.intern_atom("_NET_WM_NAME")
        for window in root.query_tree().children:
            name = window.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
            if name is not None and b"Acme Loan Intake" in bytes(name.value):
                data = title.encode("utf-8")
                window.change_property(Xatom.WM_NAME, Xatom.STRING, 8, data)
                window.change_property(net_name, utf8, 8, data)
        d.sync()
    finally:
        d.close()


def test_a_title_with_a_nul_and_an_escape_is_kept_clean(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    set_title(os.environ["DISPLAY"], TITLE)
    x, y = loan_app.center("Name")
    done = mm("record", "title", "--observe", "0", "--", "mm", "act", "click", str(x), str(y))
    assert done.returncode == 0, done.stderr
    kept = tomllib.loads((isolated_store / "title.toml").read_text())["window_title"]
    assert kept == "Acme Loan]0;pwned[2J Intake"
    assert "\x00" not in kept and "\x1b" not in kept
