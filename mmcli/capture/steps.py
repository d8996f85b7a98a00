"""From captures to steps: what a finished run's captures become in a recording.

`build_steps` learns what each action changed on the screen (its effect), joins typing
done in pieces into one text, field by field (`join_typing`), replaces param and secret
values with placeholders, masks what is expected to differ at replay (typed text
and its echoes elsewhere, volatile regions, secrets painted over in thumbnails) and
fingerprints every screen. Pure functions of the captures: no display, no socket (see
recorder.py for how captures are taken).
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from mmcli.capture.counts import Crops, count_lines
from mmcli.capture.landing import READ_BACK_MIN, effect_regions, union_of, unmasked
from mmcli.capture.secrets import join_keystrokes, joined, typed_text
from mmcli.model import MAX_LANDED_TEXT, POINTED, Action, ActionKind, EndScreen, Landed, Step
from mmcli.params import leaked_in, parametrize
from mmcli.readback.field import FieldText, NotRead, normalise, times_shown
from mmcli.readback.ocr import find_phrase
from mmcli.screen.analysis import (
    SPILL,
    changed_regions,
    changed_within,
    grid_of,
    ground_reach,
    grow_to_text_run,
    merge_rects,
)
from mmcli.screen.counts import on_count_rows, placeholders
from mmcli.screen.echoes import Detail, find_echoes, text_shown_elsewhere
from mmcli.screen.fingerprint import PATCH_SIZE, Fingerprint, Frame, Patch, Rect
from mmcli.screen.paint import TEXT_GROW, TEXT_GROW_LEFT, blank_png, paintable, text_mask
from mmcli.screen.windows import MAX_TITLE, Over, TitleBar, WindowRef, sanitized


def focus_point(action: Action, previous: tuple[int, int] | None) -> tuple[int, int] | None:
    """Where an action acts: its own point, or for keyboard actions the last clicked point."""
    return action.point if action.kind in POINTED else previous


@dataclass(frozen=True)
class FinalScreen:
    """The screen the run ended on, as `Recorder.capture_final` keeps it: the outcome
    `build_steps` gives the last step."""

    frame: Frame
    thumbnail: bytes
    typed: Detail | None
    """After a run of typing that ended the task: what it changed, at full resolution."""
    changed: Detail | None
    """What the final screen changed since the last capture (`Capture.changed`)."""
    titles: tuple[tuple[Rect, str], ...]
    """The title bars of the task's windows on the final screen (`Capture.titles`)."""
    counts: Crops = ()
    """The count bands' pixels on the final screen (`Capture.counts`)."""
    vacated: tuple[Rect, ...] = ()
    """Where the task's windows stood before the last action and none stands now
    (`EndScreen.vacated`)."""
    pointer: tuple[int, int] | None = None
    """Where the pointer was on the final screen."""
    under: WindowRef | None = None
    """The task's window under the pointer then (`EndScreen.under`)."""


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
    above: tuple[Over, ...] = ()
    """The windows over part of `window` then (`Step.above`)."""
    own: tuple[Over, ...] = ()
    """The other windows of `window`'s app then (`Step.own`)."""
    frames: tuple[Rect, ...] = ()
    """The frames of `window` and its app's other windows then (title bars and borders
    included): where the last action may lay the desktop bare (`windowing.vacated`)."""
    read: FieldText | NotRead | None = None
    """For typed text: its field read back once the app had drawn it (`landed_of`)."""
    field_box: Rect | None = None
    """For typed text: where its field stood (what the typing changed, to its field's
    ground), for OCR."""
    typed: Detail | None = None
    """After typing (this screen follows a run of typing actions): what the run changed,
    at full resolution: the typed text's picture, looked for elsewhere (`find_echoes`)."""
    changed: Detail | None = None
    """What changed on this screen since the capture before, at full resolution (kept
    once the task has typed): where an echo of typed text is looked for."""
    titles: tuple[tuple[Rect, str], ...] = ()
    """The title bars of the task's windows on this screen and their titles, as the
    window system told them (kept as `Step.titles`)."""
    counts: Crops = ()
    """The pixels of the lines typing changed off its field so far, on this screen
    (`capture.counts`: kept as `Step.counts` where they show a number)."""

    @property
    def focus(self) -> tuple[int, int] | None:
        """The point the action acts at (for keys: the last clicked point), if known."""
        return (self.patch.x, self.patch.y) if self.patch is not None else None

    @property
    def window_rect(self) -> Rect | None:
        """Where `window` stood (for keys: the window that had the keyboard), if known."""
        return self.window.rect if self.window is not None else None


