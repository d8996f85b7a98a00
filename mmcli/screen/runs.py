"""Runs of True in a row or column of flags: the separate things on a line of the screen
(`joined`: across gaps too narrow to part them), a caret's width, a glyph's stroke."""

from __future__ import annotations

import numpy as np


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """The [start, stop) runs of True in the 1-D `flags`, in order."""
    padded = np.concatenate(([0], np.asarray(flags).astype(np.int8), [0]))
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def joined(flags: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """`runs` joined across fewer than `gap` Falses."""
    out: list[tuple[int, int]] = []
    for start, stop in runs(flags):
        if out and start - out[-1][1] < gap:
            out[-1] = (out[-1][0], stop)
        else:
            out.append((start, stop))
    return out


def longest(flags: np.ndarray) -> int:
    """The length of the longest run of True in `flags` (0: none)."""
    return max((stop - start for start, stop in runs(flags)), default=0)
