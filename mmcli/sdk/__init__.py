"""The Python SDK: muscle-mem's API (`Engine`, `Check`) on the `mm` store, with
ready-made screen checks, and its own document kind (`kind = "sdk"`).

May import: the vocabulary, `screen`, `store`, `desktop`, `backends`, `verbs`.
"""

from __future__ import annotations

from mmcli.sdk.check import Check
from mmcli.sdk.engine import Engine
from mmcli.sdk.metrics import Metrics
from mmcli.sdk.screen import ScreenCheck, ScreenSnapshot, no_target, pointer_target

__all__ = [
    "Check",
    "Engine",
    "Metrics",
    "ScreenCheck",
    "ScreenSnapshot",
    "no_target",
    "pointer_target",
]
