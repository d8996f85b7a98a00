"""The lines that counted what was typed (`Step.counts`, `screen.counts`), read where
they stand now: a line whose pixels differ is read by OCR, and let differ when it reads
the recorded words with its numbers moved by this run's values' length (a status bar's
"38 characters" for "30" when the name typed is 8 characters longer). Read only where
the check found a difference over the line, never over the step's target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mmcli.model import ActionKind, Recording, Step
from mmcli.readback.reader import COUNT_PAD, band_pixels, cell_band, read_count
from mmcli.screen.counts import MAX_COUNT_TEXT, CountLine, agrees, placeholders, shifts
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Difference, target_rect


class Counted:
    def __init__(self, recording: Recording, values: Mapping[str, str]) -> None:
        self.values = values
        self.steps = {s.id: s for s in recording.steps}

    def typed_before(self, step: Step, including: bool = False) -> list[str]:
        """The params typed on the path to `step` (and by it, `including`), once per
        time typed."""
        texts: list[str] = []
        node: Step | None = step
        if not including:
            node = self.steps.get(step.parent) if step.parent is not None else None
        while node is not None:
            if node.action.kind is ActionKind.TYPE:
                texts.append(node.action.text)
            node = self.steps.get(node.parent) if node.parent is not None else None
        return placeholders(reversed(texts))

    def shown(
        self,
        lines: Sequence[CountLine],
        typed: Sequence[str],
        view: Frame,
        differences: Sequence[Difference],
        target: Rect | None = None,
    ) -> list[Rect]:
        """The count lines (`lines`, on `view`: the live screen in the recording's
        coordinates) a difference lies over that read as recorded with their numbers
        moved by the typed values' length (`screen.counts.agrees`); never one over
        `target`."""
        found = []
        for line in lines:
            if target is not None and line.rect.intersects(target):
                continue
            if not any(d.region.intersects(line.rect) for d in differences):
                continue
            text = read_line(view, line.rect)
            if text is not None and agrees(line.text, text, shifts(line, typed, self.values)):
                found.append(line.rect)
        return found


def read_line(frame: Frame, rect: Rect) -> str | None:
    """What OCR reads of the count line recorded at `rect` on `frame`, its band widened
    to its cell there as the recorder widened it (a cell that grew with its text: "11
    characters" is wider than "3"), up to the recorded band's width either side; None
    when it is unsure."""
    line = Rect(rect.x, rect.y + COUNT_PAD, rect.w, rect.h - 2 * COUNT_PAD)
    band = cell_band(frame.pixels, line, Rect(rect.x - rect.w, rect.y, 3 * rect.w, rect.h))
    if band is None:
        return None
    return read_count(band_pixels(frame.pixels, band), band, MAX_COUNT_TEXT)


def step_target(step: Step) -> Rect | None:
    """Where the step acts (its target's patch), if it has one."""
    patch = step.fingerprint.patch
    return target_rect(patch) if patch is not None else None
