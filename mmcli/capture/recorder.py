"""Recording: run an agent, capture the screen before each of its actions, build steps.

A `Recorder` listens on a Unix socket. The agent's actions reach it either from the
pyautogui hook inside a Python agent (see hook/) or from `mm act` (any language). For
each action the recorder moves the pointer onto the action's target (so that hover
effects are the same at replay, which does the same), waits for the screen to settle,
keeps what the fingerprint needs, and only then lets the action happen.

When the agent has exited 0, `build_steps` turns the captures into steps: it learns what
each action changed, replaces param and secret values in typed text with placeholders,
masks regions expected to differ at replay, and fingerprints every screen.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mmcli.backends.base import Backend
from mmcli.capture.secrets import join_keystrokes, joined
from mmcli.desktop.clipboard import is_paste, read_clipboard
from mmcli.desktop.input_watch import InputWatch, Observed
from mmcli.model import BUTTONS, POINTED, Action, ActionKind, Step
from mmcli.params import parametrize
from mmcli.screen.fingerprint import (
    PATCH_SIZE,
    SCALE,
    Fingerprint,
    Frame,
    Patch,
    Rect,
    changed_regions,
    changed_regions_fine,
    find_template,
    grid_of,
    grow_to_text_run,
    merge_rects,
    patch_of,
    small_slice,
)
from mmcli.screen.matcher import (
    CARET_INK,
    CARET_MAX,
    CARET_MIN_HEIGHT,
    CARET_WIDTH,
    ink_columns,
    on_focus_line,
)

SOCKET_ENV = "MM_RECORD_SOCKET"
HOOK_DIR = Path(__file__).parents[1] / "hook"
SETTLE_QUIET = 0.02
SETTLE_LIMIT = 0.6
SAMPLE_EVERY = 0.25
"""While the agent thinks, the screen is sampled this often to learn what changes alone."""
QUIET_AFTER_ACTION = 1.0
"""Changes within this many seconds of an action are the action's doing, not volatility."""
APPROACH = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.DRAG}
"""Actions whose target the pointer is moved onto before the screen is captured."""
AT_POINTER = {ActionKind.CLICK, ActionKind.SCROLL}
"""Actions that may come without a point (xdotool `click 1`): they act at the pointer."""
XDOTOOL_SHIM = """#!{python} -IS
import sys
sys.path.insert(0, {hook!r})
import _mm_xdotool
sys.exit(_mm_xdotool.main(sys.argv[1:], {bin!r}))
"""
"""The `xdotool` first on a recorded agent's PATH (see hook/_mm_xdotool.py)."""


def settle(backend: Backend, since: float | None = None) -> Frame:
    """The screen once still, as the recorder keeps it: still for `SETTLE_QUIET` since its
    last change and since `since`, when the agent's last input was given (in its own
    process; by default just now)."""
    at = time.monotonic() if since is None else since
    return backend.settle(SETTLE_QUIET, SETTLE_LIMIT, since=at).frame


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
    return any(columns is not None and not columns.any() for columns in ink)


def approach(backend: Backend, action: Action) -> None:
    """Put the pointer where the action will happen, as pyautogui itself would first."""
    if action.kind in APPROACH and action.point is not None:
        backend.move(*action.point)


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


def action_from_json(data: Mapping[str, Any]) -> Action:
    """Parse an action sent by the hook or `mm act` (trusted local input, still checked)."""
    kind = ActionKind(str(data["kind"]))
    button = str(data.get("button", "left"))
    if button not in BUTTONS:
        raise ValueError(f"mouse button {button!r} cannot be recorded (only {', '.join(BUTTONS)})")

    def opt_int(key: str) -> int | None:
        return None if data.get(key) is None else int(data[key])

    return Action(
        kind=kind,
        x=opt_int("x"),
        y=opt_int("y"),
        x2=opt_int("x2"),
        y2=opt_int("y2"),
        button=button,
        clicks=int(data.get("clicks", 1)),
        text=str(data.get("text", "")),
        keys=tuple(str(k) for k in data.get("keys", ())),
        amount=int(data.get("amount", 0)),
    )


def action_to_json(action: Action) -> dict[str, Any]:
    return {
        "kind": str(action.kind),
        "x": action.x,
        "y": action.y,
        "x2": action.x2,
        "y2": action.y2,
        "button": action.button,
        "clicks": action.clicks,
        "text": action.text,
        "keys": list(action.keys),
        "amount": action.amount,
    }


