"""One plain sentence for a divergence, before the matcher's details.

The details (`Verdict.summary()`) say which check failed, where and by how much; a user
first wants to know what happened in words: a dialog over the button, the window moved,
other text in the field. This reads the same differences and says that, no more.
"""

from __future__ import annotations

import numpy as np

from mmcli.model import ActionKind, plural
from mmcli.screen.fingerprint import SCALE, Rect
from mmcli.screen.matcher import Difference, Verdict

KEYBOARD = {ActionKind.TYPE, ActionKind.PRESS, ActionKind.HOTKEY}
OWN_APP = ", of the task's own app"
"""How a new window of the task's own app is told apart in a difference (`judge`)."""
COVER = (120, 60)
"""A changed region at least this wide and tall (px) on the target is a window or dialog."""
BARE_SHARE = 0.97
BARE_LEVELS = 6
"""A task area is bare background when this share of it is within this many luma levels
of its commonest level: a flat desktop, with no window drawn there."""


def moved_by(offset: tuple[int, int]) -> str:
    """`60 px right and 20 px up`."""
    dx, dy = offset
    parts = []
    if dx:
        parts.append(f"{abs(dx)} px {'right' if dx > 0 else 'left'}")
    if dy:
        parts.append(f"{abs(dy)} px {'down' if dy > 0 else 'up'}")
    return " and ".join(parts) or "0 px"


def bare(small: np.ndarray, area: Rect | None) -> bool:
    """Whether the task area (`area`, screen pixels; None: the whole screen) of a
    downscaled luma screen is one flat background: no window is drawn there."""
    if area is not None:
        x0, y0 = area.x // SCALE, area.y // SCALE
        small = small[y0 : max(area.bottom // SCALE, y0 + 1), x0 : max(area.right // SCALE, x0 + 1)]
    if small.size == 0:
        return False
    levels = small.ravel()
    commonest = int(np.bincount(levels, minlength=256).argmax())
    near = np.abs(levels.astype(np.int16) - commonest) <= BARE_LEVELS
    return bool(near.mean() >= BARE_SHARE)


def _on_target(d: Difference) -> bool:
    return d.matcher == "target" or d.measure.startswith("changed region on the target")


def headline(
    verdict: Verdict | None,
    action: ActionKind,
    moved: tuple[int, int] = (0, 0),
    found_at: tuple[int, int] | None = None,
    no_window: bool = False,
    window: str | None = None,
) -> str:
    """The sentence (no final period). `moved`: the offset at which `--relocate` checked
    the task; `found_at`: where the task area was seen without `--relocate`; `no_window`:
    the live task area is bare background where the recorded one was not (`bare`);
    `window`: the title of the window the recording began in, to name it then."""
    if verdict is None or verdict.ok:
        return "No recorded step to compare with the screen"
    diffs = verdict.differences
    new = [d.measure for d in diffs if d.matcher == "windows"]
    if new:
        more = f" and {plural(len(new) - 1, 'other')}" if len(new) > 1 else ""
        if new[0].endswith(OWN_APP):
            return f"Another window of the task's app is open: {new[0][: -len(OWN_APP)]}{more}"
        return f"Another window is over the task's window: {new[0]}{more}"
    if moved != (0, 0):
        return f"The window moved {moved_by(moved)}, and differs there"
    if found_at is not None and found_at != (0, 0):
        return f"The window moved {moved_by(found_at)}; replay with --relocate to act there"
    if any(d.matcher == "geometry" for d in diffs):
        return "The screen size differs from the recording"
    if no_window:
        expected = f" (it expected {window!r})" if window else ""
        return (
            f"No window of the recorded app is on the screen{expected}: the task area is "
            "bare background"
        )
    if any("about to act" in d.measure for d in diffs):
        return "The screen kept changing as replay was about to act"
    if any(_on_target(d) for d in diffs):
        if action in KEYBOARD:
            return "Text differs in the field being typed into"
        if any(_covers(d) for d in diffs):
            return "A window or dialog covers the click target"
        return "The click target looks different"
    if any(d.matcher == "regions" for d in diffs):
        return "Something new appeared near the task"
    return "Part of the screen near the task looks different"


def _covers(d: Difference) -> bool:
    r: Rect = d.region
    return d.matcher == "regions" and r.w >= COVER[0] and r.h >= COVER[1]