@dataclass
class Built:
    steps: list[Step]
    thumbnails: dict[str, bytes]
    area: Rect | None
    """Where the actions acted and what they changed (union), volatile regions excluded."""


def join_typing(captures: list[Capture], values: Iterable[str] = ()) -> list[Capture]:
    """Captures with each run of consecutive typing actions (`type`, `press` of printable
    keys) joined into one `type` capture, which keeps the screen before the first of them:
    a value typed in pieces or key by key becomes one text a placeholder can replace. A
    run is cut after a piece that leaves its field (ends with Tab or Return), unless a
    value is typed across the cut: sixty cells filled by sixty calls are sixty steps, each
    checked before it is typed, not one."""
    groups = join_keystrokes([c.action for c in captures])
    out: list[Capture] = []
    for group in groups:
        texts = [typed_text(captures[i].action) or "" for i in group]
        for part in spanned(texts, values):
            pieces = [group[i] for i in part]
            if len(pieces) == 1:
                out.append(captures[pieces[0]])
            else:
                action = joined([captures[i].action for i in pieces])
                first, last = captures[pieces[0]], captures[pieces[-1]]
                # The field read after the whole text, where it was read then.
                read = last if last.read is not None else first
                out.append(replace(first, action=action, read=read.read, field_box=read.field_box))
    return out


LEAVES_FIELD = ("\t", "\n", "\r")
"""Typed text ending with one of these has moved on to another field (or sent a form)."""


def spanned(pieces: Sequence[str], values: Iterable[str]) -> list[list[int]]:
    """`pieces` (consecutive typed texts) in runs: cut after a piece that leaves its field
    (`LEAVES_FIELD`), but where an occurrence of a value in their concatenation crosses
    from one piece into the next."""
    text = "".join(pieces)
    ends = list(itertools.accumulate(len(p) for p in pieces))
    glued = [not p.endswith(LEAVES_FIELD) for p in pieces]
    """glued[i]: piece i and piece i + 1 are one run."""
    for value in {v for v in values if v}:
        at = text.find(value)
        while at >= 0:
            first = bisect.bisect_right(ends, at)
            last = bisect.bisect_left(ends, at + len(value))
            for i in range(first, last):
                glued[i] = True
            at = text.find(value, at + 1)
    runs: list[list[int]] = [[0]] if pieces else []
    for i in range(1, len(pieces)):
        if glued[i - 1]:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def build_steps(
    captures: list[Capture],
    ended: FinalScreen | None,
    values: Mapping[str, str],
    first_id: int,
    parent: int | None,
    masks: list[Rect],
    secrets: set[str] | None = None,
    secret_typed: bool = False,
) -> Built:
    """Steps (a chain from `parent`) and their thumbnails, from one run's captures and
    the screen it `ended` on (the last step's outcome; None: the run kept none).

    `masks` are blanked in every fingerprint (declared and volatile regions); regions
    typed from a param are added for the steps after them. Once a secret has been typed
    (or `secret_typed`: before this run), what may show it is painted over in the later
    thumbnails (see `_exposed`), and each painted region is a mask of that step too, so
    that replay compares like with like.
    """
    if values:
        captures = join_typing(captures, values.values())
    steps: list[Step] = []
    thumbnails: dict[str, bytes] = {}
    masks = list(masks)
    area: Rect | None = None
    token = os.urandom(3).hex()
    final = ended.frame.small if ended is not None else None
    end_typed, end_changed = (ended.typed, ended.changed) if ended is not None else (None, None)
    screens = [c.small for c in captures] + ([final] if final is not None else [])
    echoes: dict[int, list[Rect]] = {}
    hidden: list[Rect] = list(masks) if secret_typed else []
    secret_echoes: list[Rect] = []
    window: WindowRef | None = None
    """The window the last pointer step acted in: where typing goes."""
    reads = [ECHO_READS]
    """What is left of the recording's budget of OCR reads for echoes (`read_echoes`)."""
    typed_params: list[str] = []
    """The params typed so far, once per time typed (`count_lines`)."""
    counted: dict[bytes, str | None] = {}
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
                above=cap.above,
                own=cap.own,
                landed=landed_of(cap, values, secrets or set())
                if action.kind is ActionKind.TYPE
                else None,
                titles=titles_kept(cap.titles, values, secrets or set()),
                counts=count_lines(cap.counts, typed_params, values, secrets or set(), counted),
            )
        )
        if action.kind is ActionKind.TYPE:
            typed_params.extend(placeholders([action.text]))
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
            for value in _value_masks(changed, cap.small, after):
                masks.append(value)
                if secret:
                    hidden.append(value)
            typed = captures[i + 1].typed if i + 1 < len(captures) else end_typed
            changes = [c.changed for c in captures[i + 1 :]] + [end_changed]
            found = find_echoes(after, effect, screens[i + 1 :], typed, changes)
            bounds = window.rect if window is not None else None
            shown = text_shown_elsewhere(cap.small, after, effect, bounds)
            found += [(0, r) for r in unmasked(shown, masks)]
            if not secret:
                found += read_echoes(action, values, changes, masks, reads)
            for j, rect in found:
                echo = _value_mask(rect, screens[i + 1 + j], spill=SPILL)
                echoes.setdefault(i + 1 + j, []).append(echo)
                if secret:
                    secret_echoes.append(echo)
    if ended is not None and steps:
        end = len(captures)
        masks.extend(r for r in echoes.get(end, []) if r not in masks)
        hidden.extend(r for r in echoes.get(end, []) if r in secret_echoes)
        painted = merge_rects(hidden, margin=0)
        end_masks = [*masks, *(r for r in painted if r not in masks)]
        width, height = captures[-1].size
        name = f"{token}-{steps[-1].id:04d}-end.png"
        grid = grid_of(ended.frame.small, end_masks)
        fp = Fingerprint(width, height, grid, None, ended.pointer, tuple(end_masks))
        thumbnails[name] = blank_png(ended.thumbnail, painted)
        outcome = EndScreen(
            fp,
            name,
            titles_kept(ended.titles, values, secrets or set()),
            count_lines(ended.counts, typed_params, values, secrets or set(), counted),
            ended.vacated,
            ended.under,
        )
        steps[-1] = replace(steps[-1], outcome=outcome)
    return Built(_on_count_rows(steps), thumbnails, area)


