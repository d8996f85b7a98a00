"""Runs of True in a row of flags, against a plain walk along it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mmcli.screen.runs import joined, longest, runs


def walked(flags: list[bool], gap: int) -> list[tuple[int, int]]:
    """Each True at a time: a new run, or the last one grown across fewer than `gap`
    Falses."""
    out: list[tuple[int, int]] = []
    for i, on in enumerate(flags):
        if not on:
            continue
        if out and i - out[-1][1] < gap:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


@given(st.lists(st.booleans(), max_size=60), st.integers(min_value=1, max_value=5))
def test_runs_are_those_a_walk_finds(flags: list[bool], gap: int) -> None:
    array = np.array(flags, dtype=bool)
    assert runs(array) == walked(flags, 1)
    assert joined(array, gap) == walked(flags, gap)
    assert longest(array) == max((b - a for a, b in walked(flags, 1)), default=0)


def test_a_gap_as_wide_as_asked_parts_two_runs() -> None:
    flags = np.array([1, 1, 0, 1, 0, 0, 1], dtype=bool)
    assert runs(flags) == [(0, 2), (3, 4), (6, 7)]
    assert joined(flags, 2) == [(0, 4), (6, 7)]
    assert joined(flags, 3) == [(0, 7)]
    assert longest(flags) == 2
