"""Acting on a matched step: its action with this run's values, moved with the task, its
first piece performed only if the target is still exactly as checked and the windows
over the task are still those the check saw (on X11 with every other client held still),
the rest piece by piece; and the action as progress tells it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mmcli.backends.base import Backend
from mmcli.model import Action, Recording, Step
from mmcli.params import Values
from mmcli.replay.judge import Match
from mmcli.screen.fingerprint import Rect
from mmcli.screen.matcher import Difference, Verdict, target_rect
from mmcli.screen.relocate import Offset, moved
from mmcli.screen.windows import layout

CONFIRM_RETRIES = 5
"""How often the target may change between the check and the action before replay gives
up on the step (a divergence)."""
ACT_THRESHOLD = 24
"""Colour levels by which a target pixel may differ from the checked screen at the moment
of acting (anti-aliasing noise), no more."""


class Actor:
    def __init__(
        self,
        backend: Backend,
        recording: Recording,
        values: Values,
        check_abort: Callable[[], None],
        scope: Callable[[Offset], Rect | None] = lambda offset: None,
    ) -> None:
        self.backend = backend
        self.recording = recording
        self.values = values
        self.check_abort = check_abort
        self.scope = scope
        """Where the task is on the screen, with it moved by an offset (`Judge.scope`)."""

    def act(self, match: Match, step: Step, offset: Offset) -> bool:
        """Perform `step` (matched in `match`) with the task at `offset`; False, with
        nothing done, when the target changed since it was checked."""
        first, *rest = moved(step.action.render(self.values.all), offset).pieces()
        if not self.backend.perform_checked(first, self._unchanged(match, step)):
            return False
        for piece in rest:
            self.check_abort()  # Ctrl-C stops a long action between two pieces
            self.backend.perform(piece)
        return True

    def shown(self, action: Action, offset: Offset) -> str:
        """The action as progress tells it: where it acts (moved by `--relocate`: and where
        it was recorded) and the params' values it types; a secret stays `{{key}}`."""
        hidden = set(self.recording.secrets) | set(self.values.secrets)
        params = {k: v for k, v in self.values.params.items() if k not in hidden}
        text = moved(action.render(params), offset).describe()
        if any(value in text for value in self.values.secrets.values()):
            # A param's value holding a secret's: nothing typed is told.
            text = moved(action, offset).describe()
        if offset != (0, 0) and action.x is not None and action.y is not None:
            dx, dy = offset
            text += f" (moved by {dx:+d},{dy:+d} from ({action.x}, {action.y}))"
        return text

    def _target_on_screen(self, match: Match, step: Step) -> Rect | None:
        patch = step.fingerprint.patch
        if patch is None:
            return None
        rect = target_rect(patch)
        rect = Rect(rect.x + match.offset[0], rect.y + match.offset[1], rect.w, rect.h)
        x0, y0 = max(rect.x, 0), max(rect.y, 0)
        x1, y1 = min(rect.right, match.frame.width), min(rect.bottom, match.frame.height)
        return Rect(x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None

    def _unchanged(self, match: Match, step: Step) -> Callable[[], bool]:
        """At the moment of acting (on X11 with every other client held still), the target
        is still exactly as checked, and the window system shows the same windows over the
        task as at the check (none mapped, unmapped, raised, moved or given the focus
        since): a dialog that appeared since is not acted under, wherever it is."""
        scope = self.scope(match.offset)

        def unchanged() -> bool:
            if match.stack is not None:
                now = self.backend.stack()
                if now is None or layout(now, scope) != layout(match.stack, scope):
                    return False
            rect = self._target_on_screen(match, step)
            if rect is None:
                return True
            now_pixels = self.backend.grab_rect(rect)[..., :3].astype(np.int16)
            then = match.frame.pixels[rect.y : rect.bottom, rect.x : rect.right, :3]
            return bool((np.abs(now_pixels - then) <= ACT_THRESHOLD).all())

        return unchanged

    def changed_at_act(self, match: Match, step: Step) -> Match:
        """The look to report when the target changed each time replay was about to act."""
        rect = self._target_on_screen(match, step) or Rect(0, 0, 0, 0)
        difference = Difference(
            "target",
            rect,
            "changed each time replay was about to act; attempts",
            CONFIRM_RETRIES + 1,
            0,
        )
        return Match(None, Verdict((difference,)), self.backend.grab(), match.offset)
