"""Actions an agent's endpoint builds from the input it passes on (the VNC and the DevTools
channels): each input event feeds an `ActionBuilder`; where one starts a new action the
recorder keeps the screen first (the event is passed on only after); typed keys' times
give the typing's pace. The actions are final when the agent has exited (`finish`)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from mmcli.desktop.input_events import ActionBuilder, EventKind, InputEvent
from mmcli.model import MAX_KEY_MS, Action, ActionKind

if TYPE_CHECKING:
    from mmcli.capture.recorder import Recorder
    from mmcli.capture.steps import Capture


@dataclass
class Pending:
    """An action being built and the screen kept before it."""

    capture: Capture
    keys: list[float] = field(default_factory=list)
    """When each typed character came (monotonic), for the pace."""
    clipboard: str | None = None
    """What the agent had put on the clipboard when this action started (VNC)."""


class Built:
    """The actions built so far, each with the screen kept before it."""

    def __init__(self, recorder: Recorder, before: Callable[[Action], None] | None = None) -> None:
        self.recorder = recorder
        self.builder = ActionBuilder(apart=self._apart)
        self.pending: list[Pending] = []
        self.before = before
        """Told each new action before its screen is kept (the DevTools channel reads the
        field typed into before, while the page still has it focused)."""

    def _apart(self, _first: InputEvent, event: InputEvent) -> bool:
        """A window opened or closed under the pointer since the screen kept before the
        last press (`ActionBuilder.apart`): the press is not passed on yet, so the screen
        once it has answered the last input is the one it goes to."""
        if not self.pending:
            return False
        return self.recorder.window_changed(self.pending[-1].capture, (event.x, event.y))

    def feed(self, event: InputEvent, clipboard: str | None = None) -> None:
        if self.builder.feed(event):
            action = self.builder.actions[-1].action
            if self.before is not None:
                self.before(action)
            self.pending.append(Pending(self.recorder.shoot(action), [], clipboard))
        last = self.builder.actions[-1].action if self.builder.actions else None
        if (
            event.kind is EventKind.KEY
            and event.char
            and last is not None
            and last.kind is ActionKind.TYPE
            and self.pending
        ):
            self.pending[-1].keys.append(event.at)

    def finish(
        self, final: Callable[[Action, Pending], tuple[Action, str]] | None = None
    ) -> list[Capture]:
        """The agent has exited: each action final (`final` may turn it into another, with
        a note), typed text paced, with the screen kept before it."""
        actions = self.builder.finish()
        self.recorder.unsupported.extend(self.builder.unrecordable)
        captures = []
        for pending, action in zip(self.pending, actions, strict=True):
            capture = pending.capture
            action, note = final(action, pending) if final is not None else (action, "")
            capture.action, capture.note = paced(action, pending), note
            captures.append(capture)
        return captures


def paced(action: Action, pending: Pending) -> Action:
    """Typed text with the median gap between its keys as its pace."""
    if action.kind is ActionKind.TYPE and len(pending.keys) > 1:
        gaps = [b - a for a, b in zip(pending.keys, pending.keys[1:], strict=False)]
        ms = round(statistics.median(gaps) * 1000)
        return replace(action, key_ms=min(max(ms, 0), MAX_KEY_MS))
    return action
