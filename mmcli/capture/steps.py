"""From captures to steps: what a finished run's captures become in a recording.

`build_steps` learns what each action changed on the screen (its effect), joins typing
done in pieces into one text (`join_typing`), replaces param and secret values with
placeholders, masks what is expected to differ at replay (typed text and its echoes
elsewhere, volatile regions, secrets painted over in thumbnails) and fingerprints every
screen. Pure functions of the captures: no display, no socket (see recorder.py for how
captures are taken).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from mmcli.capture.secrets import join_keystrokes, joined
from mmcli.model import POINTED, Action, ActionKind, EndScreen, Step
from mmcli.params import parametrize
from mmcli.screen.analysis import (
    changed_regions,
    changed_within,
    find_template,
    grid_of,
    grow_to_text_run,
    merge_rects,
    moved_pixels,
    small_slice,
)
from mmcli.screen.carets import on_focus_line
from mmcli.screen.fingerprint import PATCH_SIZE, SCALE, Fingerprint, Patch, Rect
from mmcli.screen.paint import blank_png, paintable, text_mask
from mmcli.screen.windows import WindowRef


def focus_point(action: Action, previous: tuple[int, int] | None) -> tuple[int, int] | None:
    """Where an action acts: its own point, or for keyboard actions the last clicked point."""
    return action.point if action.kind in POINTED else previous


@dataclass
class Capture:
    """What the recorder keeps of one action and the screen just before it."""

    action: Action
    small: np.ndarray
    patch: Patch | None
    pointer: tuple[int, int]
    size: tuple[int, int]
    at: datetime
    thumbnail: Future[bytes] | None = None
    note: str = ""
    """Said with the step's progress line (e.g. that its text was pasted)."""
    window: WindowRef | None = None
    """The application window under the action's target (`Step.window`)."""


@dataclass
class Built:
    steps: list[Step]
    thumbnails: dict[str, bytes]
    area: Rect | None
    """Where the actions acted and what they changed (union), volatile regions excluded."""


def join_typing(captures: list[Capture]) -> list[Capture]:
    """Captures with each run of consecutive typing actions (`type`, `press` of printable
    keys) joined into one `type` capture, which keeps the screen before the first of them:
    a value typed in pieces or key by key becomes one text a placeholder can replace."""
    groups = join_keystrokes([c.action for c in captures])
    return [
        replace(captures[g[0]], action=joined([captures[i].action for i in g]))
        if len(g) > 1
        else captures[g[0]]
        for g in groups
    ]


