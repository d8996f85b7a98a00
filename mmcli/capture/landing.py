"""Where typed text landed, as a recording reads it: what an action changed on the screen
(`effect_regions`: for typing, the lines it wrote), the typed field's box on the screen
drawn after it (`field_box`, or where the text shows alone on its line when the box
around all it changed reads otherwise: `phrase_boxes`), and the field read back there
onto the typing's capture (`read_back`), through the backend (the accessibility tree,
else OCR). `steps.landed_of` keeps what a recording compares at replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from mmcli.backends.base import Backend
from mmcli.model import Action, ActionKind
from mmcli.readback.field import FieldText, NotRead, normalise, times_shown
from mmcli.readback.ocr import find_phrase_alone, find_phrase_twice
from mmcli.readback.reader import widen_to_field
from mmcli.screen.analysis import changed_regions, moved_pixels
from mmcli.screen.carets import typed_lines
from mmcli.screen.echoes import ECHO_GAP, pieces, text_lines
from mmcli.screen.fingerprint import SCALE, Frame, Rect

if TYPE_CHECKING:
    from mmcli.capture.steps import Capture


READ_BACK_MIN = 3
"""Typed text at least this long found twice in its field is "typed twice" (`redone`)."""


def readable(action: Action) -> bool:
    """Whether typed text can be read back as the text of one field: it moves to no
    other field on the way (no Tab, no Return) and is not empty."""
    text = action.text
    return action.kind is ActionKind.TYPE and bool(text) and not any(c in text for c in "\t\r\n")


PHRASE_READS = 3
"""The places the typed text shows read, at most, when the box around all a typing changed
did not read as typed (`read_back`)."""
LINE_READS = 3
"""The separate lines a typing changed read, at most, each on its own, when the box
around them all did not read as typed or spans more than a line (`read_back`)."""
PIECE_READS = 6
"""The boxes on those lines read, at most: the fields of the separate things the typing
changed on each, and each line's own (`_places`)."""
ONE_LINE = 48
"""A field box this tall or less holds one line of text at the sizes apps draw; a taller
one that read as typed is cut to the line the text shows on, where one reads as typed
(`read_back`)."""


def _holds(read: FieldText | NotRead | None, typed: str) -> bool:
    """Whether `read` shows the typed text (as `landed_of` keeps a read)."""
    want = normalise(typed)
    return isinstance(read, FieldText) and bool(want) and want in normalise(read.text)


def phrase_boxes(box: Rect, text: str, after: Frame, twice: bool = False) -> list[Rect]:
    """Where `text` shows within `box` on `after`, alone on its line (`ocr.find_phrase_alone`:
    typed twice, which of the two is the field's cannot be told), each place widened to
    its field (`reader.widen_to_field`). `twice`: the lines where it shows more than once
    instead (`ocr.find_phrase_twice`: the field that holds it twice)."""
    shown = box.intersection(Rect(0, 0, after.width, after.height))
    if shown is None:
        return []
    crop = after.pixels[shown.y : shown.bottom, shown.x : shown.right, :3]
    luma = crop @ np.array([0.114, 0.587, 0.299])  # BGR
    places = find_phrase_twice(luma, text) if twice else find_phrase_alone(luma, text)
    found = [Rect(shown.x + r.x, shown.y + r.y, r.w, r.h) for r in places]
    return list(dict.fromkeys(widen_to_field(after.pixels, r) for r in found))


def _places(cap: Capture, lines: list[Rect], after: Frame) -> Iterator[Rect]:
    """Where typed text may stand, narrower than `cap.field_box`: the places it shows
    alone on its line in the box (`phrase_boxes`, `PHRASE_READS` at most: OCR's rows,
    the text's own), then on each of the separate `lines` the typing changed
    (`LINE_READS` at most), each separate thing it changed there widened to its field,
    then the whole line so widened (`PIECE_READS` boxes in all: a line's rows are in
    whole blocks, and may take in a caret's foot or the next line's top, Wine's "Ada ~";
    a line may run across a field's border, Calc's input line and the icons beside it
    that it swaps while a cell is edited, and widening it from the icons' ground gave a
    box of icons and the text's first letters)."""
    if cap.field_box is not None:
        yield from phrase_boxes(cap.field_box, cap.action.text, after)[:PHRASE_READS]
    moved = moved_pixels(cap.small, after.small)
    given: list[Rect] = []
    for line in lines[:LINE_READS]:
        for part in [*pieces(moved, line, ECHO_GAP), line]:
            box = widen_to_field(after.pixels, part)
            if box == cap.field_box or box in given:  # (the field box was read first)
                continue
            if len(given) == PIECE_READS:
                return
            given.append(box)
            yield box


