"""Timing of the engine's phases, with muscle-mem's `engine.metrics` interface.

Off by default; `enable()`, then `report()` prints the totals as JSON (on stdout, as
muscle-mem does). The phases:

- `query`: reading the stored document (cached until the file changes);
- `filter.partials`: choosing the candidate trajectories of the tag bucket;
- `filter.capture` / `filter.compare`: pre-checks of the first step (the lookup);
- `runtime.precheck.*`: pre-checks of the later steps, as replay reaches them;
- `runtime.postcheck.*`: post-checks after each replayed step.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _counter() -> dict[str, float]:
    return {"total_time": 0.0, "count": 0}


def _fresh() -> dict[str, Any]:
    return {
        "query": _counter(),
        "filter": {"partials": _counter(), "capture": _counter(), "compare": _counter()},
        "runtime": {
            "precheck": {"capture": _counter(), "compare": _counter()},
            "postcheck": {"capture": _counter(), "compare": _counter()},
        },
    }


class Metrics:
    def __init__(self) -> None:
        self.enabled = False
        self.metrics: dict[str, Any] = _fresh()

    def enable(self) -> None:
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    def reset(self) -> None:
        self.metrics = _fresh()

    @contextmanager
    def measure(self, *path: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        start = time.perf_counter()
        try:
            yield
        finally:
            node = self.metrics
            for part in path:
                node = node[part]
            node["total_time"] += time.perf_counter() - start
            node["count"] += 1

    def snapshot(self) -> dict[str, Any]:
        """The totals with averages, times formatted (what `report` prints)."""
        out = copy.deepcopy(self.metrics)
        _format(out)
        return out

    def report(self) -> None:
        """Print the metrics as indented JSON (nothing when metrics are disabled)."""
        if self.enabled:
            print(json.dumps(self.snapshot(), indent=4))


def _format(node: dict[str, Any]) -> None:
    for value in node.values():
        if not isinstance(value, dict):
            continue
        if "total_time" in value:
            raw = value["total_time"]
            value["total_time"] = _seconds(raw)
            if value["count"]:
                value["avg_time"] = _seconds(raw / value["count"])
        else:
            _format(value)


def _seconds(value: float) -> str:
    if value >= 1.0:
        return f"{value:.4f}s"
    if value >= 0.001:
        return f"{value * 1000:.4f}ms"
    return f"{value * 1_000_000:.4f}us"
