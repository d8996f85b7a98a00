"""The desktop's window structure, as the window system tells it, beside the pixel
matcher: which top-level window a step acted in, and where that window stands now.

The pixels judge what is inside the task's windows; the window system says where those
windows are. A recording keeps, per pointer step, the window under its target (its
class, `WM_CLASS`, and its client area on the screen), and per keyboard step the window
that had the keyboard. Replay types nothing while another window has the keyboard
(`keyboard_taken`): a window far from the task is harmless to the pixels, but keys go
where the focus is. `mm replay --relocate` then finds
a moved window exactly: the one live window of that class and size, moved by a whole
offset, with no template search over the screen (a blank text area matches in many
places; a window's identity does not). The screen, shifted back by that offset, is then
checked in full as always. Where the window system says nothing (no window manager, a
remote desktop shown as one window), the search over the pixels applies as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mmcli.screen.fingerprint import Rect

Offset = tuple[int, int]

MAX_CLASS = 256
"""The longest `WM_CLASS` a recording keeps (characters)."""


@dataclass(frozen=True)
class WindowRef:
    """A top-level application window: what identifies it from one run to the next, and
    where its client area stood on the screen."""

    wm_class: str
    """`WM_CLASS` as instance.class ("zenity.Zenity"); "" when the window sets none."""
    rect: Rect

    @property
    def size(self) -> tuple[int, int]:
        return (self.rect.w, self.rect.h)


def relocation(recorded: WindowRef, live: Sequence[WindowRef]) -> Offset | None:
    """How far the window a step acted in has moved: the offset of the one live window of
    its class and size. None when there is no such window, or several (which one is meant
    cannot be told), or the window has no class to know it by."""
    if not recorded.wm_class:
        return None
    same = [w for w in live if w.wm_class == recorded.wm_class and w.size == recorded.size]
    if len(same) != 1:
        return None
    return (same[0].rect.x - recorded.rect.x, same[0].rect.y - recorded.rect.y)


def keyboard_taken(
    recorded: WindowRef, live: WindowRef | None, offset: Offset = (0, 0)
) -> str | None:
    """Why keys must not be sent now: the window that has the keyboard is not the one the
    recording typed into (its class, and its client area moved by `offset`, where replay
    found the task). None when it is, or when the window system does not say (`live`
    None: the pixels judge alone, as without a window manager)."""
    if live is None:
        return None
    expected = WindowRef(recorded.wm_class, recorded.rect.moved(*offset))
    if live == expected:
        return None
    return (
        f"Another window has the keyboard: {_named(live)}, where the recording typed into "
        f"{_named(expected)}. The keys would go there"
    )


def _named(window: WindowRef) -> str:
    name = repr(window.wm_class) if window.wm_class else "a window with no class"
    r = window.rect
    return f"{name} at {r.x},{r.y} {r.w}x{r.h}"
