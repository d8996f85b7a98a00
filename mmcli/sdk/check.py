"""`Check`: how the engine decides whether it is safe to repeat a recorded tool call."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_THRESHOLD = 0.9
"""A `compare` that returns a number passes when the number is at least this."""


class Check(Generic[P, T]):
    """A `capture` of the environment's features and a `compare` of two captures.

    `capture` receives the tool's arguments (with `self` first for a method tool) and
    returns any value; the engine stores it with the recorded call. `compare(current,
    candidate)` receives the live capture and the stored one and returns a bool, or a
    float similarity that passes when it is at least `threshold`.

    `timeout` (seconds, default 0: judge once) makes the engine capture and compare again
    every `interval` seconds until the check passes or the time is up: apps are slow, and
    a replay must not race them.
    """

    def __init__(
        self,
        capture: Callable[P, T],
        compare: Callable[[T, T], bool | float],
        *,
        threshold: float = DEFAULT_THRESHOLD,
        timeout: float = 0.0,
        interval: float = 0.1,
    ) -> None:
        if timeout < 0 or interval <= 0:
            raise ValueError("Check timeout must be >= 0 and interval > 0")
        self.capture = capture
        self.compare = compare
        self.threshold = threshold
        self.timeout = timeout
        self.interval = interval

    def passes(self, current: T, candidate: T) -> bool:
        """Compare two captures and turn the result into a verdict."""
        return verdict(self.compare(current, candidate), self.threshold)


def verdict(result: Any, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """A bool as it is; a number (a similarity) against `threshold`; anything else by truth."""
    if isinstance(result, bool):
        return result
    if hasattr(result, "item") and callable(result.item) and getattr(result, "size", 1) == 1:
        result = result.item()  # numpy scalars, one-element tensors
    if isinstance(result, bool):
        return result
    if isinstance(result, numbers.Real):
        return float(result) >= threshold
    return bool(result)
