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
import socket
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
from mmcli.fingerprint import (
    PATCH_SIZE,
    SCALE,
    Fingerprint,
    Frame,
    Patch,
    Rect,
    blank,
    changed_regions,
    find_template,
    grid_of,
    grow_to_text_run,
    merge_rects,
    patch_of,
    small_slice,
)
from mmcli.matcher import CARET_MAX, caret_thin, on_focus_line
from mmcli.model import BUTTONS, POINTED, Action, ActionKind, Step

SOCKET_ENV = "MM_RECORD_SOCKET"
HOOK_DIR = Path(__file__).parent / "hook"
SETTLE_QUIET = 0.02
SETTLE_LIMIT = 0.6
SAMPLE_EVERY = 0.25
"""While the agent thinks, the screen is sampled this often to learn what changes alone."""
QUIET_AFTER_ACTION = 1.0
"""Changes within this many seconds of an action are the action's doing, not volatility."""
APPROACH = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.DRAG}
"""Actions whose target the pointer is moved onto before the screen is captured."""


def settle(backend: Backend) -> Frame:
    """The screen once still, as the recorder keeps it. The agent's last input was given
    just now, in its own process: the screen counts as still only from now on."""
    return backend.settle(SETTLE_QUIET, SETTLE_LIMIT, since=time.monotonic()).frame


def is_caret(before: Frame, after: Frame, region: Rect) -> bool:
    """A region that changed between two frames is a caret blinking: caret-sized, and
    caret-thin at full resolution in both."""
    return (
        region.w <= CARET_MAX[0]
        and region.h <= CARET_MAX[1]
        and caret_thin(before, region)
        and caret_thin(after, region)
    )


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
    on_action: Callable[[int, Action], None] | None = None
    final: np.ndarray | None = None
    volatile: list[Rect] = field(default_factory=list)
    learn: bool = True
    """Sample the screen between actions to learn regions that change on their own."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._last_capture = time.monotonic()
        self._focus = self.start_focus
        self._thumbs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mm-thumb")
        self._dir = tempfile.mkdtemp(prefix="mm-rec-")
        self.socket_path = os.path.join(self._dir, "recorder.sock")
        self._server: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._closing = False

    # ---- capturing ---------------------------------------------------------------------

    def capture(self, action: Action) -> None:
        with self._lock:
            approach(self.backend, action)
            frame = settle(self.backend)
            target = focus_point(action, self._focus)
            if action.kind is ActionKind.CLICK:
                self._focus = action.point
            capture = Capture(
                action=action,
                small=frame.small,
                patch=patch_of(frame, *target) if target else None,
                pointer=self.backend.pointer(),
                size=(frame.width, frame.height),
                at=datetime.now(UTC),
                thumbnail=self._thumbs.submit(_png, frame.thumbnail),
            )
            self.captures.append(capture)
            self._last_capture = time.monotonic()
        if self.on_action is not None:
            self.on_action(len(self.captures) - 1, action)

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
        for region in changed_regions(before.small, after.small):
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
                if previous is not None and seen == len(self.captures):
                    self._note_volatile(previous, current)
                previous, seen = current, len(self.captures)

    def capture_final(self) -> None:
        """The screen after the last action: what that action changed."""
        with self._lock:
            self.final = settle(self.backend).small

    # ---- the socket ----------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for the agent: where to report, and the hook on PYTHONPATH."""
        path = os.environ.get("PYTHONPATH", "")
        return {
            SOCKET_ENV: self.socket_path,
            "PYTHONPATH": str(HOOK_DIR) + (os.pathsep + path if path else ""),
        }

    def __enter__(self) -> Recorder:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(8)
        self._server = server
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
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)
        with contextlib.suppress(OSError):
            os.rmdir(self._dir)
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
            if op == "act":
                self.capture(action_from_json(message["action"]))
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


def parametrize(text: str, values: Mapping[str, str]) -> str:
    """Replace each param value in typed text with its `{{key}}` placeholder, longest
    value first so that one value inside another does not split it."""
    if not text:
        return text
    for key, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
        if value:
            text = text.replace(value, "{{" + key + "}}")
    return text


