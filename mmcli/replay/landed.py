"""Reading back what replay typed, where it landed, before the next action.

A typing step recorded with its field read back (`Step.landed`: the field's whole text
after the typing, each param as its placeholder, and where the field stood) is read once
the app has drawn it, on the screen as replay finds it before the next step (still, the
pointer not yet moved: a hover or tooltip replay's own pointer brings never covers the
field, and no read, a tenth of a second of OCR, stands between that step's check and its
action, while the app draws the hover the move brought); or after the last action,
before the outcome. What the read found counts once the next step's screen matched. The
field is read the way it was recorded (`Backend.read_field`: the accessibility tree, or
OCR of its box moved with the task) and compared with the recorded text filled with this
run's values (`readback.field.compare_typed`):

- the field shows exactly that text: verified;
- it clearly shows other text (the value doubled, text left from before, cut, another
  value): a divergence there, before the next action; never "done";
- it cannot be told (no accessible text and OCR unsure, the field scrolled sideways, a
  password field, a step recorded without a read-back): the run says "not verified".

Text that could hold a secret is never told: its reasons say what was found, not what.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mmcli.backends.base import Backend
from mmcli.model import ActionKind, Step, render_text
from mmcli.params import Values
from mmcli.readback.field import (
    MIN_CONFIDENCE,
    ReadOutcome,
    TypedCheck,
    compare_typed,
    normalise,
)
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.relocate import Offset

TREE_LAG = 1.5
"""How long an accessibility tree that reads other text than typed is asked again before
it counts (Firefox's tree told "empty" for a field drawn with the typed value: 5 of 13
replays on Xfce)."""
TREE_POLL = 0.1
DRAW_LAG = 1.0
"""How long a field OCR read other text in is read again, on the screen as it is, before
it counts: an app may draw the last keys late (Swing: up to half a second after them)."""
CARET_GLYPHS = frozenset("|]!lI")
"""What OCR makes of a text caret it reads as a glyph (`_caret_after`)."""


@dataclass(frozen=True)
class Typed:
    """A typing step replay performed, waiting to be read back."""

    step: Step
    depth: int
    offset: Offset


@dataclass(frozen=True)
class Read:
    """A typed field read back, waiting for the next step's look to count."""

    number: int
    """The typing step's number in this run."""
    expected: str
    box: Rect | None
    prefer: str
    check: TypedCheck


