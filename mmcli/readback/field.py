"""What a field was read to hold, and whether that is what was typed into it.

`FieldText` is one read of a field's text (through the accessibility tree, or OCR of its
pixels); `NotRead` says why nothing could be read. `compare_typed(expected, read)` is the
judgement, one of three outcomes:

- `VERIFIED`: the field holds exactly the expected text (whitespace runs and Unicode
  forms aside). The only outcome that may count as done.
- `DIFFERS`: it clearly holds other text: the value doubled, text before or after it
  (left from before?), cut, another value, empty.
- `UNREADABLE`: the read cannot tell: nothing read, OCR unsure (low confidence, or off
  by no more than OCR's noise), only part of the field visible, a password field.
  "Not verified", never a pass.

The accessibility tree gives the text itself: anything but the exact text DIFFERS. OCR is
held to the exact text too; none of its misreads is taken for a match. Measured on 30
values typed into each of a Tk, a GTK 3, a Qt 5 and a Chromium entry (`readback.ocr`):
every read of text the field showed whole was exact but for accented letters (lost, as
in "Muller" for "Müller", or read as two, "Nufiez" for "Núñez") and a letter's case
("Smithjohn" for "SmithJohn"); a field scrolled sideways showed part of the value (read
as `partial`). So an OCR read off only by accents or case, or by no more than
`ocr_noise(expected)` other edits (tesseract is known to mix up l/1/I, O/0, rn/m in
other fonts), is UNREADABLE; one further off, or holding the expected text twice, DIFFERS.
"""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass
from typing import Literal

from mmcli.screen.fingerprint import Rect

Source = Literal["accessibility", "ocr"]

PASSWORD_ROLES = frozenset({"password text"})
"""Accessible roles whose text is masked: their read tells nothing of the value."""
MIN_CONFIDENCE = 50.0
"""Below this mean word confidence (0-100) an OCR read that is not exact is UNREADABLE:
too unsure to say the field holds other text (the 120 reads measured: 81-97 exact,
61-96 off by accents, case or a part cut by the field's edge)."""
LONGEST_COMPARED = 2000
"""Characters beyond which OCR reads are not compared edit by edit (cost is quadratic)."""


@dataclass(frozen=True)
class FieldText:
    """The text read from one field.

    `rect`: where it was read on the screen (the accessible object's extents, or the
    region OCR was given). `confidence`: OCR's mean word confidence, 0-100; None for the
    accessibility tree (exact), or when tesseract found no word in ink it saw; a field
    with no ink at all reads "" at 100 (it is empty). `partial`: the read may hold only
    part of the field's text: the accessibility read stopped at its length bound, or the
    OCR'd text spans the field's width (a field scrolled sideways shows only part of a
    long value). `role` and `app`: the accessible object's role ("text", "entry",
    "password text") and its application's name (accessibility only).
    """

    text: str
    source: Source
    rect: Rect | None = None
    confidence: float | None = None
    partial: bool = False
    role: str = ""
    app: str = ""
    hidden: bool = False
    """OCR: another window covers part of the region read (over its middle): what shows
    there is that window's, not the field's, so a text that differs is not the field's
    own to judge."""
    under: bool = False
    """OCR: read from the app window's own pixels under another window that covers part
    of the field (a compositing manager keeps them whole): the field's text, all of it."""


@dataclass(frozen=True)
class NotRead:
    """Nothing could be read from `source`, and why (one line)."""

    source: Source
    reason: str


class ReadOutcome(enum.StrEnum):
    VERIFIED = "verified"
    DIFFERS = "differs"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class TypedCheck:
    """The judgement of one read against the text that should be there."""

    outcome: ReadOutcome
    expected: str
    read: str
    """What was read ('' when nothing was)."""
    source: Source
    reason: str
    """One line: why this outcome ("reads the expected text 2 times: ...")."""
    confidence: float | None = None
    """OCR's mean word confidence for the read (None: the accessibility tree, or no word)."""

    @property
    def verified(self) -> bool:
        return self.outcome is ReadOutcome.VERIFIED