def _on_count_rows(steps: list[Step]) -> list[Step]:
    """The steps with their count lines kept unread only on a count's row
    (`screen.counts.on_count_rows`)."""
    end = steps[-1].outcome if steps else None
    screens = [s.counts for s in steps] + ([end.counts] if end is not None else [])
    kept = on_count_rows(screens)
    steps = [replace(s, counts=c) for s, c in zip(steps, kept, strict=False)]
    if end is not None:
        steps[-1] = replace(steps[-1], outcome=replace(end, counts=kept[-1]))
    return steps


ECHO_READS = 16
"""Pieces of the later screens read by OCR for a param's echo, at most, a recording (each
read costs about 0.1 s, once, when the run is saved)."""
ECHO_TEXT = (6, 200)
"""The heights (px) of a piece that may hold an echo: a line of text, small to heading."""


def read_echoes(
    action: Action,
    values: Mapping[str, str],
    changes: list[Detail | None],
    masks: list[Rect],
    reads: list[int],
) -> list[tuple[int, Rect]]:
    """Where a param's value the typing `action` typed shows again on the later screens in
    another font or size than the field's (a heading "Thank you, Grace", a title): what
    each later screen changed (`changes`) read by OCR for each value's words, pieces
    wholly masked aside; (index into `changes`, box), within the budget `reads` (shared
    by the recording's steps)."""
    phrases = [values[k] for k in sorted(action.params_used()) if values.get(k, "").strip()]
    found: list[tuple[int, Rect]] = []
    if not phrases:
        return found
    for j, detail in enumerate(changes):
        for rect, luma in detail.pieces if detail is not None else ():
            if not ECHO_TEXT[0] <= rect.h <= ECHO_TEXT[1] or rect.w < rect.h:
                continue
            if any(rect.inside(m) for m in masks) or reads[0] <= 0:
                continue
            reads[0] -= 1
            for phrase in phrases:
                for box in find_phrase(luma, phrase):
                    found.append((j, Rect(rect.x + box.x, rect.y + box.y, box.w, box.h)))
    return found


def titles_kept(
    titles: Sequence[tuple[Rect, str]], values: Mapping[str, str], secrets: set[str]
) -> tuple[TitleBar, ...]:
    """The title bars with their titles, each param's value as its placeholder
    (`Step.titles`): at replay, a bar whose window the window system names the same is
    known by its text, whether drawn active or not. Never one that would keep a piece of
    a secret."""
    hidden = {k: v for k, v in values.items() if k in secrets}
    found = []
    for rect, title in titles:
        text = parametrize(sanitized(title, MAX_TITLE), values)
        if not leaked_in(text, hidden):
            found.append(TitleBar(rect, text))
    return tuple(found)