class Landing:
    def __init__(self, backend: Backend, values: Values, progress: Callable[[str], None]) -> None:
        self.backend = backend
        self.values = values
        self.progress = progress
        self.waiting: Typed | None = None
        self.verified = 0
        """Typed values read back as typed."""
        self.unverified: list[str] = []
        """For each typed value that could not be read back: where, and why."""

    def typed(self, step: Step, depth: int, offset: Offset) -> None:
        """Replay just typed `step`'s text: read it back before the next action."""
        if step.action.kind is ActionKind.TYPE:
            self.waiting = Typed(step, depth, offset)

    @property
    def outcome(self) -> bool | None:
        """Every value typed read back as typed (None: nothing was typed)."""
        if not self.verified and not self.unverified:
            return None
        return not self.unverified

    def check(self, frame: Frame | None) -> str | None:
        """Read back the step typed last on `frame` (the screen the app has drawn it on;
        None: the screen now) and judge it at once: why the run must stop there (the
        field shows other text), or None."""
        return self.judge(self.read(lambda: frame))

    def read(self, screen: Callable[[], Frame | None]) -> Read | None:
        """Read back the step typed last, if it was recorded with its field read, on the
        frame `screen` gives (asked only then: the screen as found, before the next
        step's look moves the pointer); `judge` tells what the read means."""
        typed, self.waiting = self.waiting, None
        if typed is None:
            return None
        step, number = typed.step, typed.depth + 1
        landed = step.landed
        if landed is None or landed.text is None:
            why = "recorded without it" if landed is None else "it could not be read when recorded"
            self._unverified(number, f"the field typed into was not read back ({why})")
            return None
        expected = render_text(landed.text, self.values.all)
        box = landed.box.moved(*typed.offset) if landed.box is not None else None
        prefer = "ocr" if landed.source == "ocr" else ""
        return Read(number, expected, box, prefer, self._read(expected, box, screen(), prefer))

    def judge(self, read: Read | None, frame: Frame | None = None) -> str | None:
        """What `read` means, once the next step's screen matched on `frame`: why the run
        must stop there (the field shows other text), or None. OCR that read other text
        reads the field again before it counts, on `frame` and then on the screen as it
        is, every `TREE_POLL` for up to `DRAW_LAG` (an app that draws the last keys late:
        Swing's field read empty on the screen as found, drawn a moment later). OCR too
        unsure to say anything (`_unsure`) is read the same way: once more on `frame`, and
        on the screen as it is only while that read differs. So is a read that is the text
        typed but for a caret read after it (`_caret_after`): in its blink's other phase,
        it is not drawn."""
        if read is None:
            return None
        check = read.check
        if (
            (check.outcome is ReadOutcome.DIFFERS and check.source == "ocr")
            or _unsure(check)
            or _caret_after(check)
        ):
            check = self._drawn(read, frame)
        secret = self._secret(read.expected)
        reason = check.reason if not secret else _without_text(check.outcome)
        if check.outcome is ReadOutcome.VERIFIED:
            self.verified += 1
            return None
        if check.outcome is ReadOutcome.UNREADABLE:
            self._unverified(read.number, f"the field typed into could not be read back: {reason}")
            return None
        return (
            f"The field typed into at step {read.number} does not show what was typed: "
            f"{reason} (read by {'OCR' if check.source == 'ocr' else 'the accessibility tree'})"
        )

    def _read(
        self, expected: str, box: Rect | None, frame: Frame | None, prefer: str
    ) -> TypedCheck:
        """The field read and judged against `expected`. An accessibility tree may tell
        the field's text later than the app draws it (Firefox's, from its page's process:
        "empty" over a field that shows the typed value): one that differs is asked again
        for `TREE_LAG` before it counts. OCR reads what is drawn: once (`judge` reads it
        again)."""
        check = compare_typed(expected, self.backend.read_field(box, frame, prefer))
        if check.source != "accessibility":
            return check
        return self._again(check, expected, box, prefer, TREE_LAG)

    def _drawn(self, read: Read, frame: Frame | None) -> TypedCheck:
        """OCR's read of `read`'s field again: on `frame`, then on fresh screens, until it
        no longer differs or `DRAW_LAG` has passed."""
        shown = self.backend.read_field(read.box, frame, read.prefer)
        check = compare_typed(read.expected, shown)
        return self._again(check, read.expected, read.box, read.prefer, DRAW_LAG)

    def _again(
        self, check: TypedCheck, expected: str, box: Rect | None, prefer: str, lag: float
    ) -> TypedCheck:
        """`check`, while it differs (or shows a caret after the text), read again on the
        screen as it is every `TREE_POLL` for up to `lag`."""
        deadline = time.monotonic() + lag
        while (
            check.outcome is ReadOutcome.DIFFERS or _caret_after(check)
        ) and time.monotonic() < deadline:
            time.sleep(TREE_POLL)
            check = compare_typed(expected, self.backend.read_field(box, None, prefer))
        return check

    def _secret(self, text: str) -> bool:
        return any(value and value in text for value in self.values.secrets.values())

    def _unverified(self, number: int, why: str) -> None:
        line = f"step {number}: {why}"
        self.unverified.append(line)
        self.progress(f"{line}: not verified")


def _unsure(check: TypedCheck) -> bool:
    """An OCR read too unsure to say anything (`field.MIN_CONFIDENCE`): a field caught
    as the app drew it (a cell cleared, its caret drawn, the text not yet) reads as
    OCR's guess at what little ink there was. It is read again on the next step's
    matched screen, once: a field that cannot be read costs one read more, no wait."""
    return (
        check.outcome is ReadOutcome.UNREADABLE
        and check.source == "ocr"
        and check.confidence is not None
        and check.confidence < MIN_CONFIDENCE
    )


def _caret_after(check: TypedCheck) -> bool:
    """An OCR read that is the text typed but for one bar after it: a caret standing after
    the text that OCR's caret rule (`readback.ocr`) did not tell from a glyph (Wine's
    notepad: "Paris|" for "Paris", its caret as tall as the capitals). A caret blinks:
    read again over `DRAW_LAG`, the field shows without it in the blink's other phase,
    and the read is then judged as any other. A bar that stays (a letter, a border)
    leaves the value not verified, never verified."""
    if check.outcome is not ReadOutcome.UNREADABLE or check.source != "ocr":
        return False
    read, want = normalise(check.read), normalise(check.expected)
    return bool(want) and read[-1:] in CARET_GLYPHS and read[:-1].rstrip() == want


def both(mine: bool | None, theirs: bool | None) -> bool | None:
    """Whether every value typed by replay (`mine`) and by a healing agent (`theirs`) was
    read back as typed; None when neither typed anything."""
    if mine is None:
        return theirs
    return mine if theirs is None else mine and theirs


def _without_text(outcome: ReadOutcome) -> str:
    """A reason for a field that holds a secret: what was found, never the text."""
    if outcome is ReadOutcome.UNREADABLE:
        return "the read cannot tell (the text is a secret's: not shown)"
    return "it reads other text (the text is a secret's: not shown)"
