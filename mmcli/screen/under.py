"""The screen as it is under a window that covers part of it, from each window's own
pixels.

A compositing manager (xfwm4 at Xfce's defaults, GNOME's and KDE's, xcompmgr, picom)
keeps every top-level window's contents off the screen, whole even where another
window covers it (X Composite), and draws the screen from them. Where another app's
notification covers what the last action changed, those contents tell what the task's
app shows under it: the app's error there is seen, not waited out.

`compose` paints the place of each covering window from the windows under and over it,
bottom to top, as the compositing manager would without it. What no window's pixels
reach there (the desktop's wallpaper, the shade a compositing manager draws around a
window) is told apart (`SeenUnder.hidden`): it is no app's, and it is not seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from mmcli.screen.fingerprint import Frame, Rect

SHADE = 12
"""How far around a window's frame a compositing manager may draw its shade (xfwm4
draws 6-8 px, below and beside each window): there the screen is not any window's own
pixels."""


@dataclass(frozen=True)
class Layer:
    """What one window shows inside one covered place, from its own contents."""

    frame: Rect
    """The window's place on the screen (its frame, border included)."""
    place: Rect
    """The part of the covered place `pixels` are: inside `frame`."""
    pixels: np.ndarray
    """BGRA, (place.h, place.w, 4): the window's own contents there."""
    alpha: bool = False
    """The window has an alpha channel (a 32-bit visual: GTK 4's shadows, translucent
    popups): its pixels are drawn over what is under them (premultiplied)."""
    shade: bool = True
    """A compositing manager may shade the screen around it (a window; not the desktop's
    wallpaper)."""


@dataclass(frozen=True)
class SeenUnder:
    """A screen with the covering windows' places painted from the windows under them."""

    frame: Frame
    hidden: tuple[Rect, ...]
    """What still could not be seen there: no window's own pixels (the wallpaper, the
    shade around each window the compositing manager draws), never an app's."""


def compose(frame: Frame, covered: Sequence[Rect], layers: Iterable[Layer]) -> SeenUnder:
    """`frame` with each of `covered` (the covering windows' places with their shade,
    `shaded`) painted from `layers` (bottom to top); where no layer's opaque pixels
    reach, and within `SHADE` px around a layer's frame but under no layer above it, the
    place is `hidden`."""
    pixels = frame.pixels.copy()
    places = [c for r in covered if (c := r.intersection(Rect(0, 0, frame.width, frame.height)))]
    known = {p: np.zeros((p.h, p.w), bool) for p in places}
    for layer in layers:
        for place in places:
            _paint(pixels, known[place], place, layer)
    hidden = [r for place, seen in known.items() for r in _unseen(seen, place)]
    return SeenUnder(Frame(pixels.tobytes(), frame.width, frame.height), tuple(hidden))


def _paint(pixels: np.ndarray, known: np.ndarray, place: Rect, layer: Layer) -> None:
    """`layer` painted over `pixels` inside `place`; `known` (the place's) says which of
    its pixels are a window's own, the shade `layer` casts around it not."""
    inner = layer.place.intersection(place)
    if inner is None:
        return
    sy, sx = inner.y - layer.place.y, inner.x - layer.place.x
    src = layer.pixels[sy : sy + inner.h, sx : sx + inner.w]
    dst = pixels[inner.y : inner.bottom, inner.x : inner.right]
    ky, kx = inner.y - place.y, inner.x - place.x
    seen = known[ky : ky + inner.h, kx : kx + inner.w]
    if layer.alpha:
        alpha = src[..., 3:4].astype(np.uint16)
        over = src[..., :3] + (dst[..., :3].astype(np.uint16) * (255 - alpha) + 127) // 255
        dst[..., :3] = np.minimum(over, 255).astype(np.uint8)
        seen |= src[..., 3] == 255  # else what was under it decides
    else:
        dst[..., :3] = src[..., :3]
        seen[...] = True
    dst[..., 3] = 255
    if layer.shade:
        for band in layer.frame.grow(SHADE).minus(layer.frame):
            if (s := band.intersection(place)) is not None:
                known[s.y - place.y : s.bottom - place.y, s.x - place.x : s.right - place.x] = False


def shaded(place: Rect) -> Rect:
    """A window's place with the shade a compositing manager may draw around it."""
    return place.grow(SHADE)


def _unseen(seen: np.ndarray, place: Rect) -> list[Rect]:
    """The rectangles of `place` where `seen` is False: runs of unseen columns per row,
    rows with the same runs joined."""
    rects: list[Rect] = []
    open_runs: dict[tuple[int, int], int] = {}  # (x0, x1) -> first row
    for row in range(seen.shape[0] + 1):
        runs: set[tuple[int, int]] = set()
        if row < seen.shape[0]:
            line = np.concatenate(([True], seen[row], [True]))
            edges = np.flatnonzero(line[1:] != line[:-1])
            runs = {(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)}
        for run in [r for r in open_runs if r not in runs]:
            first = open_runs.pop(run)
            rects.append(Rect(place.x + run[0], place.y + first, run[1] - run[0], row - first))
        for run in runs:
            open_runs.setdefault(run, row)
    return rects
