"""The errors `mm` can raise, each with the exit code the CLI maps it to.

The CLI catches `MMError` in one place, prints `str(error)` as a one-line message and
exits with `error.exit_code`. Messages never include secret values.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    DIVERGED = 3
    AGENT_FAILED = 4
    NOT_SAVED = 5
    """The task was done but what was learned could not be saved: do not retry it."""
    ABORTED = 130


class MMError(Exception):
    """Base class: a failure with a clear one-line message."""

    exit_code: ExitCode = ExitCode.ERROR


class UsageError(MMError):
    exit_code = ExitCode.USAGE


class InvalidName(UsageError):
    pass


class RecordingNotFound(MMError):
    pass


class RecordingExists(MMError):
    pass


class RecordingCorrupt(MMError):
    """A recording file that cannot be trusted: unreadable, malformed, or from a newer mm."""


class WrongKind(RecordingCorrupt):
    """A valid store document that is not a CLI recording (an SDK one, say)."""


class StoreError(MMError):
    """The store cannot be read or written (permissions, disk full, lock held)."""


class LockBusy(StoreError):
    pass


class DisplayError(MMError):
    """No usable display, or the screen differs in geometry from the recording."""


class ScreenDiverged(MMError):
    """The live screen never matched the step's fingerprint within the timeout."""

    exit_code = ExitCode.DIVERGED


class NotSaved(MMError):
    """The agent did the task, then saving what it did failed (the store, a secret left in
    it). `mm record` exits 1; a replay that recorded or healed reports exit 5."""


class AgentFailed(MMError):
    exit_code = ExitCode.AGENT_FAILED


class Aborted(MMError):
    """Ctrl-C or the fail-safe corner stopped the run between two actions."""

    exit_code = ExitCode.ABORTED
