"""`mm`'s vocabulary of failures and endings: the errors it raises, how a run ends
(`Outcome`), and the exit code of each (`ExitCode`).

The CLI maps an `MMError` to a one-line message and `error.exit_code` in one function
(`mmcli.cli.output.fail`); a run that ends (a replay, a batch row, a model-API run) reports an
`Outcome`, whose `exit_code` is the command's: a divergence or a failed agent is such an
ending, reported, not raised. No exit code is written as a bare number anywhere else
(tests/unit/test_vocabulary.py checks). Messages never include secret values.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import IntEnum, StrEnum


class ExitCode(IntEnum):
    """The exit codes `mm` documents (README "Exit codes"). `mm record` also passes on
    the agent's own exit code when the agent fails."""

    OK = 0
    """The task was done: from memory, healed by the agent, or recorded."""
    ERROR = 1
    """Any other error: a recording missing or corrupt, no display, the store unwritable."""
    USAGE = 2
    """A bad option or name, a param the recording needs is missing."""
    DIVERGED = 3
    """The screen diverged and no agent was allowed; nothing was done at that step."""
    AGENT_FAILED = 4
    """The agent failed, timed out, or exited 0 having done nothing; nothing was saved."""
    NOT_SAVED = 5
    """The task was done but what was learned could not be saved: do not retry it."""
    OUTCOME_DIFFERS = 6
    """The steps were performed but the screen after the last one shows no outcome the
    recording trusts (or a heal ended on a new one): check the task before retrying."""
    ABORTED = 130
    """Ctrl-C, or the fail-safe corner, stopped the run between two actions."""


class Outcome(StrEnum):
    """How a run ended: a replay (`mm replay`, a batch row, a model-API replay), a
    recording, or an SDK call. The value is what `--json` and the history say."""

    FROM_MEMORY = "from-memory"
    HEALED = "healed"
    RECORDED = "recorded"
    DIVERGED = "diverged"
    AGENT_FAILED = "agent-failed"
    NOT_SAVED = "done-not-saved"
    """The agent did the task, but what it did could not be saved: do not retry."""
    WOULD_REPLAY = "would-replay"
    ABORTED = "aborted"
    UNCHANGED = "unchanged"
    """`--add` of a run whose every step the recording already holds: nothing to save."""
    NOT_RECORDED = "not-saved"
    """A recording run whose agent failed: nothing saved."""
    OUTCOME_DIFFERS = "outcome-differs"
    """Every step was performed, but the screen after the last one did not settle on an
    outcome the recording trusts: the task's result is unknown. Never retried by mm."""
    HEALED_PENDING = "healed-pending"
    """The agent finished the task, but its run ended on an outcome the recording did not
    know: its branch was saved as pending (`mm approve`), and the result is unverified."""

    @property
    def exit_code(self) -> ExitCode:
        """The exit code of a run that ends so (`mm record` passes on a failed agent's
        own exit code instead, when it has one)."""
        return _OUTCOME_EXIT.get(self, ExitCode.OK)


_OUTCOME_EXIT = {
    Outcome.DIVERGED: ExitCode.DIVERGED,
    Outcome.AGENT_FAILED: ExitCode.AGENT_FAILED,
    Outcome.NOT_RECORDED: ExitCode.AGENT_FAILED,
    Outcome.NOT_SAVED: ExitCode.NOT_SAVED,
    Outcome.OUTCOME_DIFFERS: ExitCode.OUTCOME_DIFFERS,
    Outcome.HEALED_PENDING: ExitCode.OUTCOME_DIFFERS,
    Outcome.ABORTED: ExitCode.ABORTED,
}


class MMError(Exception):
    """Base class: a failure with a clear one-line message."""

    exit_code: ExitCode = ExitCode.ERROR


class UsageError(MMError):
    exit_code = ExitCode.USAGE


class InvalidName(UsageError):
    pass


class RecordingNotFound(MMError):
    pass


class SecretLeak(MMError):
    """A recording would have kept (a piece of) a secret value: nothing is saved."""


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


class RecordingInUse(StoreError):
    """A run (a replay, a recording, an SDK call) has the recording open: it is not
    removed, renamed or replaced meanwhile."""


class DisplayError(MMError):
    """No usable display, or the screen differs in geometry from the recording."""


class DisplayLost(DisplayError):
    """The connection to a remote display (VNC) dropped and did not come back: the run
    stops before its next action."""


class NotSaved(MMError):
    """The agent did the task, then saving what it did failed (the store, a secret left in
    it). `mm record` exits 1; a replay that recorded or healed reports exit 5."""


class TypedOtherwise(MMError):
    """The keys that reached the display do not spell what the agent said it typed (a
    character dropped or altered on the way): the task may hold other data than the run
    claims. Nothing is saved; check the task before retrying."""

    exit_code = ExitCode.OUTCOME_DIFFERS


class Aborted(MMError):
    """Ctrl-C or the fail-safe corner stopped the run between two actions."""

    exit_code = ExitCode.ABORTED


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one of `choices` a mistyped `word` most likely meant (difflib), or None."""
    close = difflib.get_close_matches(word, [c for c in choices if c != word], n=1)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'loan'?` when one of `choices` is close to the mistyped `word`,
    else "" (to end an error message with)."""
    close = closest(word, choices)
    return f"; did you mean {close!r}?" if close else ""
