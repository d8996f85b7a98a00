"""A clock inside the task's window (jEdit's status bar "3:31 AM", an app's "synced
14:02"): glyphs that differ from the recording because the minute did. The idle watch
learns a clock only when it ticks while the recording runs; a clock that ticks once a
minute seldom does, and the next replay in another minute was refused on it.

Where a check finds a few glyphs' worth of difference (`GLYPHS_MAX`) off the step's
target and off every field the task types into, the line they stand on is read by OCR
on the live screen (`ocr.read_words`, `LINE_REACH` either side). A difference that
lies wholly within a time of day reading as the time now (this machine's local clock:
the minute shown, or the one before it where the app redraws its clock late, `SKEW`;
within `SECONDS_SKEW` where it shows its seconds) is let differ there, and only there:
a gauge beside the clock ("197/388MB") still counts, and so does a time that is not
now (an appointment's "10:15"). Read only where a check already differs: a step that
matches pays nothing."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import numpy as np

from mmcli.readback import ocr
from mmcli.screen.fingerprint import SCALE, Frame, Rect
from mmcli.screen.matcher import Difference, Verdict

GLYPHS_MAX = (64, 32)
"""A difference at most this big (px, each way) may be a clock's digits."""
MOST = 3
"""Lines are read only where a check's differences are all a few glyphs' worth, this
many at most (each read costs ~0.1 s): where anything else differs (a moved window, a
dialog), the check fails whatever a clock reads, and nothing is read."""
KEPT = 16
"""Lines read kept for the next looks (a refused step looks again until its timeout)."""
LINE_MARGIN = 6
"""Rows read above and below the difference: its line, not the lines around it."""
LINE_REACH = 96
"""Px read either side of the difference: its word and its neighbours (an "AM" after it),
whatever stands beside them (a widget's edge, the desktop past the window)."""
SKEW = timedelta(seconds=60)
"""How far from its minute (either way) a clock's time may be: an app redraws its clock
up to a minute late, and the check's screen was grabbed a moment before it is read."""
SECONDS_SKEW = timedelta(seconds=10)
"""The same for a clock that shows its seconds."""
TIME = re.compile(r"^(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?([AaPp][Mm])?$")
HALF = re.compile(r"^([AaPp])\.?[Mm]\.?$")
EDGE = "()[]{},;|"
"""Punctuation OCR reads at a word's ends (a border, a separator): not the time's."""


def times_now(words: Sequence[tuple[str, Rect]], now: datetime) -> list[Rect]:
    """The boxes of the words that spell a time of day reading as `now` (with the "AM" or
    "PM" word after it, where there is one)."""
    found: list[Rect] = []
    for i, (word, box) in enumerate(words):
        m = TIME.match(word.strip(EDGE))
        if m is None:
            continue
        half = m.group(4)[0] if m.group(4) else None
        if half is None and i + 1 < len(words):
            after = HALF.match(words[i + 1][0].strip(EDGE))
            if after is not None:
                half, box = after.group(1), box.union(words[i + 1][1])
        hour, minute = int(m.group(1)), int(m.group(2))
        second = int(m.group(3)) if m.group(3) is not None else None
        if reads_as(now, hour, minute, second, half):
            found.append(box)
    return found


def reads_as(now: datetime, hour: int, minute: int, second: int | None, half: str | None) -> bool:
    """Whether a clock showing hour:minute(:second) (`half`: "A"/"P" on a 12-hour clock)
    shows `now`, within `SKEW`."""
    if minute > 59 or (second is not None and second > 59):
        return False
    if half is not None:
        if not 1 <= hour <= 12:
            return False
        hour = hour % 12 + (12 if half.upper() == "P" else 0)
        hours = [hour]
    elif hour <= 12:
        hours = [hour, (hour + 12) % 24]  # a 12-hour clock without its half, or 24-hour
    elif hour <= 23:
        hours = [hour]
    else:
        return False
    # A clock without seconds shows the minute begun: now lies within that minute.
    shows = timedelta(0) if second is not None else timedelta(minutes=1)
    skew = SECONDS_SKEW if second is not None else SKEW
    for h in hours:
        for day in (-1, 0, 1):
            shown = now.replace(hour=h, minute=minute, second=second or 0, microsecond=0)
            shown += timedelta(days=day)
            if shown - skew <= now <= shown + shows + skew:
                return True
    return False


class Clocks:
    """The clocks a run's checks read (`at`), each line read once per look of it."""

    def __init__(
        self, windows: Sequence[Rect] = (), now: Callable[[], datetime] = datetime.now
    ) -> None:
        self.windows = list(windows)
        """The client areas of the task's windows: a line is read within its window's
        (the desktop past a window's edge read with it, "4:12 AM" read "ai2am")."""
        self.now = now
        self._read: dict[tuple[Rect, bytes], list[tuple[str, Rect]]] = {}

    def at(
        self, view: Frame, differences: Sequence[Difference], spared: Sequence[Rect]
    ) -> list[Rect]:
        """Where `view` (the live screen as checked) shows a clock reading now over a
        few glyphs' worth of `differences`: each such time's box, to leave out of the
        check. `spared`: the step's target and the fields the task types into, where
        nothing is read as a clock."""
        small = [
            d.region
            for d in differences
            if d.matcher == "regions"
            and d.region.w <= GLYPHS_MAX[0]
            and d.region.h <= GLYPHS_MAX[1]
            and not any(d.region.intersects(s) for s in spared)
        ]
        if len(small) != len(differences) or len(small) > MOST:
            return []  # something no clock explains differs too: nothing is read
        found: list[Rect] = []
        for region in small:
            if any(region.inside(f) for f in found):
                continue
            for box in self._times(view, region):
                if region.inside(box.grow(SCALE)):
                    found.append(box.grow(SCALE).union(region))
                    break
        return found

    def _times(self, view: Frame, region: Rect) -> list[Rect]:
        """The times reading now on the line of `region`, in screen pixels."""
        wanted = Rect(
            region.x - LINE_REACH,
            region.y - LINE_MARGIN,
            region.w + 2 * LINE_REACH,
            region.h + 2 * LINE_MARGIN,
        )
        inside = next((w for w in self.windows if w.intersects(region)), None)
        line = wanted.intersection(inside or Rect(0, 0, view.width, view.height))
        if line is None:
            return []
        pixels = view.pixels[line.y : line.bottom, line.x : line.right, 2::-1]
        luma = (pixels.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)).astype(
            np.uint8
        )
        key = (line, luma.tobytes())
        if key not in self._read:
            if len(self._read) >= KEPT:
                self._read.clear()
            self._read[key] = ocr.read_words(luma) or []
        words = self._read[key]
        return [b.moved(line.x, line.y) for b in times_now(words, self.now())]


CLOCK = "a clock reading the time now"
"""How a check's excuses name a clock left out (`past_clocks`)."""


def past_clocks(
    clocks: Clocks,
    view: Frame,
    verdict: Verdict,
    beyond: list[Rect],
    check: Callable[[], Verdict],
    spared: Sequence[Rect],
) -> Verdict:
    """`verdict` again with the clocks reading now over its differences left out (added
    to `beyond`, which `check` leaves out), never over `spared` (the step's target, the
    fields the task types into); `verdict` itself where there is none."""
    found = clocks.at(view, verdict.differences, spared)
    if not found:
        return verdict
    beyond.extend(found)
    again = check()
    return Verdict(again.differences, (*again.excused, *(f"{CLOCK}: {r}" for r in found)))
