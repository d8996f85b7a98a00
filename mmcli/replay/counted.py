"""The lines that counted what was typed (`Step.counts`, `screen.counts`), read where
they stand now: a line whose pixels differ is read by OCR, and let differ when it reads
the recorded words with its numbers moved by this run's values' length (a status bar's
"38 characters" for "30" when the name typed is 8 characters longer). Read only where
the check found a difference over the line, never over the step's target.

An app may draw such a line late (Writer's status bar shows the selection a step after
the keys that made it, in one run and not in another), so the line may read as the step's
own line or as any line recorded on the path between the typing before the step and the
next one (the same values typed before each). A count that grew its cell moves the row's
other cells sideways: the whole row is let differ when each of its other cells is the
recorded one, moved (`readback.reader.row_cells`). Under the app's open menu, as when
recorded, the row beside the menu is let differ where only the two cells the menu cuts
differ."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mmcli.model import ActionKind, Recording, Step
from mmcli.readback.reader import (
    COUNT_PAD,
    band_pixels,
    cell_band,
    digests,
    read_count,
    row_cells,
)
from mmcli.screen.counts import (
    MAX_COUNT_TEXT,
    CountLine,
    agrees,
    placeholders,
    same_row,
    shifts,
)
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Difference, target_rect


class Counted:
    def __init__(self, recording: Recording, values: Mapping[str, str]) -> None:
        self.values = values
        self.steps = {s.id: s for s in recording.steps}
        self.children: dict[int, list[Step]] = {}
        for s in recording.steps:
            if s.parent is not None:
                self.children.setdefault(s.parent, []).append(s)

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

    def near(self, step: Step) -> list[CountLine]:
        """The count lines recorded on the screens of `step`'s stretch of the path, its
        own first: up its ancestors and down its descendants as far as a typing (each
        screen with the same values typed before it as `step`'s)."""
        lines = list(step.counts)
        node = step
        while node.parent is not None:
            parent = self.steps.get(node.parent)
            if parent is None or parent.action.kind is ActionKind.TYPE:
                break
            lines.extend(parent.counts)
            node = parent
        below = [step] if step.action.kind is not ActionKind.TYPE else []
        while below:
            node = below.pop()
            for child in self.children.get(node.id, []):
                lines.extend(child.counts)
                if child.action.kind is ActionKind.TYPE:
                    continue  # what follows its typing has other values typed before it
                if child.outcome is not None:
                    lines.extend(child.outcome.counts)
                below.append(child)
        return lines

    def at_step(
        self, step: Step, view: Frame, differences: Sequence[Difference], target: Rect | None
    ) -> list[Rect]:
        """What of `step`'s count lines reads as recorded on `view` (`shown`)."""
        lines = self.near(step)
        if not lines:
            return []
        return self.shown(lines, self.typed_before(step), view, differences, target)

    def at_end(self, end: Step, view: Frame, differences: Sequence[Difference]) -> list[Rect]:
        """What of the count lines of `end`'s outcome reads as recorded on `view`."""
        assert end.outcome is not None
        lines = list(end.outcome.counts)
        if end.action.kind is not ActionKind.TYPE:
            lines.extend(self.near(end))
        if not lines:
            return []
        return self.shown(lines, self.typed_before(end, including=True), view, differences)

    def shown(
        self,
        lines: Sequence[CountLine],
        typed: Sequence[str],
        view: Frame,
        differences: Sequence[Difference],
        target: Rect | None = None,
    ) -> list[Rect]:
        """The places on `view` (the live screen in the recording's coordinates) to let
        differ: each count line whose row a difference lies over, read where it stands
        now, that reads as one of `lines` on its row with its numbers moved by the typed
        values' length (`screen.counts.agrees`): the line's band, or its whole row where
        each other cell of the row is the one recorded with the first of `lines` there.
        A line another window covers as it did when recorded (unread, text ""): the row
        beside that window, where each cell is the one recorded but the two the window
        cuts. Never a line over `target`."""
        found: list[Rect] = []
        read_rows: list[Rect] = []
        for line in lines:
            if any(same_row(line.rect, r) for r in read_rows):
                continue
            if target is not None and line.rect.intersects(target):
                continue
            if not any(d.region.intersects(line.row or line.rect) for d in differences):
                continue
            read_rows.append(line.rect)
            read = read_line(view, line.rect)
            if read is None:
                continue
            band, text = read
            row = [c for c in lines if same_row(c.rect, line.rect)]
            counts = [c for c in row if c.text]
            if not counts:
                continue  # never read as a count here: nothing to read it against
            if text:
                if any(agrees(c.text, text, shifts(c, typed, self.values)) for c in counts):
                    found.extend(_excused(row[0] if row[0].text else counts[0], band, view, target))
            elif not row[0].text and row[0].rect == band:
                found.extend(_beside_cover(row[0], band, view, target))
        return found


def _excused(line: CountLine, band: Rect, view: Frame, target: Rect | None) -> list[Rect]:
    """The line's band as recorded and as it stands now, or its whole row where each of
    the row's other cells is the one recorded, moved or not."""
    row = line.row
    if row is not None and (target is None or not row.intersects(target)):
        cells = row_cells(view.pixels, row, band)
        if cells is not None and digests(cells) == line.cells:
            return [row]
    return [line.rect, band]


def _beside_cover(line: CountLine, band: Rect, view: Frame, target: Rect | None) -> list[Rect]:
    """For a count line another window covers now as when it was recorded (`band`: that
    window's span on the row, showing what it showed then, `CountLine.over`): the row
    left and right of it, where each of the row's cells is the one recorded but the two
    beside the window (what shows of the count's cell and of its neighbour, which the
    count's growth moved under the window's edges). The window itself is judged as any
    screen is."""
    row = line.row
    if row is None or (target is not None and row.intersects(target)):
        return []
    cells = row_cells(view.pixels, row, band)
    if cells is None or len(cells) != len(line.cells):
        return []
    own = line.cells.index("")
    if (
        not cells[own].own
        or cells[own].digest != line.over
        or any(
            c.digest != recorded
            for i, (c, recorded) in enumerate(zip(cells, line.cells, strict=True))
            if abs(i - own) > 1
        )
    ):
        return []
    left, right = cells[own].x, cells[own].right
    return [
        r
        for r in (
            Rect(row.x, row.y, left - row.x, row.h),
            Rect(right, row.y, row.right - right, row.h),
        )
        if r.w > 0
    ]


def read_line(frame: Frame, rect: Rect) -> tuple[Rect, str] | None:
    """Where the count line recorded at `rect` stands on `frame` and what OCR reads
    there: its band widened to its cell there as the recorder widened it (a cell that
    grew with its text: "11 characters" is wider than "3"), up to the recorded band's
    width either side, "" where it reads no count; None where the cell is not found."""
    line = Rect(rect.x, rect.y + COUNT_PAD, rect.w, rect.h - 2 * COUNT_PAD)
    band = cell_band(frame.pixels, line, Rect(rect.x - rect.w, rect.y, 3 * rect.w, rect.h))
    if band is None:
        return None
    text = read_count(band_pixels(frame.pixels, band), band, MAX_COUNT_TEXT)
    return band, text or ""


def step_target(step: Step) -> Rect | None:
    """Where the step acts (its target's patch), if it has one."""
    patch = step.fingerprint.patch
    return target_rect(patch) if patch is not None else None
