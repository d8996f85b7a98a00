"""A heal that typed stale data: a param's recorded value, where this run gave another.

An agent that does not take its values from `mm` (a value in a config file, in a shell
script's text, in its own memory) types the value it was recorded with. Saving its heal
would repeat that wrong value on every later replay from memory; so the values a
recording was made with are kept as digests (`Recording.param_digests`) and the heal's
typed text is searched for them before anything is saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mmcli.capture.secrets import join_keystrokes, joined
from mmcli.model import PLACEHOLDER, Action, Recording
from mmcli.params import Values, find_digest, parametrize


@dataclass(frozen=True)
class StaleValue:
    key: str
    typed: str
    """The recorded value the agent typed."""
    current: str
    """The param's value for this run."""

    def message(self) -> str:
        return (
            f"the agent typed {self.typed!r}, the value param {self.key!r} was recorded "
            f"with, where this replay gave {self.current!r}; nothing was learned (the agent "
            f"should take the value from MM_PARAM_{self.key.upper()}, see the Fallback "
            "contract in the README)"
        )


def stale_value(
    actions: Sequence[Action], recording: Recording, values: Values
) -> StaleValue | None:
    """The first param whose recorded value `actions` type while `values` give it
    another (a value that is this run's value of some param is no stale one)."""
    current = set(values.all.values())
    texts = [
        # this run's values out first: "John" recorded is no stale piece of "Johnny" typed
        PLACEHOLDER.sub("\0", parametrize(joined([actions[i] for i in group]).text, values.all))
        for group in join_keystrokes(actions)
    ]
    for key, digests in sorted(recording.param_digests.items()):
        value = values.params.get(key)
        if value is None:
            continue
        for text in texts:
            typed = find_digest(text, key, digests)
            if typed is not None and typed not in current:
                return StaleValue(key, typed, value)
    return None