def normalise(text: str) -> str:
    """Unicode NFC, runs of whitespace (non-breaking spaces, newlines) as one space, no
    whitespace at the ends."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def times_shown(shown: str, typed: str) -> int:
    """How many times `typed` shows in `shown`, case aside (OCR reads the capital J of
    "JuniorJosephine" as a small one): more than once, a field that holds it twice."""
    want = normalise(typed).casefold()
    return normalise(shown).casefold().count(want) if want else 0


def ocr_noise(expected: str) -> int:
    """How many character edits (beyond accents and case) an OCR read may be off by and
    still be taken for noise: one, and one more each 12 characters."""
    return 1 + len(expected) // 12


def compare_typed(expected: str, read: FieldText | NotRead) -> TypedCheck:
    """Whether `read` shows exactly `expected` (see the module's docstring)."""
    if isinstance(read, NotRead):
        return TypedCheck(ReadOutcome.UNREADABLE, expected, "", read.source, read.reason)
    want, got = normalise(expected), normalise(read.text)
    if read.role in PASSWORD_ROLES:
        outcome, reason = ReadOutcome.UNREADABLE, "a password field does not show its text"
    elif read.source == "accessibility":
        outcome, reason = _judge_accessible(want, got, read.partial)
    else:
        outcome, reason = _judge_ocr(want, got, read)
        if outcome is ReadOutcome.DIFFERS and read.hidden:
            outcome = ReadOutcome.UNREADABLE
            reason = f"another window covers part of the field: {reason}"
        elif read.under:
            reason = f"{reason} (under another window, in the app's own pixels)"
    return TypedCheck(outcome, expected, read.text, read.source, reason, read.confidence)


def _judge_accessible(want: str, got: str, partial: bool) -> tuple[ReadOutcome, str]:
    if got == want:
        return ReadOutcome.VERIFIED, f"reads {_quote(got)}"
    if partial and want.startswith(got):
        return ReadOutcome.UNREADABLE, "the text read stops at its length bound"
    return ReadOutcome.DIFFERS, _shape(want, got)


def _judge_ocr(want: str, got: str, read: FieldText) -> tuple[ReadOutcome, str]:
    sure = read.confidence is not None and read.confidence >= MIN_CONFIDENCE
    if not got:
        if read.confidence is None:
            return ReadOutcome.UNREADABLE, "OCR read no word"
        if want:
            return ReadOutcome.DIFFERS, "the field is empty"
        return ReadOutcome.VERIFIED, "the field is empty"
    if read.partial:
        return _judge_partial(want, got, sure)
    if got == want:
        return ReadOutcome.VERIFIED, f"reads {_quote(got)}"
    if not sure:
        return ReadOutcome.UNREADABLE, f"OCR unsure ({read.confidence or 0:.0f}): {_quote(got)}"
    shown = got
    want, got = _unbordered(want), _unbordered(got)
    a, b = _loose(want), _loose(got)
    if a and b.count(a) >= 2:
        return ReadOutcome.DIFFERS, _shape(want, got)
    noise = ocr_noise(want)
    if abs(len(a) - len(b)) <= 2 * noise and max(len(a), len(b)) <= LONGEST_COMPARED:
        distance = ocr_distance(want, got)
        if distance == 0:
            why = "accents, case or a border"
            return ReadOutcome.UNREADABLE, f"OCR cannot tell {why} from text: {_quote(shown)}"
        if distance <= noise:
            return ReadOutcome.UNREADABLE, f"OCR unsure ({distance} off): {_quote(shown)}"
    return ReadOutcome.DIFFERS, _shape(want, got)


def _judge_partial(want: str, got: str, sure: bool) -> tuple[ReadOutcome, str]:
    """A field that shows only part of its text: at best, that part is in the value."""
    shown = f"only part of the field shows: {_quote(got)}"
    a, b = _loose(want), _loose(got)
    if not sure or max(len(a), len(b)) > LONGEST_COMPARED:
        return ReadOutcome.UNREADABLE, shown
    # The visible part's first and last letters may be cut in half and misread.
    if substring_distance(b, a) <= ocr_noise(got) + 2:
        return ReadOutcome.UNREADABLE, shown
    return ReadOutcome.DIFFERS, f"shows {_quote(got)}, which is not in {_quote(want)}"


def _shape(want: str, got: str) -> str:
    """The way `got` differs from `want`, in words."""
    if not got:
        return "the field is empty"
    if not want:
        return f"the field should be empty but reads {_quote(got)}"
    a, b = want.casefold(), got.casefold()
    if b.count(a) >= 2:
        return f"reads the expected text {b.count(a)} times: {_quote(got)}"
    if b.endswith(a):
        return f"text before the expected value: {_quote(got[: -len(want)])} (left from before?)"
    if b.startswith(a):
        return f"text after the expected value: {_quote(got[len(want) :])}"
    if a.startswith(b):
        return f"cut: reads {_quote(got)}, the end {_quote(want[len(got) :])} missing"
    if a.endswith(b):
        return f"cut: reads {_quote(got)}, the start {_quote(want[: -len(got)])} missing"
    if a in b:
        return f"more text around the expected value: {_quote(got)}"
    return f"reads {_quote(got)}, not {_quote(want)}"


def _loose(text: str) -> str:
    """`text` without accents, casefolded (what OCR cannot be relied on to tell)."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


BORDER_GLYPHS = frozenset("|\\/[]!()_")
"""What OCR makes of a field's border or a separator line beside a word: one of these,
or nothing (a Swing field's left border read "\\" when recorded, "|" at replay, and a
"|" more at its right; a spreadsheet cell's gridline read "__" after the value when
recorded)."""


def _unbordered(text: str) -> str:
    """`text` without its words made of border glyphs alone (a gridline read as "__")."""
    return " ".join(w for w in text.split(" ") if w and not set(w) <= BORDER_GLYPHS)


def _at_edge(text: str, index: int) -> bool:
    """Whether `text[index]` is a border glyph standing at a word's edge."""
    if text[index] not in BORDER_GLYPHS:
        return False
    return index in (0, len(text) - 1) or text[index - 1] == " " or text[index + 1] == " "


def ocr_distance(expected: str, read: str) -> int:
    """Edits from `expected` to what OCR read, where a letter read without its accent or
    in the other case costs nothing, and an accented letter read as two ("ñ" as "fi",
    "ü" as "ii", as measured) costs one, like any other misread letter. A border glyph
    (`BORDER_GLYPHS`) read as another, or read or missed at a word's edge, costs nothing:
    a border is no text."""
    want, got = expected.casefold(), read.casefold()
    loose_got = [_loose(c) for c in got]
    previous = [0]
    for j in range(1, len(got) + 1):
        previous.append(previous[j - 1] + (not _at_edge(got, j - 1)))
    for i, cw in enumerate(want, 1):
        plain, accented = _loose(cw), not cw.isascii()
        dropped = not _at_edge(want, i - 1)
        current = [previous[0] + dropped]
        for j in range(1, len(got) + 1):
            both_borders = cw in BORDER_GLYPHS and got[j - 1] in BORDER_GLYPHS
            best = min(
                previous[j] + dropped,
                current[j - 1] + (not _at_edge(got, j - 1)),
                previous[j - 1] + (plain != loose_got[j - 1] and not both_borders),
            )
            if accented and j >= 2:
                best = min(best, previous[j - 2] + 1)
            current.append(best)
        previous = current
    return previous[-1]


def substring_distance(part: str, whole: str) -> int:
    """The fewest edits that turn `part` into some run of `whole`'s characters."""
    previous = [0] * (len(whole) + 1)  # a run may start anywhere in `whole`
    for i, cp in enumerate(part, 1):
        current = [i]
        for j, cw in enumerate(whole, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (cp != cw)))
        previous = current
    return min(previous)  # and end anywhere


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
