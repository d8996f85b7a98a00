"""What a capture keeps at full resolution where an echo of typed text may appear: what
the screen changed since the last capture, once the task typed anything, and what a run
of typing changed since the screen before its first piece."""

from __future__ import annotations

from dataclasses import dataclass

from mmcli.capture.secrets import typed_text
from mmcli.capture.steps import Capture
from mmcli.screen.echoes import Detail
from mmcli.screen.fingerprint import Frame

DETAIL_BUDGET = 64 * 2**20
"""Bytes of full-resolution detail (`Capture.changed`) one recording keeps at most: a
line of text is a few kB, a dialog ~100 kB; a long task's later steps, past it, look for
echoes downscaled alone."""


@dataclass
class Details:
    typed_yet: bool = False
    """The task has typed something: from then on, what changes is kept in detail."""
    left: int = DETAIL_BUDGET
    """Bytes of detail the recording may still keep."""

    def typed(self, captures: list[Capture], frame: Frame, changed: Detail | None) -> Detail | None:
        """After a run of typing actions, what it changed on `frame` since the screen
        before its first, at full resolution (`Capture.typed`); None after anything else.
        A run of one action changed what `frame` changed since the last capture
        (`changed`, from `Details.changed`): that is taken as it is."""
        first = None
        for capture in reversed(captures):
            if typed_text(capture.action) is None:
                break
            first = capture
        if first is None:
            return None
        if first is captures[-1] and changed is not None:
            return changed
        return Detail.of(first.small, frame)

    def changed(self, captures: list[Capture], frame: Frame) -> Detail | None:
        """What changed on `frame` since the last capture, at full resolution
        (`Capture.changed`), once the task typed anything: where an echo of typed text
        may appear. Up to `DETAIL_BUDGET` bytes over the recording; after that, echoes
        are looked for downscaled alone."""
        if captures and typed_text(captures[-1].action) is not None:
            self.typed_yet = True
        if not self.typed_yet or self.left <= 0:
            return None
        detail = Detail.of(captures[-1].small, frame)
        if detail is not None:
            self.left -= detail.nbytes
        return detail
