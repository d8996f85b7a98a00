"""When the recorder keeps a screen: once still, a caret's blink aside (`outcome_settle`
for the outcome), and how a caret's blink is told from a change (`is_caret`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from mmcli.backends.base import ZONE_MARGIN, Backend, ChangeLog, Settled
from mmcli.screen.analysis import changed_regions_fine
from mmcli.screen.carets import (
    CARET_INK,
    CARET_MAX,
    CARET_MIN_HEIGHT,
    CARET_WIDTH,
    ink_columns,
    ink_mask,
)
from mmcli.screen.fingerprint import Frame, Rect

SETTLE_QUIET = 0.02
SETTLE_LIMIT = 0.6
OUTCOME_QUIET = 1.0
"""The outcome is kept once the screen has been still this long after the agent ended:
an app may draw what the last input did a moment after it was sent (LibreOffice Calc,
measured: its screen still 20 ms after xdotool exited, the typed row not drawn yet), or
close its window a while after its process was told (zenity on a loaded machine: still
for 0.3 s, then unmapped). A caret blinking does not count (`outcome_settle`): a form
that ends with the focus in a field would otherwise wait out `OUTCOME_LIMIT` at every
recording, or 1 s after its latest blink (0.6 s of each 20-action recording on the
example, measured)."""
OUTCOME_LIMIT = 5.0
"""After this long the latest screen is kept, still or not."""
OUTCOME_LOOK = 0.1
"""Without change reports, the screen is looked at this often while the outcome settles."""


KEPT_AGAIN = 3
"""How many times, at most, the screen kept before an action is kept again because it
changed before the action was given (`as_given`)."""


def settle(backend: Backend, since: float | None = None, quiet: float = SETTLE_QUIET) -> Settled:
    """The screen once still, as the recorder keeps it: still for `quiet` since its last
    change and since `since`, when the agent's last input was given (in its own process;
    by default just now)."""
    at = time.monotonic() if since is None else since
    return backend.settle(quiet, SETTLE_LIMIT, since=at)


def as_given(backend: Backend, kept: Settled, quiet: float = SETTLE_QUIET) -> Frame:
    """The screen the action held for its capture is given on: `kept`, unless the
    screen changed since by more than a caret's blink (outside the backend's quiet
    zones), then the screen once still again, up to `KEPT_AGAIN` times. An app may
    change its screen once more on a timer while the recorder reads what was typed
    last: Calc lights Undo and greys its paintbrush 0.5-0.65 s after the first key in a
    cell; kept from before that, the step was one a replay that looked later than the
    update refused. Where the display reports its changes, a screen that reported none
    since `kept` is not grabbed again."""
    zones = [z.grow(ZONE_MARGIN) for z in backend.current_quiet_zones()]
    for _ in range(KEPT_AGAIN):
        log = backend.changes()
        if log is not None and log.changed_at <= kept.at:
            break
        if not beyond_carets(kept.frame, backend.grab(), zones):
            break
        kept = backend.settle(quiet, SETTLE_LIMIT)
    return kept.frame


def is_caret(before: Frame, after: Frame, region: Rect) -> bool:
    """A region that changed between two frames is a caret blinking: caret-sized, what
    changed at full resolution one run of columns at most `CARET_WIDTH` px wide, with no
    ink there in one of the frames (the off phase). A clock digit changing part of its
    strokes has ink on both sides; a field border beside the caret does not change."""
    if region.w > CARET_MAX[0] or region.h > CARET_MAX[1]:
        return False
    x0, y0 = max(region.x, 0), max(region.y, 0)
    x1, y1 = min(region.right, after.width), min(region.bottom, after.height)
    if x1 <= x0 or y1 <= y0:
        return False
    a = before.pixels[y0:y1, x0:x1, :3].astype(np.int16)
    b = after.pixels[y0:y1, x0:x1, :3].astype(np.int16)
    differs = np.abs(a - b).max(axis=2) > CARET_INK
    changed = np.flatnonzero(differs.any(axis=0))
    rows = np.flatnonzero(differs.any(axis=1))
    if changed.size == 0 or changed[-1] - changed[0] >= CARET_WIDTH:
        return False
    if rows[-1] - rows[0] + 1 < CARET_MIN_HEIGHT:  # a caret spans a line of text
        return False
    bar = Rect(x0 + int(changed[0]), y0, int(changed[-1] - changed[0]) + 1, y1 - y0)
    ink = [ink_columns(before, bar), ink_columns(after, bar)]
    if any(columns is not None and not columns.any() for columns in ink):
        return True
    return _caret_on_a_glyph(before, after, bar, differs[:, changed[0] : changed[-1] + 1])


GLYPH_EDGE = 0.2
"""At most this share of a caret's pixels may hold ink in its off phase (the glyph's edge
it covers: 3 of 34 pixels measured, Tk's caret after "Núñez")."""