def build_steps(
    captures: list[Capture],
    final: np.ndarray | None,
    values: Mapping[str, str],
    first_id: int,
    parent: int | None,
    masks: list[Rect],
    secrets: set[str] | None = None,
    secret_typed: bool = False,
    final_thumbnail: bytes | None = None,
) -> Built:
    """Steps (a chain from `parent`) and their thumbnails, from one run's captures.

    `masks` are blanked in every fingerprint (declared and volatile regions); regions
    typed from a param are added for the steps after them. Once a secret has been typed
    (or `secret_typed`: before this run), what may show it is painted over in the later
    thumbnails (see `_exposed`), and each painted region is a mask of that step too, so
    that replay compares like with like.
    """
    if values:
        captures = join_typing(captures)
    steps: list[Step] = []
    thumbnails: dict[str, bytes] = {}
    masks = list(masks)
    area: Rect | None = None
    token = os.urandom(3).hex()
    screens = [c.small for c in captures] + ([final] if final is not None else [])
    echoes: dict[int, list[Rect]] = {}
    hidden: list[Rect] = list(masks) if secret_typed else []
    secret_echoes: list[Rect] = []
    window: WindowRef | None = None
    """The window the last pointer step acted in: where typing goes."""
    for i, cap in enumerate(captures):
        masks.extend(echoes.get(i, []))
        hidden.extend(r for r in echoes.get(i, []) if r in secret_echoes)
        after = captures[i + 1].small if i + 1 < len(captures) else final
        changed = effect_regions(cap, after, masks) if after is not None else []
        effect = union_of(changed)
        action = cap.action
        if action.kind is ActionKind.TYPE:
            action = replace(action, text=parametrize(action.text, values))
        painted = paintable(merge_rects(hidden, margin=0), cap.patch)
        step_masks = [*masks, *(r for r in painted if r not in masks)]
        width, height = cap.size
        fp = Fingerprint(
            width, height, grid_of(cap.small, step_masks), cap.patch, cap.pointer, tuple(step_masks)
        )
        step_id = first_id + i
        name = f"{token}-{step_id:04d}.png"
        if cap.thumbnail is not None:
            thumbnails[name] = blank_png(cap.thumbnail.result(), painted)
        steps.append(
            Step(
                step_id,
                parent if i == 0 else step_id - 1,
                action,
                fp,
                thumbnail=name if cap.thumbnail else None,
                effect=effect,
                created=cap.at,
                window=cap.window,
            )
        )
        window = cap.window or (window if cap.action.point is None else None)
        seen = (cap.small, after) if after is not None else None
        for touched in _touched(cap.patch, changed, window, seen):
            area = touched if area is None else area.union(touched)
        secret = bool(action.params_used() & (secrets or set()))
        if secret_typed and not secret and after is not None:
            hidden.extend(_exposed(action, cap.small, after))
        secret_typed = secret_typed or secret
        if action.params_used() and effect is not None and after is not None:
            # What was typed from a param will read differently at replay: blank it in
            # every later fingerprint, at record and at replay alike; and where the app
            # echoes it (a status line), from the step where the echo shows.
            masks.append(text_mask(effect))
            if secret:
                hidden.append(text_mask(effect))
            found = find_echoes(after, effect, screens[i + 1 :])
            bounds = window.rect if window is not None else None
            shown = text_shown_elsewhere(cap.small, after, effect, bounds)
            found += [(0, r) for r in shown if not any(r.inside(m.grow(SCALE)) for m in masks)]
            for j, rect in found:
                echoes.setdefault(i + 1 + j, []).append(text_mask(rect))
                if secret:
                    secret_echoes.append(text_mask(rect))
    if final is not None and steps:
        end = len(captures)
        masks.extend(r for r in echoes.get(end, []) if r not in masks)
        hidden.extend(r for r in echoes.get(end, []) if r in secret_echoes)
        painted = merge_rects(hidden, margin=0)
        end_masks = [*masks, *(r for r in painted if r not in masks)]
        width, height = captures[-1].size
        name = f"{token}-{steps[-1].id:04d}-end.png"
        fp = Fingerprint(width, height, grid_of(final, end_masks), None, None, tuple(end_masks))
        if final_thumbnail is not None:
            thumbnails[name] = blank_png(final_thumbnail, painted)
        outcome = EndScreen(fp, name if final_thumbnail is not None else None)
        steps[-1] = replace(steps[-1], outcome=outcome)
    return Built(steps, thumbnails, area)


def effect_regions(cap: Capture, after: np.ndarray, masks: list[Rect]) -> list[Rect]:
    """What the captured action changed on the screen, judged region by region: a region
    wholly inside a masked one (a clock ticking between two captures) is not the action's
    doing. For typed text, what changed on the line of the field that has the focus (what
    the typing produced), cut to that line where a region reaches over other lines too (an
    input line just above a spreadsheet's cell); when nothing changed there, everything
    else that changed.
    """
    changed = changed_regions(cap.small, after)
    regions = [r for r in changed if not any(r.inside(m.grow(SCALE)) for m in masks)]
    if cap.action.kind is ActionKind.TYPE and cap.patch is not None:
        # What the typing wrote, even where a mask lies over it (the field's caret was
        # learned as volatile): the param's value at replay may be longer.
        focus = (cap.patch.x, cap.patch.y)
        moved = moved_pixels(cap.small, after)
        lines = [b for r in changed for b in _bands(moved, r)]
        regions = [b for b in lines if on_focus_line(b, focus)] or regions
    return regions


