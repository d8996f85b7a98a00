"""How fast typed keys follow each other: the bounds, and the pause for a recorded pace.

Kept apart from `model` so that input given outside a recorder (`backends.xtest`, for
`mm act`) paces its keys by the same rule without loading the recording model.
"""

from __future__ import annotations

KEY_PAUSE_MIN = 0.002
"""Replay never types faster than one key each 2 ms. With no pause, a key's release and
the next press share an X server timestamp, which toolkits take for auto-repeat:
LibreOffice Calc 7.4 kept "50" of "5000" and "Boby" of "Bobby" (measured on Xvfb: keys
lost in each of 3 tries with no pause, none in 24 tries with 1, 2 or 5 ms)."""
KEY_PAUSE_MAX = 0.05
"""Nor slower than one key each 50 ms, whatever pace the agent typed at."""
KEY_PAUSE_UNKNOWN = 0.012
"""The pause when the recording does not say (xdotool's default between keys)."""


def typing_pause(key_ms: int | None) -> float:
    """Seconds between two typed keys for a pace of `key_ms` ms between keys (None:
    unknown), bounded by `KEY_PAUSE_MIN` and `KEY_PAUSE_MAX`."""
    if key_ms is None:
        return KEY_PAUSE_UNKNOWN
    return min(max(key_ms / 1000, KEY_PAUSE_MIN), KEY_PAUSE_MAX)