def _caret_on_a_glyph(before: Frame, after: Frame, bar: Rect, differs: np.ndarray) -> bool:
    """A caret drawn against the last glyph typed ("Núñez|": the z reaches into the
    caret's columns, so they hold ink in both phases): what changed is ink in one frame
    and ground in the other, and from its first row to its last every row of the bar
    either changed or is ink in both frames (the glyph under the caret). A digit's
    strokes changing leave a row of ground in both between them (the 3 -> 8 waist)."""
    was, now = ink_mask(before, bar), ink_mask(after, bar)
    if was is None or now is None or was.shape != differs.shape:
        return False
    # The bar is all ink in its on phase; in its off phase, ground but where it covered
    # the glyph's anti-aliased edge (a grey pixel or two): not ink on both sides, as a
    # glyph replaced by another is.
    if not any(
        on[differs].all() and off[differs].mean() <= GLYPH_EDGE
        for on, off in ((was, now), (now, was))
    ):
        return False
    rows = np.flatnonzero(differs.any(axis=1))
    span = slice(rows[0], rows[-1] + 1)
    covered = differs[span].any(axis=1) | (was & now)[span].any(axis=1)
    return bool(covered.all())


def beyond_carets(before: Frame, after: Frame, zones: Sequence[Rect] = ()) -> bool:
    """Whether `after` differs from `before` by more than a blinking caret (`is_caret`),
    leaving out what changed inside `zones`."""
    changed = changed_regions_fine(before, after)
    return not all(
        is_caret(before, after, r) for r in changed if not any(r.inside(z) for z in zones)
    )


def outcome_settle(backend: Backend, quiet: float, limit: float) -> Settled:
    """The screen once nothing but a blinking caret (`is_caret`) has changed on it for
    `quiet` seconds (changes inside the backend's quiet zones never count); after `limit`
    seconds of other changes, the latest screen, not still. Each change is looked at once
    the screen is still again for `SETTLE_QUIET`: a caret's blink is one repaint, a window
    closing or a row drawn late is a change of another shape and starts the wait again.

    The quiet counts from the last change reported before the wait (an agent that waited
    for the app before it ended has waited part of it), and that change may have been the
    caret's blink too: once a blink has been seen, where it was reported tells the
    changes before the wait that were the same blink (`caret_areas`), and the quiet
    counts from the last other change (never from before the last input)."""
    deadline = time.monotonic() + limit
    settled = backend.settle(SETTLE_QUIET, limit)
    base, looked = settled.frame, settled.at
    log = backend.changes()
    still_from = settled.at if log is None else max(log.changed_at, backend.input_at)
    if not settled.still:
        return settled
    latest = settled
    zones = [z.grow(ZONE_MARGIN) for z in backend.current_quiet_zones()]
    judged = backend.input_at
    """When a change was last seen to be more than a caret's blink."""
    carets: list[Rect] = []
    while True:
        end = min(still_from + quiet, deadline)
        left = end - time.monotonic()
        if left <= 0:
            return Settled(latest.frame, still_from + quiet <= deadline, latest.at)
        backend.wait_change(looked, left if log is not None else min(left, OUTCOME_LOOK))
        if time.monotonic() >= end:
            continue
        before = looked
        latest = backend.settle(SETTLE_QUIET, max(deadline - time.monotonic(), 0.0))
        looked = latest.at
        if not latest.still:
            return latest
        if beyond_carets(base, latest.frame, zones):
            base, still_from = latest.frame, latest.at
            judged = latest.at
        elif log is not None and (blinked := caret_areas(log, before, looked)):
            carets.extend(blinked)
            other = log.last_outside(backend.input_at, carets)
            if other is not None:
                still_from = max(other, judged)


CARET_AREA_HEIGHT = 64
"""The tallest area a change reported for a caret's blink may cover: a toolkit repaints
the caret's cell, or its whole field (Tk: the entry, 300 x 23 on the example form), one
line tall; a taller area seen with a blink is something else redrawn as it was, and tells
nothing of the changes before."""


def caret_areas(log: ChangeLog, start: float, end: float) -> list[Rect]:
    """Where the changes between `start` and `end` were reported, when every area is a
    caret's size (the caller has seen the screen differ by a caret's blink alone over
    that time); else none."""
    areas = log.areas_between(start, end)
    if not areas or any(a.h > CARET_AREA_HEIGHT for a in areas):
        return []
    return areas