def _png(image_fn: Callable[[], Any]) -> bytes:
    buf = io.BytesIO()
    image_fn().save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


@dataclass
class Recorder:
    """Captures actions reported over a Unix socket while an agent runs."""

    backend: Backend
    start_focus: tuple[int, int] | None = None
    captures: list[Capture] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    on_action: Callable[[int, Action, str], None] | None = None
    """Called with each step's index, action and a note, once the step is complete (typed
    text when the next action shows that no more text follows)."""
    on_warning: Callable[[str], None] | None = None
    final: np.ndarray | None = None
    volatile: list[Rect] = field(default_factory=list)
    learn: bool = True
    """Sample the screen between actions to learn regions that change on their own."""
    watch: InputWatch | None = None
    """The display's input, watched: told of each reported action before it happens."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._last_capture = time.monotonic()
        self._activity = 0
        self._focus = self.start_focus
        self._thumbs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mm-thumb")
        self._dir = tempfile.mkdtemp(prefix="mm-rec-")
        self.socket_path = os.path.join(self._dir, "recorder.sock")
        self._server: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._closing = False
        self._unannounced: int | None = None
        self.held: Capture | None = None
        """A mouse button pressed (xdotool mousedown) and not released yet: the screen
        before the press, to become a drag (or a click) at the release."""

    # ---- capturing ---------------------------------------------------------------------

    def capture(self, action: Action) -> None:
        with self._lock:
            action = self._at_pointer(action)
            if self.watch is not None:  # before the answer: the input follows it
                self.watch.report(action)
            if self.held is not None:
                self.unsupported.append("input while a mouse button is held (mousedown)")
            action, note = self._pasted(action)
            self._append(self._shoot(action, note))

    def _shoot(self, action: Action, note: str = "") -> Capture:
        """The screen before `action` (the caller holds the lock)."""
        approach(self.backend, action)
        # The agent's last input came after the last capture was answered (each action
        # waits for its answer) or is the latest the display's input watch saw: the
        # screen need be still only since then. An agent that thought for a second
        # before this action is captured at once, not 20 ms later.
        frame = settle(self.backend, since=self._last_capture)
        target = focus_point(action, self._focus)
        if action.kind is ActionKind.CLICK:
            self._focus = action.point
        return Capture(
            action=action,
            small=frame.small,
            patch=patch_of(frame, *target) if target else None,
            pointer=self.backend.pointer(),
            size=(frame.width, frame.height),
            at=datetime.now(UTC),
            thumbnail=self._thumbs.submit(_png, frame.thumbnail),
            note=note,
        )

    def _append(self, capture: Capture) -> None:
        """Keep a capture; text typed right after text (an agent typing in chunks) joins
        the previous step, which keeps the screen before the first chunk."""
        last = self.captures[-1] if self.captures else None
        action = capture.action
        if last is not None and last.action.kind is action.kind is ActionKind.TYPE:
            last.action = replace(last.action, text=last.action.text + action.text)
            last.note = last.note or capture.note
            if capture.thumbnail is not None:
                capture.thumbnail.cancel()
        else:
            self._announce_typed()
            self.captures.append(capture)
        self.note_activity()
        if action.kind is ActionKind.TYPE:
            self._unannounced = len(self.captures) - 1
        else:
            self._announce(len(self.captures) - 1)

    def _announce_typed(self) -> None:
        if self._unannounced is not None:
            self._announce(self._unannounced)
            self._unannounced = None

    def _announce(self, index: int) -> None:
        cap = self.captures[index]
        if self.on_action is not None:
            self.on_action(index, cap.action, cap.note)

    def _at_pointer(self, action: Action) -> Action:
        if action.kind in AT_POINTER and action.point is None:
            x, y = self.backend.pointer()
            return replace(action, x=x, y=y)
        return action

    def _pasted(self, action: Action) -> tuple[Action, str]:
        """A paste chord becomes the text it pastes (read from the clipboard now)."""
        if action.kind is not ActionKind.HOTKEY or not is_paste(action.keys):
            return action, ""
        text = read_clipboard()
        if not text:
            self._warn(
                f"{'+'.join(action.keys)}: the clipboard is empty or unreadable; recorded "
                "as a key chord (replay pastes whatever the clipboard holds then)"
            )
            return action, ""
        return Action(ActionKind.TYPE, text=text), "pasted from the clipboard"

    def _warn(self, message: str) -> None:
        if self.on_warning is not None:
            self.on_warning(message)

    def press(self, button: str, at: tuple[int, int] | None) -> None:
        """A mouse button goes down (xdotool mousedown): keep the screen before it."""
        with self._lock:
            if self.held is not None:
                self.unsupported.append("mousedown while a button is already held")
                return
            point = at or self.backend.pointer()
            if self.watch is not None:  # the press the display will see
                self.watch.report(Action(ActionKind.CLICK, x=point[0], y=point[1], button=button))
            action = Action(ActionKind.DRAG, x=point[0], y=point[1], x2=point[0],
                            y2=point[1], button=button)  # fmt: skip
            self.held = self._shoot(action)

    def release(self, button: str, at: tuple[int, int] | None) -> None:
        """The held button comes up: a drag from the press to here, or a click in place."""
        with self._lock:
            held, self.held = self.held, None
            if held is None or held.action.button != button:
                self.unsupported.append(f"mouseup of {button} without its mousedown")
                return
            x2, y2 = at or self.backend.pointer()
            action = held.action
            if (x2, y2) == action.point:
                held.action = Action(ActionKind.CLICK, x=action.x, y=action.y, button=button)
            else:
                held.action = replace(action, x2=x2, y2=y2)
            self._append(held)

    def finish(self) -> None:
        """The agent has exited: announce the last step; a button still held is input
        that cannot be recorded."""
        with self._lock:
            self._announce_typed()
            if self.held is not None:
                self.unsupported.append("a mouse button left held (mousedown, no mouseup)")
                self.held = None

    def note_activity(self) -> None:
        """An action happened (reported, or seen on the display): the changes around now
        are its doing, not the screen changing on its own."""
        self._last_capture = time.monotonic()
        self._activity += 1

    def add_observed(self, observed: list[tuple[Action, Observed | None]]) -> int:
        """Add the actions built from the display's input, in time order with the
        reported ones; return how many were added (those without a screen are not)."""
        added = [
            Capture(a, o.frame_small, o.patch, o.pointer, o.size, o.at, o.thumbnail)
            for a, o in observed
            if o is not None
        ]
        self.captures = sorted([*self.captures, *added], key=lambda c: c.at)
        return len(added)

    def observe(self, seconds: float) -> None:
        """Watch the idle screen before the agent starts: what changes now changes alone."""
        deadline = time.monotonic() + seconds
        previous = self.backend.grab()
        while time.monotonic() < deadline:
            time.sleep(min(SAMPLE_EVERY / 2, max(deadline - time.monotonic(), 0)))
            current = self.backend.grab()
            self._note_volatile(previous, current)
            previous = current

    def _note_volatile(self, before: Frame, after: Frame) -> None:
        for region in changed_regions_fine(before, after):
            if is_caret(before, after, region):
                # A blinking caret: the matcher knows carets where they are harmless;
                # masking it (let alone the text run beside it) would hide its field.
                continue
            self.volatile.append(grow_to_text_run(after.small, region))

    def _sample(self) -> None:
        """Background: between actions, once the app has reacted, note spontaneous changes."""
        previous: Frame | None = None
        seen = -1
        while not self._closing:
            time.sleep(SAMPLE_EVERY)
            with self._lock:
                quiet = time.monotonic() - self._last_capture >= QUIET_AFTER_ACTION
                if not quiet or self._closing:
                    previous = None
                    continue
                current = self.backend.grab()
                if previous is not None and seen == self._activity:
                    self._note_volatile(previous, current)
                previous, seen = current, self._activity

    def capture_final(self) -> None:
        """The screen after the last action: what that action changed."""
        with self._lock:
            self.final = settle(self.backend).small

    # ---- the socket ----------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for the agent: where to report, the pyautogui hook on PYTHONPATH
        and the recording `xdotool` first on PATH."""
        path = os.environ.get("PYTHONPATH", "")
        return {
            SOCKET_ENV: self.socket_path,
            "PYTHONPATH": str(HOOK_DIR) + (os.pathsep + path if path else ""),
            "PATH": self._bin + os.pathsep + os.environ.get("PATH", os.defpath),
        }

    @property
    def _bin(self) -> str:
        return os.path.join(self._dir, "bin")

    def _write_shim(self) -> None:
        os.mkdir(self._bin)
        shim = os.path.join(self._bin, "xdotool")
        with open(shim, "w") as f:
            f.write(XDOTOOL_SHIM.format(python=sys.executable, hook=str(HOOK_DIR), bin=self._bin))
        os.chmod(shim, 0o755)

    def __enter__(self) -> Recorder:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(8)
        self._server = server
        self._write_shim()
        t = threading.Thread(target=self._accept, name="mm-recorder", daemon=True)
        t.start()
        self._threads.append(t)
        if self.learn:
            sampler = threading.Thread(target=self._sample, name="mm-sampler", daemon=True)
            sampler.start()
            self._threads.append(sampler)
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing = True
        with self._lock:  # let a sample or capture in progress finish
            pass
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        self._thumbs.shutdown(wait=True)

    def _accept(self) -> None:
        assert self._server is not None
        while not self._closing:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as f:
            for line in f:
                reply = self._handle(line)
                try:
                    f.write(json.dumps(reply).encode() + b"\n")
                    f.flush()
                except OSError:
                    return

    def _handle(self, line: bytes) -> dict[str, Any]:
        if self._closing:
            return {"ok": False, "error": "the recording has ended"}
        try:
            message = json.loads(line)
            op = message.get("op")
            if op in ("act", "perform"):
                action = action_from_json(message["action"])
                # The pointer moving while a button is held is part of the drag.
                if self.held is None or action.kind is not ActionKind.MOVE:
                    self.capture(action)
                if op == "perform":  # `mm act`: acts through the recorder's own backend
                    with self._lock:
                        self.backend.perform(self._at_pointer(action))
                return {"ok": True}
            if op == "button":
                at = message.get("x"), message.get("y")
                point = None if None in at else (int(at[0]), int(at[1]))
                button = str(message.get("button", "left"))
                if message.get("state") == "down":
                    self.press(button, point)
                else:
                    self.release(button, point)
                return {"ok": True}
            if op == "unsupported":
                self.unsupported.append(str(message.get("name")))
                return {"ok": True}
            return {"ok": False, "error": f"unknown request {op!r}"}
        except Exception as e:  # the agent gets the reason; the recording stays consistent
            return {"ok": False, "error": f"{type(e).__name__}: {e}"}