def _blank_before(before: np.ndarray, after: np.ndarray, moved: np.ndarray, piece: Rect) -> bool:
    """Whether `piece` held nothing before: all of it within `BLANK_SPREAD` of the ground
    the new content stands on, the line's own background just left and right of it where
    that did not change (above and below may be the line's border)."""
    ys, xs = small_slice(piece, after.shape)
    sides = [c for c in (xs.start - 1, xs.stop) if 0 <= c < after.shape[1]]
    ground = [after[ys, c][~moved[ys, c]] for c in sides]
    still = np.concatenate(ground) if ground else np.zeros(0, after.dtype)
    if not still.size:
        return False
    was = before[ys, xs].astype(np.int16)
    return bool(np.abs(was - int(np.median(still))).max() <= BLANK_SPREAD)


def _bands(moved: np.ndarray, region: Rect) -> list[Rect]:
    """`region` cut into the bands of rows that changed in it, apart where `LINE_GAP` rows
    in a row did not: its lines of text. Each band spans the columns that changed in it."""
    ys, xs = small_slice(region, moved.shape)
    inside = moved[ys, xs]
    out: list[Rect] = []
    for top, bottom in _runs(np.asarray(inside.any(axis=1)), LINE_GAP):
        cols = np.nonzero(inside[top:bottom].any(axis=0))[0]
        out.append(
            Rect(
                (xs.start + int(cols[0])) * SCALE,
                (ys.start + top) * SCALE,
                (int(cols[-1]) - int(cols[0]) + 1) * SCALE,
                (bottom - top) * SCALE,
            )
        )
    return out


def _pieces(moved: np.ndarray, region: Rect, gap: int) -> list[Rect]:
    """`region`'s bands (`_bands`) cut further where `gap` columns in a row did not
    change: the separate things one action changed on a line (an icon, a word)."""
    out: list[Rect] = []
    for band in _bands(moved, region):
        ys, xs = small_slice(band, moved.shape)
        inside = moved[ys, xs]
        for left, right in _runs(np.asarray(inside.any(axis=0)), gap):
            rows = np.nonzero(inside[:, left:right].any(axis=1))[0]
            out.append(
                Rect(
                    (xs.start + left) * SCALE,
                    (ys.start + int(rows[0])) * SCALE,
                    (right - left) * SCALE,
                    (int(rows[-1]) - int(rows[0]) + 1) * SCALE,
                )
            )
    return out


