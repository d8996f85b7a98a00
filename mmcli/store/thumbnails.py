"""A recorded step's thumbnail read back as the screen the `regions` matcher compares
with, or the reason it cannot be (missing, not a readable PNG, not the screen's size).

A step without a usable thumbnail is checked with the coarse tile grid only: replay says
so for each such step, `--policy strict` refuses to act on it, and `mm show` lists them.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image

from mmcli.model import Recording, Step
from mmcli.screen.fingerprint import SCALE, Fingerprint, Frame
from mmcli.store.recordings import Store


@dataclass(frozen=True)
class Reference:
    screen: np.ndarray | None
    """The step's recorded screen downscaled by `SCALE` (luma), or None."""
    problem: str | None = None
    """Why there is no screen: "is missing", "is not a readable PNG"..."""


def load_reference(store: Store, name: str, step: Step) -> Reference:
    """The recorded screen of `step` in recording `name`, from its thumbnail."""
    return load_screen(store, name, step.thumbnail, step.fingerprint)


def load_outcome(store: Store, name: str, step: Step) -> Reference:
    """The outcome `step` (the last of a path) settled on, from its thumbnail."""
    if step.outcome is None:
        return Reference(None, "was never recorded")
    return load_screen(store, name, step.outcome.thumbnail, step.outcome.fingerprint)


def load_screen(store: Store, name: str, thumbnail: str | None, fp: Fingerprint) -> Reference:
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
