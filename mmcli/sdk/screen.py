"""Ready-made screen checks: the CLI's screen fingerprint as a `Check`.

    from mmcli import Engine
    from mmcli.sdk import ScreenCheck

    @engine.function(pre_check=ScreenCheck())
    def click(x: int, y: int) -> None:
        pyautogui.click(x, y)

The capture grabs the screen (waiting for it to settle), fingerprints it like `mm record`
does (a grid of perceptual hashes, the patch around the tool's target, geometry) and
keeps the live frame in memory; only the fingerprint is stored. The compare runs the
CLI's matchers (`geometry`, `target`, and `grid`, since SDK documents keep no
thumbnails) with the chosen policy. Like `mm replay`, a pre-check keeps looking for up to
`timeout` seconds, so a replay waits for a slow app instead of racing it.
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
from PIL import Image

from mmcli.backends.base import Backend
from mmcli.screen.analysis import fingerprint_of
from mmcli.screen.fingerprint import Fingerprint, Frame, Rect
from mmcli.screen.matcher import Policy, References, Verdict, compare
from mmcli.sdk.check import Check
from mmcli.store.codec import fingerprint_doc, fingerprint_from_doc

Target = Callable[[Sequence[Any], Mapping[str, Any]], tuple[int, int] | None]

SETTLE_POLL = 0.05
"""Seconds between two grabs when waiting for the screen to stop changing."""
SETTLE_LIMIT = 1.0
"""Longest wait for a settled screen; after it the last grab is used."""
DEFAULT_TIMEOUT = 5.0
"""Seconds a screen pre-check keeps looking for a matching screen."""


@dataclass(frozen=True)
class ScreenSnapshot:
    """A screen as captured: its fingerprint and the downscaled screen (both stored),
    and, when live, the grabbed frame."""

    fingerprint: Fingerprint
    reference: np.ndarray | None = field(default=None, compare=False, repr=False)
    """The screen's luma downscaled by `SCALE` (`Frame.small`): lets the compare find
    exactly where the screen changed, as `mm replay` does with its thumbnails."""
    frame: Frame | None = field(default=None, compare=False, repr=False)


def snapshot_doc(snapshot: ScreenSnapshot) -> dict[str, Any]:
    """The stored form of a snapshot: the fingerprint and the reference as a PNG."""
    doc: dict[str, Any] = {"fingerprint": fingerprint_doc(snapshot.fingerprint)}
    if snapshot.reference is not None:
        out = io.BytesIO()
        Image.fromarray(snapshot.reference, "L").save(out, "PNG", optimize=False)
        doc["reference"] = base64.b64encode(out.getvalue()).decode("ascii")
    return doc


def snapshot_from_doc(doc: Any) -> ScreenSnapshot:
    if not isinstance(doc, dict):
        raise ValueError("a $screen must be a table")
    fingerprint = fingerprint_from_doc(doc["fingerprint"], "$screen.fingerprint")
    reference = None
    if "reference" in doc:
        try:
            data = base64.b64decode(str(doc["reference"]), validate=True)
            with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
                reference = np.asarray(image.convert("L"))
        except (binascii.Error, OSError, Image.DecompressionBombError) as e:
            raise ValueError(f"$screen.reference is not a PNG image ({e})") from None
    return ScreenSnapshot(fingerprint, reference)


def pointer_target(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[int, int] | None:
    """Where a pyautogui-style tool acts: `x`/`y` keywords, an `(x, y)` first argument,
    or the first two numbers among the positional arguments (skipping `self`); None for
    keyboard tools (`write(text)`, `press(key)`)."""
    if _number(kwargs.get("x")) and _number(kwargs.get("y")):
        return (int(kwargs["x"]), int(kwargs["y"]))
    numbers = []
    for value in args:
        if isinstance(value, tuple | list) and len(value) == 2 and all(map(_number, value)):
            return (int(value[0]), int(value[1]))
        if _number(value):
            numbers.append(int(value))
            if len(numbers) == 2:
                return (numbers[0], numbers[1])
        elif numbers:
            break
    return None


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def no_target(args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """For tools that do not act at a point: the whole screen is compared, no patch."""
    return None


class ScreenCheck(Check[..., ScreenSnapshot]):
    """A pre- or post-check that compares the live screen with the recorded one.

    - `target`: where the tool acts, from its arguments (default `pointer_target`); the
      patch around it is compared strictly, the rest of the screen by `policy`.
    - `policy`: `Policy.DEFAULT` (small tolerances, as `mm replay`), `STRICT` or `LOOSE`.
    - `ignore`: screen regions never compared (a clock, a spinner).
    - `timeout`/`interval`: how long and how often the engine looks for a match.
    - `keep_reference`: store the downscaled screen (a small PNG, a few KB to tens of
      KB a step) so that the compare sees exactly where the screen changed; without it
      only the fingerprint's grid is compared, which can miss a few changed characters.
    - `approach_pointer`: before comparing, put the pointer where it was when the step
      was recorded, so that a button hovered now (or then) is not taken for a change.
    - `backend`: the display to grab (default: the X11 backend, opened on first use).
    """

    def __init__(
        self,
        *,
        target: Target = pointer_target,
        policy: Policy | str = Policy.DEFAULT,
        ignore: Sequence[Rect] = (),
        timeout: float = DEFAULT_TIMEOUT,
        interval: float = 0.1,
        keep_reference: bool = True,
        approach_pointer: bool = True,
        backend: Backend | None = None,
    ) -> None:
        super().__init__(self._capture, self._compare, timeout=timeout, interval=interval)
        self.target = target
        self.policy = Policy(policy)
        self.ignore = tuple(ignore)
        self.keep_reference = keep_reference
        self.approach_pointer = approach_pointer
        self._backend = backend
        self._local = threading.local()
        self._opened: list[Backend] = []
        self._opened_lock = threading.Lock()
        self.last_verdict: Verdict | None = None
        """The verdict of the latest compare, to explain a miss."""

    def backend(self) -> Backend:
        """The display grabbed: the one given, or an X11 backend opened for this thread."""
        if self._backend is not None:
            return self._backend
        backend: Backend | None = getattr(self._local, "backend", None)
        if backend is None:
            backend = _open_x11()
            self._local.backend = backend
            with self._opened_lock:
                self._opened.append(backend)
        return backend

    def close(self) -> None:
        """Close the displays this check opened (it opens them again if used later)."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for backend in opened:
            backend.close()
        self._local = threading.local()

    def _capture(self, *args: Any, **kwargs: Any) -> ScreenSnapshot:
        backend = self.backend()
        frame = settled_frame(backend)
        fp = fingerprint_of(frame, self.target(args, kwargs), self.ignore, backend.pointer())
        return ScreenSnapshot(fp, frame.small if self.keep_reference else None, frame)

    def _compare(self, current: ScreenSnapshot, candidate: ScreenSnapshot) -> bool:
        if current.frame is None:
            raise ValueError("the current screen snapshot has no frame: capture it live")
        recorded = candidate.fingerprint
        references = References()
        if candidate.reference is not None:
            masks = [*recorded.masks, *self.ignore]
            references = References.prepare(candidate.reference, [], masks)
        verdict = compare(
            recorded,
            self._live_frame(current, recorded.pointer),
            self.policy,
            self.ignore,
            references=references,
            pointer_step=recorded.patch is not None,
        )
        self.last_verdict = verdict
        return verdict.ok

    def _live_frame(self, current: ScreenSnapshot, pointer: tuple[int, int] | None) -> Frame:
        """The live screen with the pointer where it was recorded: hover effects then
        compare like with like (`mm replay` does the same). Moves the pointer only when
        it is elsewhere, and grabs once per snapshot and position."""
        assert current.frame is not None
        if not self.approach_pointer or pointer is None or current.fingerprint.pointer == pointer:
            return current.frame
        cached = getattr(self._local, "approached", None)
        if cached is not None and cached[0] is current and cached[1] == pointer:
            frame: Frame = cached[2]
            return frame
        backend = self.backend()
        backend.move(*pointer)
        frame = settled_frame(backend)
        self._local.approached = (current, pointer, frame)
        return frame


def _open_x11() -> Backend:
    """The X11 backend; it leaves pyautogui's process-wide settings (PAUSE, FAILSAFE) as
    the user's program set them: the SDK shares the process with the user's own tools."""
    from mmcli.backends import open_backend

    return open_backend()


def settled_frame(backend: Backend, limit: float = SETTLE_LIMIT) -> Frame:
    """The screen once still (`Backend.settle`), or the latest after `limit`; the input
    that came before was given by the caller, just now."""
    return backend.settle(SETTLE_POLL, limit, since=time.monotonic()).frame