def landed_of(cap: Capture, values: Mapping[str, str], secrets: set[str]) -> Landed | None:
    """What a recording keeps of a typing capture's field read back (`Step.landed`): the
    field's text with each param's value as its placeholder, only when the read shows the
    typed text (else nothing to compare with at replay), and nothing of it when a piece of
    a secret would stay in it; None when it was not read (text that moves between
    fields)."""
    read = cap.read
    if read is None:
        return None
    box = field_of(cap)
    if isinstance(read, NotRead):
        return Landed("", None, box)
    typed = normalise(cap.action.text)
    shown = normalise(read.text)
    found = shown.count(typed) if typed else 0
    text: str | None = parametrize(read.text, values) if found else None
    hidden = {k: v for k, v in values.items() if k in secrets}
    if text is not None and (len(text) > MAX_LANDED_TEXT or leaked_in(text, hidden)):
        text = None
    twice = times_shown(read.text, typed) >= 2
    return Landed(read.source, text, box, redone=twice and len(typed) >= READ_BACK_MIN)


def field_of(cap: Capture) -> Rect | None:
    """Where a typing capture's field stood: as the accessibility tree gave it, else
    where the typing changed (None: not a typing capture, or not known)."""
    read = cap.read
    if (
        isinstance(read, FieldText)
        and read.source == "accessibility"
        and read.rect is not None
        and read.rect.w
        and read.rect.h
    ):
        return read.rect
    return cap.field_box


def _value_masks(changed: list[Rect], before: np.ndarray, after: np.ndarray) -> list[Rect]:
    """The masks of a param's value typed where `changed` shows what the typing changed:
    one for each line of it (regions side by side joined: the value's words and the gaps
    between them), never one rectangle around the field, the window's title, its
    taskbar button and its status bar together (most of a text editor's window)."""
    lines: list[Rect] = []
    for region in sorted(changed, key=lambda r: (r.y, r.x)):
        beside = next((i for i, line in enumerate(lines) if _same_line(line, region)), None)
        if beside is None:
            lines.append(region)
        else:
            lines[beside] = lines[beside].union(region)
    return [_value_mask(line, before, after) for line in lines]


def _same_line(a: Rect, b: Rect) -> bool:
    """Whether two regions stand on one line: each overlaps the other's middle height."""
    return a.y <= b.y + b.h // 2 < a.bottom or b.y <= a.y + a.h // 2 < b.bottom


def _value_mask(rect: Rect, *screens: np.ndarray, spill: int = 0) -> Rect:
    """The mask of a param's value shown in `rect` (`text_mask`): as far as its field's
    blank ground runs, never over a neighbouring field. The farthest the ground runs in
    any of `screens`: the value's own field before the typing, whose ground its caret
    does not cut (it blinks right after the text once typed), and after. `spill`: for an
    echo, whose box was found by its picture (`analysis.SPILL`)."""
    reaches = [ground_reach(s, rect, TEXT_GROW_LEFT, TEXT_GROW, spill) for s in screens]
    return text_mask(rect, (max(r[0] for r in reaches), max(r[1] for r in reaches)))


def _exposed(action: Action, before: np.ndarray, after: np.ndarray) -> list[Rect]:
    """Once a secret has been typed, where the screen changed as an action other than
    typing took effect (a status line, a dialog, a page): it may show the secret again, in
    any font, which the pixels cannot tell. Typing known text shows that text."""
    if action.kind is ActionKind.TYPE:
        return []
    return [grow_to_text_run(after, r).grow(2) for r in changed_regions(before, after)]


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


def join_chunk(last: Capture | None, capture: Capture) -> bool:
    """Join `capture` to `last` when it is text typed right after text (an agent typing in
    chunks): the step keeps the screen before the first chunk, unless that text left its
    field (ended with Tab or Return): the next field's text is a step of its own, checked
    before it is typed. True if joined (`capture` is then dropped)."""
    action = capture.action
    if (
        last is None
        or not last.action.kind is action.kind is ActionKind.TYPE
        or last.action.text.endswith(LEAVES_FIELD)
    ):
        return False
    last.action = replace(
        last.action, text=last.action.text + action.text, key_ms=_slower(last.action, action)
    )
    last.note = last.note or capture.note
    if capture.thumbnail is not None:
        capture.thumbnail.cancel()
    return True


def _slower(a: Action, b: Action) -> int | None:
    """The pace of text typed in two chunks: the slower one's (None if neither is known)."""
    known = [x.key_ms for x in (a, b) if x.key_ms is not None]
    return max(known) if known else None
