"""The errors the SDK raises.

Each is an `MMError` (one clear line, the CLI's exit codes) and also the built-in type
muscle-mem raised in the same situation, so code written against muscle-mem that catches
`ValueError` or `TypeError` keeps working.
"""

from __future__ import annotations

from mmcli.errors import MMError, UsageError


class EngineNotReady(UsageError, ValueError):
    """The engine lacks a tool, an agent or a context object, or is already finalized."""


class UnstorableValue(UsageError, TypeError):
    """A tool argument or a captured snapshot that cannot be written to the store."""


class UnknownClass(MMError):
    """A stored dataclass whose class is not available in this process."""


class EngineBusy(UsageError, RuntimeError):
    """The engine was called again from inside its own agent or tool."""