def field_box(lines: list[Rect], after: Frame) -> Rect | None:
    """Where typed text went (`lines`: what the typing changed, `effect_regions`;
    `after`: the screen once drawn): the box around them, widened to the field it is in
    (`reader.widen_to_field`: its earlier text included); None when nothing changed."""
    text = union_of(lines)
    if text is None:
        return None
    return widen_to_field(after.pixels, text)


def effect_regions(cap: Capture, after: np.ndarray, masks: list[Rect]) -> list[Rect]:
    """What the captured action changed on the screen, judged region by region: a region
    wholly inside a masked one (a clock ticking between two captures) is not the action's
    doing. For typed text, the lines of text it changed where the keys went
    (`typed_lines`), cut to that line where a region reaches over other lines too (an
    input line just above a spreadsheet's cell); when nothing changed there, everything
    else that changed.
    """
    changed = changed_regions(cap.small, after)
    regions = unmasked(changed, masks)
    if cap.action.kind is ActionKind.TYPE:
        # What the typing wrote, even where a mask lies over it (the field's caret was
        # learned as volatile): the param's value at replay may be longer.
        moved = moved_pixels(cap.small, after)
        lines = [b for r in changed for b in text_lines(moved, r)]
        regions = typed_lines(lines, cap.focus, cap.window_rect) or regions
    return regions


def unmasked(regions: list[Rect], masks: list[Rect]) -> list[Rect]:
    """`regions` less those wholly inside a mask (a block's margin allowed): what changes
    there is what the recording already expects to differ (a clock, an echo found)."""
    return [r for r in regions if not any(r.inside(m.grow(SCALE)) for m in masks)]


def union_of(regions: list[Rect]) -> Rect | None:
    """The smallest rectangle around all of `regions`; None when there are none."""
    if not regions:
        return None
    out = regions[0]
    for region in regions[1:]:
        out = out.union(region)
    return out


def read_back(
    backend: Backend, captures: list[Capture], frame: Frame, action: Action | None
) -> None:
    """Once the app has drawn typed text (`frame`: the screen before the next action
    `action`, or the final one), read its field back onto the typing's capture, the last
    of `captures` (see `landed_of`); text typed right after joins it and is read after
    its last piece."""
    last = captures[-1] if captures else None
    if last is None or last.read is not None or not readable(last.action):
        return
    if action is not None and action.kind is ActionKind.TYPE:
        return
    lines = effect_regions(last, frame.small, [])
    last.field_box = field_box(lines, frame)
    last.read = backend.read_field(last.field_box, frame)
    if isinstance(last.read, FieldText) and last.read.source == "accessibility":
        return
    held = _holds(last.read, last.action.text)
    if last.field_box is None or (held and last.field_box.h <= ONE_LINE):
        return
    # Read by its pixels, the box around every line the typing changed may take in more
    # than the field (toolbars a spreadsheet greys while its cell is edited, an editor's
    # "Ln 2, Col 6" under the line typed on): each place the typed text shows alone on
    # its line, then each line it changed, widened to its field, the first that reads as
    # typed. A box that read as typed but spans more than a line is kept only where no
    # line or place does.
    for box in _places(last, lines, frame):
        read = backend.read_field(box, frame, prefer="ocr")
        if _holds(read, last.action.text):
            last.field_box, last.read = box, read
            return
    if held:
        return
    # Nowhere alone: a field that holds it twice (typed again into a field that already
    # held it) is read where it shows twice, so that the run says so.
    for box in phrase_boxes(last.field_box, last.action.text, frame, twice=True)[:1]:
        read = backend.read_field(box, frame, prefer="ocr")
        if isinstance(read, FieldText) and times_shown(read.text, last.action.text) >= 2:
            last.field_box, last.read = box, read
            return
