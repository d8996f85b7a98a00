"""Where the pointer belongs for an outcome, and what its place shows.

The outcome is judged on the screen as found first, the pointer where the last action
left it. Only a still screen that does not show the outcome has the pointer put where it
was when the outcome was recorded (`outcome_pointer`: what its place shows, a hover, a
readout of its coordinates) and is looked at again. Where the two looks differ from the
outcome only where the pointer's move changed the screen, each by no more than a readout's
line, and in no place both, the difference is the pointer's place, not the task's result
(`pointer_explains`, `replay.outcome.OutcomeJudge.pointer_only`): GIMP shows the
pointer's coordinates in its status bar as it enters the image (off by the offset of the
dialog the last click closed, as found) and marks them on its rulers as it moves (off
once the pointer is put back). A result that differs differs in both looks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mmcli.model import EndScreen, Step
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Verdict
from mmcli.screen.relocate import moved_point
from mmcli.screen.windows import WindowRef, relocation


def outcome_pointer(
    outcome: EndScreen, live: Sequence[WindowRef] | None, relocate: bool
) -> tuple[int, int] | None:
    """Where the pointer belongs for `outcome`: where it was over the window under it when
    the outcome was recorded (`EndScreen.under`), that window where it stands now among
    `live` (moved: with `relocate`, the one window of its class and size). A dialog the
    last steps acted in may have stood apart from the window it closed back to: the
    pointer the steps placed by the dialog is then off that window's place, and what its
    place shows there (a hover, a readout of its coordinates) differs. None when not
    known: no window recorded under it, the window system tells nothing, or no such
    window now (closed, moved without `relocate`, or several alike)."""
    if outcome.under is None or outcome.fingerprint.pointer is None or live is None:
        return None
    if relocate:
        offset = relocation(outcome.under, live)
    else:
        offset = (0, 0) if outcome.under in live else None
    return None if offset is None else moved_point(outcome.fingerprint.pointer, offset)


POINTER_MARK_MAX = (128, 32)
"""The largest difference a pointer's place may explain: a readout's line of text, a
ruler's mark. A message, a panel, a value typed is the task's, pointer or not."""


def pointer_explains(before: Verdict, after: Verdict, moved: Sequence[Rect]) -> bool:
    """Whether the differences of two looks at an outcome, `before` and `after` the
    pointer's move (which changed the screen in `moved`), are what the pointer's place
    shows: each is pixels, no larger than a readout's line (`POINTER_MARK_MAX`), where
    the move changed the screen, and no place differs in both looks."""
    differences = [*before.differences, *after.differences]
    most_w, most_h = POINTER_MARK_MAX
    return (
        bool(differences)
        and all(d.matcher == "regions" for d in differences)
        and all(d.region.w <= most_w and d.region.h <= most_h for d in differences)
        and all(any(d.region.intersects(m) for m in moved) for d in differences)
        and not any(
            a.region.intersects(b.region) for a in before.differences for b in after.differences
        )
    )


@dataclass(frozen=True)
class PointerLook:
    """The second look of the outcome check, with the pointer put where it was when the
    outcome was recorded (module docstring)."""

    approach: Callable[[], bool]
    """Put the pointer there; False when it stands there already (or is not known)."""
    pointer_only: Callable[[Step, Frame, Frame], bool]
    """`OutcomeJudge.pointer_only`: the screen as found and the one after, against an
    end's outcome, differ only in what the pointer's place shows."""