def _runs(flags: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """The [start, stop) runs of True in `flags`, joined across fewer than `gap` Falses."""
    runs: list[tuple[int, int]] = []
    for i in np.nonzero(flags)[0].tolist():
        if runs and i - runs[-1][1] < gap:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def union_of(regions: list[Rect]) -> Rect | None:
    """The smallest rectangle around all of `regions`; None when there are none."""
    if not regions:
        return None
    out = regions[0]
    for region in regions[1:]:
        out = out.union(region)
    return out


def _exposed(action: Action, before: np.ndarray, after: np.ndarray) -> list[Rect]:
    """Once a secret has been typed, where the screen changed as an action other than
    typing took effect (a status line, a dialog, a page): it may show the secret again, in
    any font, which the pixels cannot tell. Typing known text shows that text."""
    if action.kind is ActionKind.TYPE:
        return []
    return [grow_to_text_run(after, r).grow(2) for r in changed_regions(before, after)]


ECHO_MATCH = 0.85
"""Normalized correlation above which typed text is taken to be shown again elsewhere."""
ECHO_MIN_WIDTH = 6
"""Typed text narrower than this (downscaled px) is too short to look for reliably."""
ECHO_MAX = 4
"""A match in more places than this is a pattern the typed text's picture holds (a
spreadsheet's grid lines), not the text shown again: no echo is taken from it."""


def find_echoes(shown: np.ndarray, typed: Rect, later: list[np.ndarray]) -> list[tuple[int, Rect]]:
    """Where the text typed into `typed` (as drawn in `shown`) appears elsewhere on the
    later screens: (index into `later`, region), the first screen each region shows on;
    none when the picture matches in more than `ECHO_MAX` places."""
    ys, xs = small_slice(typed, shown.shape)
    # Leave out the edge columns, where the caret stands before and after typing.
    template = shown[ys, xs.start + 1 : xs.stop - 2]
    if template.shape[1] < ECHO_MIN_WIDTH or template.shape[0] < 2:
        return []
    found: list[tuple[int, Rect]] = []
    for j, screen in enumerate(later):
        for rect in find_template(screen, template, ECHO_MATCH):
            if rect.intersects(typed.grow(8)) or any(rect.intersects(r) for _, r in found):
                continue
            found.append((j, rect))
            if len(found) > ECHO_MAX:
                return []
    return found


ECHO_GAP = 2
"""Unchanged columns (downscaled px) that part two pieces of what one typing changed."""
LINE_GAP = 2
"""Unchanged rows (downscaled px) that part two lines of what one action changed."""
BLANK_SPREAD = 24
"""Luma levels within which a stretch of screen holds nothing (one background)."""
ECHO_HEIGHT = 32
"""Text taller than this (px) is not one line echoing a field's value."""


def text_shown_elsewhere(
    before: np.ndarray, after: np.ndarray, typed: Rect, within: Rect | None
) -> list[Rect]:
    """Where typing into `typed` made text appear on blank ground elsewhere on the screen
    (`within` the window typed into, when the window system tells it): the app showing
    the value again in another font (a spreadsheet's input line), which `find_echoes`
    cannot match. Each piece of what changed (`_pieces`: lines, and on a line what lies
    `ECHO_GAP` unchanged columns apart) counts when it was blank before, is one line no
    taller than the field's own change, no wider than twice the typed text (plus a glyph)
    and at least two downscaled pixels each way: an icon that changed beside it had
    something drawn before, a dialog or a list is taller, a clock's changing stroke
    smaller."""
    found: list[Rect] = []
    moved = moved_pixels(before, after)
    line = (typed.x + typed.w // 2, typed.y + typed.h // 2)
    for region in changed_regions(before, after):
        for piece in _pieces(moved, region, ECHO_GAP):
            if piece.intersects(typed.grow(8)) or on_focus_line(piece, line):
                continue
            if within is not None and not piece.inside(within.grow(SCALE)):
                continue
            if not _blank_before(before, after, moved, piece):
                continue  # something was drawn there: not new text on blank ground
            if piece.h > min(typed.h + 2 * SCALE, ECHO_HEIGHT) or piece.w > 2 * typed.w + 16:
                continue
            if min(piece.w, piece.h) < 2 * SCALE:
                continue  # a stroke, a dot: a clock's digit changing, not a word
            found.append(piece)
    return found


WINDOW_MARGIN = 8
"""What the task changed counts this far outside its window's client area (a frame, a
focus ring)..."""
TITLE_BAR = 40
"""... and this far above it: the window manager's title bar, which changes colour as
the window takes the focus, moves with the window (openbox draws it 20 px tall)."""


def _touched(
    patch: Patch | None,
    changed: list[Rect],
    window: WindowRef | None,
    seen: tuple[np.ndarray, np.ndarray] | None,
) -> list[Rect]:
    """What a step adds to the task area: its target and what it changed (`changed`: the
    regions, `seen`: the screens before and after), within the window it acted in (or
    typed into) when the window system told it: a notification expiring, another app
    redrawing or a panel's taskbar button changing while the step was recorded is not the
    task's. Within the window, what changed there: a changed region joins changes up to a
    block apart, and a rectangle around a window and a panel at the top of the screen would
    take in the desktop between them (the wallpaper above the window's title bar)."""
    out: list[Rect] = []
    if patch is not None:
        half = PATCH_SIZE // 2
        out.append(Rect(patch.x - half, patch.y - half, PATCH_SIZE, PATCH_SIZE))
    if window is None:
        effect = union_of(changed)
        return out if effect is None else [effect, *out]
    r = window.rect
    bounds = Rect(r.x, r.y - TITLE_BAR, r.w, r.h + TITLE_BAR).grow(WINDOW_MARGIN)
    inside = [i for i in (c.intersection(bounds) for c in changed) if i is not None]
    if seen is not None:
        tight = (changed_within(*seen, i) for i in inside)
        inside = [t for t in tight if t is not None]
    effect = union_of(inside)
    if effect is not None:
        out.insert(0, effect)
    return [r for r in (t.intersection(bounds) for t in out) if r is not None]


def volatile_masks(regions: list[Rect]) -> list[Rect]:
    """Learned volatile regions, merged, with a small margin for anti-aliasing."""
    return merge_rects(regions, margin=4)
