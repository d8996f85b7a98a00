"""A recorded step's thumbnail read back as the screen the `regions` matcher compares
with, or the reason it cannot be (missing, not a readable PNG, not the screen's size).

A step without a usable thumbnail is checked with the coarse tile grid only: replay says
so for each such step, `--policy strict` refuses to act on it, and `mm show` lists them.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PIL import Image

from mmcli.model import Recording, Step
from mmcli.screen.fingerprint import SCALE, Fingerprint, Frame
from mmcli.store.recordings import Store


class Thumbnails(Protocol):
    """Where a recording's thumbnails are read from: the store, or what was read of it."""

    def read_thumbnail(self, name: str, file_name: str) -> bytes | None: ...

    def has_thumbnail(self, name: str, file_name: str) -> bool: ...


PREFETCH_READERS = 8
"""Thumbnails read at once from a store in a bucket (each read is a round trip)."""


class Prefetched:
    """A recording's thumbnails, read whole before a run acts: a store that stops
    answering in the middle of a run (a bucket's server gone) cannot stop it between two
    actions, where stopping would leave the task half done. A store that does not answer
    before then stops the run before its first action (`StoreError`)."""

    def __init__(self, store: Store, name: str, files: Iterable[str]) -> None:
        self.name = name
        wanted = sorted(set(files))
        with ThreadPoolExecutor(max_workers=PREFETCH_READERS) as pool:
            read = list(pool.map(lambda f: store.read_thumbnail(name, f), wanted))
        self._data = dict(zip(wanted, read, strict=True))
        self._there = {f: store.has_thumbnail(name, f) for f, d in self._data.items() if d is None}

    def read_thumbnail(self, name: str, file_name: str) -> bytes | None:
        return self._data.get(file_name) if name == self.name else None

    def has_thumbnail(self, name: str, file_name: str) -> bool:
        if name != self.name:
            return False
        return self._data.get(file_name) is not None or self._there.get(file_name, False)


@dataclass(frozen=True)
class Reference:
    screen: np.ndarray | None
    """The step's recorded screen downscaled by `SCALE` (luma), or None."""
    problem: str | None = None
    """Why there is no screen: "is missing", "is not a readable PNG"..."""


def load_reference(store: Thumbnails, name: str, step: Step) -> Reference:
    """The recorded screen of `step` in recording `name`, from its thumbnail."""
    return load_screen(store, name, step.thumbnail, step.fingerprint)


def load_outcome(store: Thumbnails, name: str, step: Step) -> Reference:
    """The outcome `step` (the last of a path) settled on, from its thumbnail."""
    if step.outcome is None:
        return Reference(None, "was never recorded")
    return load_screen(store, name, step.outcome.thumbnail, step.outcome.fingerprint)


def load_screen(store: Thumbnails, name: str, thumbnail: str | None, fp: Fingerprint) -> Reference:
    """A recorded screen of `fp`'s size, from the thumbnail file `thumbnail`."""
    if not thumbnail:
        return Reference(None, "was never recorded")
    data = store.read_thumbnail(name, thumbnail)
    if data is None:
        there = store.has_thumbnail(name, thumbnail)
        return Reference(None, "cannot be read" if there else "is missing")
    try:
        with Image.open(io.BytesIO(data)) as image:
            screen = Frame.small_from_thumbnail(image)
    except (OSError, ValueError, Image.DecompressionBombError):
        return Reference(None, "is not a readable PNG")
    expected = (-(-fp.height // SCALE), -(-fp.width // SCALE))
    if screen.shape != expected:
        return Reference(None, f"is {screen.shape[1]}x{screen.shape[0]}, not the recorded screen")
    return Reference(screen)


def describe(name: str, step: Step, problem: str) -> str:
    """`thumbnail 'loan/t-0003.png' is missing` (the path within the store)."""
    if not step.thumbnail:
        return f"a thumbnail {problem}"
    return f"thumbnail '{name}/{step.thumbnail}' {problem}"


def unusable(store: Store, recording: Recording) -> list[tuple[Step, str]]:
    """The steps of `recording` whose thumbnail cannot serve as their recorded screen,
    each with why (every thumbnail is read and decoded)."""
    found = []
    for step in recording.steps:
        problem = load_reference(store, recording.name, step).problem
        if problem is not None:
            found.append((step, problem))
    return found