@dataclass
class Built:
    steps: list[Step]
    thumbnails: dict[str, bytes]
    area: Rect | None
    """Where the actions acted and what they changed (union), volatile regions excluded."""


def build_steps(
    captures: list[Capture],
    final: np.ndarray | None,
    values: Mapping[str, str],
    first_id: int,
    parent: int | None,
    masks: list[Rect],
    secrets: set[str] | None = None,
) -> Built:
    """Steps (a chain from `parent`) and their thumbnails, from one run's captures.

    `masks` are blanked in every fingerprint (declared and volatile regions); regions
    typed from a param are added for the steps after them.
    """
    steps: list[Step] = []
    thumbnails: dict[str, bytes] = {}
    masks = list(masks)
    area: Rect | None = None
    token = os.urandom(3).hex()
    screens = [c.small for c in captures] + ([final] if final is not None else [])
    echoes: dict[int, list[Rect]] = {}
    hidden: list[Rect] = []  # where secret values show: painted over in later thumbnails
    secret_echoes: list[Rect] = []
    for i, cap in enumerate(captures):
        masks.extend(echoes.get(i, []))
        hidden.extend(r for r in echoes.get(i, []) if r in secret_echoes)
        after = captures[i + 1].small if i + 1 < len(captures) else final
        effect = effect_of(cap, after, masks) if after is not None else None
        action = cap.action
        if action.kind is ActionKind.TYPE:
            action = replace(action, text=parametrize(action.text, values))
        width, height = cap.size
        fp = Fingerprint(
            width, height, grid_of(cap.small, masks), cap.patch, cap.pointer, tuple(masks)
        )
        step_id = first_id + i
        name = f"{token}-{step_id:04d}.png"
        if cap.thumbnail is not None:
            thumbnails[name] = blank_png(cap.thumbnail.result(), hidden)
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
        if action.params_used() and effect is not None and after is not None:
            # What was typed from a param will read differently at replay: blank it in
            # every later fingerprint, at record and at replay alike; and where the app
            # echoes it (a status line), from the step where the echo shows.
            masks.append(_text_mask(effect))
            secret = bool(action.params_used() & (secrets or set()))
            if secret:
                hidden.append(_text_mask(effect))
            for j, rect in find_echoes(after, effect, screens[i + 1 :]):
                echoes.setdefault(i + 1 + j, []).append(_text_mask(rect))
                if secret:
                    secret_echoes.append(_text_mask(rect))
    return Built(steps, thumbnails, area)


def effect_of(cap: Capture, after: np.ndarray, masks: list[Rect]) -> Rect | None:
    """What the captured action changed on the screen, judged region by region with the
    masked (volatile, declared, param) regions left out: a clock ticking between two
    captures is not the action's doing. For typed text, the changed regions on the line of
    the field that has the focus (what the typing produced); when there are none there,
    everything that changed.
    """
    regions = changed_regions(blank(cap.small, masks), blank(after, masks))
    if not regions:
        return None
    if cap.action.kind is ActionKind.TYPE and cap.patch is not None:
        focus = (cap.patch.x, cap.patch.y)
        in_field = [r for r in regions if on_focus_line(r, focus)]
        regions = in_field or regions
    effect = regions[0]
    for region in regions[1:]:
        effect = effect.union(region)
    return effect


def blank_png(data: bytes, regions: list[Rect]) -> bytes:
    """A thumbnail with `regions` (screen pixels) painted over."""
    if not regions:
        return data
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(data)) as image:
        img = image.convert("RGB")
    draw = ImageDraw.Draw(img)
    for r in regions:
        # Exactly the cells `blank` blanks (PIL includes the rectangle's last row and column).
        box = [r.x // SCALE, r.y // SCALE, -(-r.right // SCALE) - 1, -(-r.bottom // SCALE) - 1]
        draw.rectangle(box, fill=(64, 64, 64))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


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