# ---- from captures to steps ------------------------------------------------------------------

TEXT_GROW = 160
"""A param-typed field may show longer text at replay: its mask extends this far right."""


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
    for i, cap in enumerate(captures):
        masks.extend(echoes.get(i, []))
        hidden.extend(r for r in echoes.get(i, []) if r in secret_echoes)
        after = captures[i + 1].small if i + 1 < len(captures) else final
        effect = effect_of(cap, after, masks) if after is not None else None
        action = cap.action
        if action.kind is ActionKind.TYPE:
            action = replace(action, text=parametrize(action.text, values))
        painted = _paintable(merge_rects(hidden, margin=0), cap.patch)
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
            )
        )
        for touched in _touched(cap.patch, effect):
            area = touched if area is None else area.union(touched)
        secret = bool(action.params_used() & (secrets or set()))
        if secret_typed and not secret and after is not None:
            hidden.extend(_exposed(action, cap.small, after))
        secret_typed = secret_typed or secret
        if action.params_used() and effect is not None and after is not None:
            # What was typed from a param will read differently at replay: blank it in
            # every later fingerprint, at record and at replay alike; and where the app
            # echoes it (a status line), from the step where the echo shows.
            masks.append(_text_mask(effect))
            if secret:
                hidden.append(_text_mask(effect))
            for j, rect in find_echoes(after, effect, screens[i + 1 :]):
                echoes.setdefault(i + 1 + j, []).append(_text_mask(rect))
                if secret:
                    secret_echoes.append(_text_mask(rect))
    return Built(steps, thumbnails, area)


