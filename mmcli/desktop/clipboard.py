"""The X clipboard, read when an agent pastes: what Ctrl+V will put into the app.

Agents often type long or non-ASCII text by setting the clipboard (pyperclip, `xclip`,
`xsel`) and pressing Ctrl+V or Shift+Insert. The recorder reads the CLIPBOARD selection
at that moment and records the paste as typed text, so that params and secrets are found
in it like in any typed text.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

READ_TIMEOUT = 2.0
"""Seconds to wait for the selection's owner to answer (a hung owner must not hang mm)."""

READERS = (
    ("xclip", "-o", "-selection", "clipboard"),
    ("xsel", "--clipboard", "--output"),
)

PASTE_CHORDS = (
    frozenset({"ctrl", "v"}),
    frozenset({"shift", "insert"}),
)
_ALIASES = {"ctrlleft": "ctrl", "ctrlright": "ctrl", "control": "ctrl", "shiftleft": "shift",
            "shiftright": "shift", "V": "v"}  # fmt: skip


def is_paste(keys: Sequence[str]) -> bool:
    """True for the chords that paste the clipboard: Ctrl+V and Shift+Insert."""
    chord = frozenset(_ALIASES.get(k, k.lower()) for k in keys)
    return chord in PASTE_CHORDS


def read_clipboard(timeout: float = READ_TIMEOUT) -> str | None:
    """The CLIPBOARD selection's text, or None when it is empty, not text, or unreadable
    (no owner, no xclip/xsel, the owner did not answer in time)."""
    for reader in READERS:
        if shutil.which(reader[0]) is None:
            continue
        try:
            out = subprocess.run(
                list(reader), capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout:
            try:
                return out.stdout.decode("utf-8")
            except UnicodeDecodeError:
                return None
        if out.returncode == 0:
            return None
    return None
