"""mm: muscle memory for computer-use agents."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported at run time: `mm act` must start fast
    from typing import Any

__version__ = "0.1.0"

__all__ = ["Check", "Engine", "ScreenCheck"]

if TYPE_CHECKING:
    from mmcli.sdk import Check, Engine, ScreenCheck


def __getattr__(name: str) -> Any:
    # The SDK is imported on first use so that `mm` itself starts fast.
    if name in __all__:
        import mmcli.sdk

        return getattr(mmcli.sdk, name)
    raise AttributeError(f"module 'mmcli' has no attribute {name!r}")