def effect_of(cap: Capture, after: np.ndarray, masks: list[Rect]) -> Rect | None:
    """What the captured action changed on the screen, judged region by region: a region
    wholly inside a masked one (a clock ticking between two captures) is not the action's
    doing. For typed text, the changed regions on the line of the field that has the
    focus (what the typing produced); when there are none there, everything else that
    changed.
    """
    changed = changed_regions(cap.small, after)
    regions = [r for r in changed if not any(_inside(r, m.grow(SCALE)) for m in masks)]
    if cap.action.kind is ActionKind.TYPE and cap.patch is not None:
        # What the typing wrote, even where a mask lies over it (the field's caret was
        # learned as volatile): the param's value at replay may be longer.
        focus = (cap.patch.x, cap.patch.y)
        regions = [r for r in changed if on_focus_line(r, focus)] or regions
    if not regions:
        return None
    effect = regions[0]
    for region in regions[1:]:
        effect = effect.union(region)
    return effect


def _inside(inner: Rect, outer: Rect) -> bool:
    return (
        outer.x <= inner.x
        and outer.y <= inner.y
        and inner.right <= outer.right
        and inner.bottom <= outer.bottom
    )


def _exposed(action: Action, before: np.ndarray, after: np.ndarray) -> list[Rect]:
    """Once a secret has been typed, where the screen changed as an action other than
    typing took effect (a status line, a dialog, a page): it may show the secret again, in
    any font, which the pixels cannot tell. Typing known text shows that text."""
    if action.kind is ActionKind.TYPE:
        return []
    return [grow_to_text_run(after, r).grow(2) for r in changed_regions(before, after)]


