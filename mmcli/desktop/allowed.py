"""Which fallback agent a replay may run: a recording never chooses what runs on a
machine it was not made on.

A recording keeps the command its agent was recorded with, and a replay runs it on a
divergence (the fallback contract). In a folder the user keeps, that command is theirs.
A store in a bucket is written by others (any writer of the bucket, a compromised
worker): a command found there runs only if the operator of this machine allowed it, as
written (`--allow-agent CMD`, placeholders and all), and then in this machine's working
directory, never the folder the document names. `mm worker` holds every recording to this
rule, whatever its store. `--agent CMD` is the operator's own choice and always runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mmcli.model import shown_command


class Recorded(Protocol):
    """A recording of either kind: the command its agent was recorded with, and where."""

    @property
    def command(self) -> Sequence[str]: ...

    @property
    def cwd(self) -> str | None: ...


@dataclass(frozen=True)
class RecordedAgents:
    """The operator's rule for recorded agent commands."""

    allowed: tuple[tuple[str, ...], ...] = ()
    """Commands allowed to run, each as its words (`--allow-agent`)."""
    checked: bool = False
    """Recorded commands need allowing (a shared store, a fleet worker)."""

    @classmethod
    def of(cls, allowed: Sequence[str], checked: bool) -> RecordedAgents:
        return cls(tuple(tuple(shlex.split(a)) for a in allowed), checked)

    def command(
        self, recording: Recorded, then: str = "a divergence stops the replay"
    ) -> tuple[list[str] | None, str | None, str]:
        """The recording's own command to run, the folder to run it in, and why it does
        not run ("" when it does, or there is none), saying what happens `then`."""
        if not recording.command:
            return None, None, ""
        if not self.checked:
            return list(recording.command), recording.cwd, ""
        shown = tuple(shown_command(recording.command))
        if shown in self.allowed:
            return list(recording.command), None, ""
        return (
            None,
            None,
            (
                f"its agent command ({shlex.join(shown)}) comes from a shared store and is not "
                f"one this machine allows: {then} (allow it with --allow-agent, or give "
                "--agent CMD)"
            ),
        )


OWN_STORE = RecordedAgents()
"""A store the user keeps: its recorded commands run as recorded."""
