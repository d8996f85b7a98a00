"""With `--relocate`, each of the task's windows where it stands now, not only the one a
step acts in: a dialog the window manager places on its own does not follow the main
window (xfwm4 keeps GIMP's 950 px export dialog on the screen: the main window moved 60
px right, the dialog opened 3 px right of where it was recorded), and the screen shifted
back by the dialog's offset shows the main window 57 px off around it.

`place` finds, for a step whose window is at `offset`, the other windows of its app it
recorded on the step's screen (`Step.own`) that stand at offsets of their own, each by its
class and frame size (one such window on the screen, as `windows.relocation` finds the
step's). `compose` paints the live screen in the recording's coordinates: shifted back by
the step's window's offset, each other window painted from where it stands now to where
it was recorded, bottom to top as the window system stacks them, the step's window last
where it is above them. What one task window hides of another now and did not hide when
recorded cannot be seen (nor its shadow, drawn over the lower window at another place),
nor can the desktop where the shift alone drew a window that stands elsewhere, nor a
moved window's shadow where it was recorded (it moved with the window; xfwm4 draws one
below each window): these are left out (`Composed.hidden`), the windows over the task
being the window system's to tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.relocate import Offset, shifted
from mmcli.screen.windows import SHADOW, Over, StackedWindow


@dataclass(frozen=True)
class Placed:
    """One of the app's other windows, found at an offset of its own."""

    recorded: Over
    """The window as the step recorded it (`Step.own`)."""
    live: StackedWindow
    """The window where it stands now."""

    @property
    def offset(self) -> Offset:
        return (
            self.live.frame.x - self.recorded.frame.x,
            self.live.frame.y - self.recorded.frame.y,
        )


@dataclass(frozen=True)
class Composed:
    view: Frame
    """The live screen in the recording's coordinates, each window from where it stands."""
    hidden: list[Rect]
    """What cannot be judged, in the recording's coordinates: the parts of a window
    another task window hides now and did not hide when recorded, and where the shift
    alone drew a window that stands elsewhere (the recording had the desktop there)."""


def place(own: Sequence[Over], offset: Offset, stack: Sequence[StackedWindow]) -> list[Placed]:
    """The app's other windows a step recorded (`own`) that stand at another offset than
    the step's window's (`offset`): each the one live window of its class and frame size."""
    found = []
    for recorded in own:
        size = (recorded.frame.w, recorded.frame.h)
        same = [
            w
            for w in stack
            if w.ref.wm_class == recorded.wm_class and (w.frame.w, w.frame.h) == size
        ]
        if len(same) != 1:
            continue
        placed = Placed(recorded, same[0])
        if placed.offset != offset:
            found.append(placed)
    return found


def along(
    own: Sequence[Over], offset: Offset, stack: Sequence[StackedWindow]
) -> list[StackedWindow]:
    """The app's other windows a step recorded (`own`) that stand where the step's
    window's offset puts them: moved with it."""
    found: list[StackedWindow] = []
    for recorded in own:
        at = recorded.frame.moved(*offset)
        found.extend(w for w in stack if w.ref.wm_class == recorded.wm_class and w.frame == at)
    return found


def compose(
    frame: Frame,
    offset: Offset,
    placed: Sequence[Placed],
    stack: Sequence[StackedWindow],
    window: StackedWindow | None,
    moved_along: Sequence[StackedWindow] = (),
) -> Composed:
    """`frame` (the live screen) in the recording's coordinates with the step's window
    (`window`, where it stands now; None: not found) and the app's windows that moved
    with it (`moved_along`, `along`) at `offset` and each of `placed` at its own (see the
    module's docstring). Each is painted in the window system's order: a placed window
    never over one of these it is under (GIMP's main window under its export dialog,
    under the PNG options)."""
    pixels = shifted(frame, offset).pixels.copy()
    live = frame.pixels
    screen = Rect(0, 0, frame.width, frame.height)
    layers = [(p.live, p.offset) for p in placed]
    layers.extend((w, offset) for w in moved_along if w != window)
    if window is not None:
        layers.append((window, offset))
    layers.sort(key=lambda layer: _depth(stack, layer[0]))
    for w, layer_offset in layers:
        _paste(pixels, live, w.frame, layer_offset, screen)
    hidden = []
    painted = [w.frame.moved(-o[0], -o[1]) for w, o in layers]
    for p in placed:
        # The window as the shift alone drew it, where the recording had the desktop,
        # and its shadow there; and its shadow as recorded, which moved with it.
        hidden.extend(_less(_shaded(p.live.frame).moved(-offset[0], -offset[1]), painted))
        hidden.extend(_less(_shaded(p.recorded.frame), painted))
    for i, (w, (dx, dy)) in enumerate(layers):
        for upper, upper_offset in layers[i + 1 :]:
            if upper_offset == (dx, dy):
                continue  # moved together: what one hides of the other is as recorded
            shown = upper.frame.moved(-upper_offset[0], -upper_offset[1])
            # What it covers now, with the shadow a compositor draws around it; and its
            # shadow as recorded, which the lower window's pixels no longer have there.
            covered = w.frame.intersection(_shaded(upper.frame))
            if covered is not None:
                hidden.extend(covered.moved(-dx, -dy).minus(shown))
            was = w.frame.moved(-dx, -dy).intersection(_shaded(shown))
            if was is not None:
                hidden.extend(was.minus(shown))
    return Composed(Frame(pixels.tobytes(), frame.width, frame.height), hidden)


def _shaded(frame: Rect) -> Rect:
    """A window's frame with the shadow a compositor draws beside and below it (xfwm4:
    6-8 px below the frame)."""
    return Rect(frame.x - SHADOW, frame.y, frame.w + 2 * SHADOW, frame.h + SHADOW)


def _less(rect: Rect, cuts: Sequence[Rect]) -> list[Rect]:
    """`rect` less each of `cuts`."""
    pieces = [rect]
    for cut in cuts:
        pieces = [q for piece in pieces for q in piece.minus(cut)]
    return pieces


def _depth(stack: Sequence[StackedWindow], window: StackedWindow) -> int:
    return next((i for i, w in enumerate(stack) if w == window), len(stack))


def _paste(pixels: np.ndarray, live: np.ndarray, frame: Rect, offset: Offset, screen: Rect) -> None:
    """Copy `frame` of the live screen to where it stood when recorded (moved back by
    `offset`), both clipped to the screen."""
    source = frame.intersection(screen)
    if source is None:
        return
    target = source.moved(-offset[0], -offset[1]).intersection(screen)
    if target is None:
        return
    source = target.moved(*offset)
    pixels[target.y : target.bottom, target.x : target.right] = live[
        source.y : source.bottom, source.x : source.right
    ]