def _paintable(regions: list[Rect], patch: Patch | None) -> list[Rect]:
    """`regions` without the core of the step's target, which its checks must see."""
    if patch is None:
        return regions
    half = PATCH_SIZE // 4
    core = Rect(patch.x - half, patch.y - half, 2 * half, 2 * half)
    out: list[Rect] = []
    for r in regions:
        out.extend(_minus(r, core) if r.intersects(core) else [r])
    return out


def _minus(r: Rect, hole: Rect) -> list[Rect]:
    """`r` minus `hole`, as up to four rectangles (above, below, left, right)."""
    top, bottom = max(r.y, hole.y), min(r.bottom, hole.bottom)
    parts = [
        Rect(r.x, r.y, r.w, hole.y - r.y),
        Rect(r.x, hole.bottom, r.w, r.bottom - hole.bottom),
        Rect(r.x, top, hole.x - r.x, bottom - top),
        Rect(hole.right, top, r.right - hole.right, bottom - top),
    ]
    return [p for p in parts if p.w > 0 and p.h > 0]


def blank_png(data: bytes, regions: list[Rect]) -> bytes:
    """A thumbnail with `regions` (screen pixels) painted over: exactly the downscaled
    pixels `fingerprint.blank` blanks for the same regions."""
    if not regions:
        return data
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(data)) as image:
        img = image.convert("RGB")
    draw = ImageDraw.Draw(img)
    for r in regions:
        x0, y0 = max(r.x // SCALE, 0), max(r.y // SCALE, 0)
        x1, y1 = -(-r.right // SCALE), -(-r.bottom // SCALE)
        if x1 > x0 and y1 > y0:  # PIL's rectangle includes its far corner
            draw.rectangle([x0, y0, x1 - 1, y1 - 1], fill=PAINT)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


PAINT = (64, 64, 64)
"""The colour secrets are painted over with in thumbnails."""


def _text_mask(rect: Rect) -> Rect:
    return Rect(rect.x, rect.y, rect.w + TEXT_GROW, rect.h).grow(2)


ECHO_MATCH = 0.85
"""Normalized correlation above which typed text is taken to be shown again elsewhere."""
ECHO_MIN_WIDTH = 6
"""Typed text narrower than this (downscaled px) is too short to look for reliably."""


def find_echoes(shown: np.ndarray, typed: Rect, later: list[np.ndarray]) -> list[tuple[int, Rect]]:
    """Where the text typed into `typed` (as drawn in `shown`) appears elsewhere on the
    later screens: (index into `later`, region), the first screen each region shows on."""
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
    return found


def _touched(patch: Patch | None, effect: Rect | None) -> list[Rect]:
    out = [] if effect is None else [effect]
    if patch is not None:
        half = PATCH_SIZE // 2
        out.append(Rect(patch.x - half, patch.y - half, PATCH_SIZE, PATCH_SIZE))
    return out


def volatile_masks(regions: list[Rect]) -> list[Rect]:
    """Learned volatile regions, merged, with a small margin for anti-aliasing."""
    return merge_rects(regions, margin=4)
