"""Where typed text landed, as a recording reads it: what an action changed on the screen
(`effect_regions`: for typing, the lines it wrote), the typed field's box on the screen
drawn after it (`field_box`, or where the text shows alone on its line when the box
around all it changed reads otherwise: `phrase_boxes`), and the field read back there
onto the typing's capture (`read_back`), through the backend (the accessibility tree,
else OCR). `steps.landed_of` keeps what a recording compares at replay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mmcli.backends.base import Backend
from mmcli.model import Action, ActionKind
from mmcli.readback.field import FieldText, NotRead, normalise, times_shown
from mmcli.readback.ocr import find_phrase_alone, find_phrase_twice
from mmcli.readback.reader import widen_to_field
from mmcli.screen.analysis import changed_regions, moved_pixels
from mmcli.screen.carets import typed_lines
from mmcli.screen.echoes import text_lines
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


def field_box(cap: Capture, after: Frame) -> Rect | None:
    """Where typed text went (`cap`: the capture before the typing; `after`: the screen
    once drawn): what the typing changed on the focused field's line, widened to the
    field it is in (`reader.widen_to_field`: its earlier text included); None when
    nothing changed."""
    regions = effect_regions(cap, after.small, [])
    text = union_of(regions)
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
    last.field_box = field_box(last, frame)
    last.read = backend.read_field(last.field_box, frame)
    if _holds(last.read, last.action.text) or (
        isinstance(last.read, FieldText) and last.read.source == "accessibility"
    ):
        return
    # Read by its pixels, the box around every line the typing changed may take in more
    # than the field (toolbars a spreadsheet greys while its cell is edited): where the
    # typed text shows in it, widened to its field, the first place that reads as typed.
    if last.field_box is None:
        return
    for box in phrase_boxes(last.field_box, last.action.text, frame)[:PHRASE_READS]:
        read = backend.read_field(box, frame, prefer="ocr")
        if _holds(read, last.action.text):
            last.field_box, last.read = box, read
            return
    # Nowhere alone: a field that holds it twice (typed again into a field that already
    # held it) is read where it shows twice, so that the run says so.
    for box in phrase_boxes(last.field_box, last.action.text, frame, twice=True)[:1]:
        read = backend.read_field(box, frame, prefer="ocr")
        if isinstance(read, FieldText) and times_shown(read.text, last.action.text) >= 2:
            last.field_box, last.read = box, read
            return
