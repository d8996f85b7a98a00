"""Finding the task where it moved: the same window, shifted on the screen.

`mm replay --relocate` uses this when a step's screen does not match where it was
recorded. The recorded task area (where the recording acted and what it changed) is
looked for on the live screen; where it is found once, unambiguously, at some offset,
the live screen is shifted back by that offset and checked with the ordinary matcher,
in full. Only when that check passes is the action performed, shifted by the offset.
A moved window that also changed in any other way is still a divergence.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PIL import Image

from mmcli.model import Action
from mmcli.screen.analysis import find_template, small_slice
from mmcli.screen.fingerprint import SCALE, Frame, Rect

Offset = tuple[int, int]

FOUND = 0.7
"""Normalized correlation at which the recorded task area counts as found. This only
proposes an offset (text shifted by a fraction of the 4x grid correlates less); what
decides is the full check of the screen shifted back by it."""
REFINE = SCALE - 1
"""The search works on the 4x downscaled screen; the offset is then refined to the pixel
by trying this many pixels either way."""


def find_offset(reference: np.ndarray, area: Rect, live: Frame) -> Offset | None:
    """Where the recorded task area (on `reference`, the recorded downscaled screen) stands
    on the live screen, as an offset in pixels; None if not found, or found in more than
    one place (two identical windows: which one is meant cannot be told)."""
    ys, xs = small_slice(area, reference.shape)
    template = reference[ys, xs]
    hits = find_template(live.small, template, FOUND)
    if len(hits) != 1:
        return None
    box = Rect(
        xs.start * SCALE, ys.start * SCALE, template.shape[1] * SCALE, template.shape[0] * SCALE
    )
    coarse = (hits[0].x - box.x, hits[0].y - box.y)
    return _refine(template, box, live, coarse)


def _refine(template: np.ndarray, box: Rect, live: Frame, coarse: Offset) -> Offset:
    """The pixel offset near `coarse` at which the live area, downscaled on the recorded
    grid, is closest to the template."""
    screen = Image.frombuffer("RGBX", (live.width, live.height), live.raw, "raw", "RGBX", 0, 1)
    want = template.astype(np.int16)
    best: tuple[float, Offset] | None = None
    for dy in range(coarse[1] - REFINE, coarse[1] + REFINE + 1):
        for dx in range(coarse[0] - REFINE, coarse[0] + REFINE + 1):
            crop = screen.crop((box.x + dx, box.y + dy, box.right + dx, box.bottom + dy))
            got = np.asarray(crop.convert("L").reduce(SCALE), dtype=np.int16)
            if got.shape != want.shape:
                continue
            score = float(np.abs(got - want).mean())
            if best is None or score < best[0]:
                best = (score, (dx, dy))
    return best[1] if best else coarse


def shifted(frame: Frame, offset: Offset) -> Frame:
    """The live screen moved back by `offset`: what is at (x + dx, y + dy) now is drawn at
    (x, y), where the recording saw it. What comes in from beyond the edges is black."""
    dx, dy = offset
    pixels = frame.pixels
    h, w = pixels.shape[:2]
    out = np.zeros_like(pixels)
    out[max(-dy, 0) : min(h - dy, h), max(-dx, 0) : min(w - dx, w)] = pixels[
        max(dy, 0) : min(h + dy, h), max(dx, 0) : min(w + dx, w)
    ]
    return Frame(out.tobytes(), w, h)


def moved(action: Action, offset: Offset) -> Action:
    """The action with its screen positions shifted by `offset`."""
    dx, dy = offset
    if offset == (0, 0):
        return action
    return replace(
        action,
        x=None if action.x is None else action.x + dx,
        y=None if action.y is None else action.y + dy,
        x2=None if action.x2 is None else action.x2 + dx,
        y2=None if action.y2 is None else action.y2 + dy,
    )


def moved_point(point: tuple[int, int] | None, offset: Offset) -> tuple[int, int] | None:
    return None if point is None else (point[0] + offset[0], point[1] + offset[1])
