"""Other apps' windows a run meets: which a check may leave out (`windows.left_out`),
which the run knows (standing apart from the task when it began, left out of a check
that passed), and which the task's windows going away at its end laid bare
(`windows.revealed`). Nothing under `--policy strict`, for a recording that does not
know its windows, or where the window system says nothing (no stack)."""

from __future__ import annotations

from collections.abc import Sequence

from mmcli.model import Step
from mmcli.screen.fingerprint import Rect
from mmcli.screen.matcher import Policy
from mmcli.screen.windows import StackedWindow, found_apart, left_out, revealed


class Bystanders:
    def __init__(self, policy: Policy, task_classes: set[str]) -> None:
        self.task_classes = task_classes
        self.active = policy is not Policy.STRICT and bool(task_classes)
        """Whether windows are judged by what they are at all."""
        self.known: dict[int, list[Rect]] | None = None
        """Other apps' windows this run knows, by their window system's id: those that
        stood apart when it began (`windows.found_apart`), and those left out of a check
        that passed, with what showed of each then. None: not asked yet."""

    def begin(self, stack: Sequence[StackedWindow] | None) -> None:
        """Note the windows standing apart from the task on the run's first screen."""
        if self.known is None:
            self.known = {w.xid: [] for w in found_apart(stack or [], self.task_classes)}

    def left_out(
        self, stack: Sequence[StackedWindow] | None, protected: list[Rect] | None
    ) -> list[StackedWindow]:
        """`windows.left_out` on the live stack with `protected`."""
        if not self.active or stack is None:
            return []
        return left_out(stack, protected, self.task_classes)

    def passed(self, windows: Sequence[StackedWindow]) -> None:
        """A check passed with `windows` left out (each a piece that showed)."""
        if self.known is None:
            self.known = {}
        for w in windows:
            shown = self.known.setdefault(w.xid, []) if w.xid else []
            if w.frame not in shown:
                shown.append(w.frame)

    def revealed(
        self,
        stack: Sequence[StackedWindow] | None,
        end: Step,
        changed: list[Rect],
        protected: list[Rect],
    ) -> list[StackedWindow]:
        """`windows.revealed` on the live stack after `end`, the path's last step
        (`changed`: what it changed when recorded)."""
        if not self.active or stack is None or end.outcome is None or not end.outcome.vacated:
            return []
        vacated, known = end.outcome.vacated, self.known or {}
        return revealed(stack, self.task_classes, known, vacated, changed, protected)
