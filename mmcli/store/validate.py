"""What a recording may ask for: checked in full when it is loaded, before anything is done.

A recording is a file anyone may have edited. Before replay acts on it (or `mm show`
draws it), every step must be something a real recording holds: actions on the recorded
screen, counts and lengths within the bounds below, and screen checks that still look at
the target. Anything else is refused as a whole, with one line naming the file and the
problem (`RecordingCorrupt`, exit 1), and nothing is done.

The bounds are documented in docs/safety.md; they are far above anything an agent records.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mmcli.errors import RecordingCorrupt
from mmcli.model import MAX_KEY_MS, ActionKind, Recording, Step
from mmcli.params import DIGEST, KEY

if TYPE_CHECKING:  # `mm ls` validates documents without numpy, PIL or the fingerprint code
    from mmcli.screen.fingerprint import Fingerprint, Rect

MAX_DOCUMENT = 64 << 20
"""Bytes of one recording file (a 10,000-step recording is about 35 MiB)."""
MAX_KEY_PARTS = 64
"""Parts of one dotted TOML key (`a.b.c` has 3). Python's TOML reader takes time
quadratic in this number: for a key of n parts it builds and looks up each of its n
prefixes (`tomllib._parser.key_value_rule`), so a 100,000-part key in a 200 KB file takes
minutes. Real recordings have keys of one part."""
MAX_STEPS = 20_000
MAX_SCREEN = 16_384
"""Largest screen side in pixels (X11 allows 32,767; no real screen comes near)."""
MAX_CLICKS = 10
"""Clicks of one click action (3 is a triple-click)."""
MAX_PRESSES = 1_000
"""Repeats of one key press."""
MAX_SCROLL = 10_000
"""Wheel steps of one scroll action, either way."""
MAX_TEXT = 100_000
"""Characters typed by one action."""
MAX_KEYS = 10
"""Keys of one press or hotkey (a chord)."""
MAX_KEY_NAME = 32
MAX_MASKS = 1_000
"""Masked regions of one step's screen check."""
MAX_MASKED = 0.5
"""Share of the screen one step's check may leave out (its masks, the recording's ignored
and volatile regions together): the rest, and the target, are always checked."""
MAX_TITLE = 1_000
"""Characters of the recorded window's title."""
MAX_NAMES = 1_000
"""Params (or secrets, or command words) of one recording."""

MAX_PATH = 4096
"""Characters of the folder the agent command runs in (Linux's PATH_MAX)."""
MAX_DIGESTS = 32
"""Digests of recorded values kept for one param (the latest)."""

_MASK_RASTER = 256
"""Masked shares are measured on a 256 x 256 raster of the screen, rounding outwards."""

# A dotted key of too many parts: bare or quoted parts joined by dots, where a key can
# start (a line, or after "[", "{" or ","). Linear: possessive and atomic, so nothing is
# tried twice (a plain pattern took a minute on a 1.5 MB file of long dotted words).
_DOTTED = re.compile(
    r"""(?:^|(?<=[\[{,]))[ \t]*+(?:(?>[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')[ \t]*+\.[ \t]*+)"""
    + f"{{{MAX_KEY_PARTS}}}",
    re.MULTILINE,
)


def check_text(text: str) -> None:
    """Refuse text the TOML reader would take unbounded time or memory on (`ValueError`)."""
    if len(text) > MAX_DOCUMENT:
        raise ValueError(f"larger than {MAX_DOCUMENT >> 20} MiB; not an mm recording")
    if text.count(".") >= MAX_KEY_PARTS and _DOTTED.search(text):
        raise ValueError(f"a dotted key of more than {MAX_KEY_PARTS} parts; not an mm recording")


def read_toml(text: str, source: str) -> dict[str, Any]:
    """The TOML table `text` holds, for every kind of document: `RecordingCorrupt` naming
    `source` when it is not TOML, or is TOML the reader would take unbounded time or
    memory on (`check_text`)."""
    try:
        check_text(text)
    except ValueError as e:
        raise RecordingCorrupt(f"{source}: {e}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RecordingCorrupt(f"{source}: not valid TOML ({e})") from None
    except RecursionError:
        raise RecordingCorrupt(f"{source}: not valid TOML (nested too deeply)") from None


Document = dict[str, Any]


def upgraded(
    doc: Document,
    source: str,
    current: int,
    upgrades: Mapping[int, Callable[[Document], Document]] | None = None,
) -> Document:
    """`doc` at format version `current`, for every kind of document: an older one turned
    into the next version by `upgrades[n]` until it is current; a newer one, or one with
    no integer version, refused (`RecordingCorrupt` naming `source`)."""
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RecordingCorrupt(f"{source}: no integer format_version; not an mm document")
    if version > current:
        raise RecordingCorrupt(
            f"{source}: format_version {version} is newer than this mm understands "
            f"({current}); upgrade mm to use it"
        )
    while version < current:
        if upgrades is None or version not in upgrades:
            raise RecordingCorrupt(f"{source}: format_version {version} is not supported")
        doc = upgrades[version](doc)
        version = doc["format_version"]
    return doc


def _check_cwd(cwd: str) -> None:
    if not cwd.startswith("/") or "\0" in cwd or len(cwd) > MAX_PATH:
        raise ValueError(f"cwd must be an absolute path of at most {MAX_PATH} characters")


def _check_digests(rec: Recording) -> None:
    if len(rec.param_digests) > MAX_NAMES:
        raise ValueError(f"param_digests: more than {MAX_NAMES} params")
    for key, digests in rec.param_digests.items():
        if not KEY.fullmatch(key) or key not in rec.params or key in rec.secrets:
            raise ValueError(f"param_digests: {key[:40]!r} is not a param of the recording")
        if len(digests) > MAX_DIGESTS or not all(DIGEST.fullmatch(d) for d in digests):
            raise ValueError(
                f"param_digests.{key[:40]} must be at most {MAX_DIGESTS} digests like 10:<16 hex>"
            )


def check_recording(rec: Recording) -> None:
    """Refuse a recording that asks for anything a real one does not (`ValueError`)."""
    if len(rec.steps) > MAX_STEPS:
        raise ValueError(f"{len(rec.steps)} steps (at most {MAX_STEPS})")
    for what, names in (("params", rec.params), ("secrets", rec.secrets)):
        _check_names(what, names)
    if len(rec.command) > MAX_NAMES or any("\0" in word for word in rec.command):
        raise ValueError("command must be at most 1000 words without NUL characters")
    if rec.cwd is not None:
        _check_cwd(rec.cwd)
    _check_digests(rec)
    if rec.window_title is not None and (
        len(rec.window_title) > MAX_TITLE or "\0" in rec.window_title
    ):
        raise ValueError(f"window_title must be a title of at most {MAX_TITLE} characters")
    for what, rects in (("ignore", rec.ignore), ("volatile", rec.volatile)):
        for r in rects:
            _check_rect(r, what)
    if rec.area is not None:
        _check_rect(rec.area, "area")
    everywhere = [*rec.ignore, *rec.volatile]
    shares: dict[tuple[int, int, tuple[Rect, ...]], float] = {}
    for index, step in enumerate(rec.steps):
        where = f"steps[{index}] (id {step.id})"
        _check_step(step, where)
        fp = step.fingerprint
        key = (fp.width, fp.height, fp.masks)
        if key not in shares:
            shares[key] = masked_share(fp.width, fp.height, [*fp.masks, *everywhere])
        if shares[key] > MAX_MASKED:
            raise ValueError(
                f"{where}: masks leave out {shares[key]:.0%} of the screen "
                f"(at most {MAX_MASKED:.0%}); the screen would not be checked"
            )


def _check_names(what: str, names: list[str]) -> None:
    if len(names) > MAX_NAMES:
        raise ValueError(f"{what}: {len(names)} names (at most {MAX_NAMES})")
    for name in names:
        if not KEY.fullmatch(name) or len(name) > 100:
            raise ValueError(f"{what}: {name[:40]!r} is not a param name (A-Z, a-z, 0-9, _)")


def _check_step(step: Step, where: str) -> None:
    fp = step.fingerprint
    _check_screen(fp, f"{where}.screen")
    if step.outcome is not None:
        end = step.outcome.fingerprint
        _check_screen(end, f"{where}.outcome.screen")
        if (end.width, end.height) != (fp.width, fp.height):
            raise ValueError(f"{where}.outcome.screen: not the size of the step's screen")
        if masked_share(end.width, end.height, list(end.masks)) > MAX_MASKED:
            raise ValueError(
                f"{where}.outcome.screen: masks leave out more than {MAX_MASKED:.0%} of the "
                "screen; the outcome would not be checked"
            )
    a = step.action
    on_screen = (fp.width, fp.height)
    for name in ("x", "y", "x2", "y2"):
        value = getattr(a, name)
        if value is not None:
            _check_on_screen(value, on_screen[name.startswith("y")], f"{where}.action.{name}")
    if a.kind in (ActionKind.CLICK, ActionKind.MOVE, ActionKind.DRAG) and a.point is None:
        raise ValueError(f"{where}.action: a {a.kind} needs x and y")
    if a.kind is ActionKind.DRAG and (a.x2 is None or a.y2 is None):
        raise ValueError(f"{where}.action: a drag needs x2 and y2")
    top = MAX_PRESSES if a.kind is ActionKind.PRESS else MAX_CLICKS
    if not 1 <= a.clicks <= top:
        raise ValueError(f"{where}.action.clicks must be 1 to {top} (is {a.clicks})")
    if abs(a.amount) > MAX_SCROLL:
        raise ValueError(f"{where}.action.amount must be within ±{MAX_SCROLL} (is {a.amount})")
    if a.key_ms is not None and not 0 <= a.key_ms <= MAX_KEY_MS:
        raise ValueError(f"{where}.action.key_ms must be 0 to {MAX_KEY_MS} (is {a.key_ms})")
    if len(a.text) > MAX_TEXT:
        raise ValueError(f"{where}.action.text: {len(a.text)} characters (at most {MAX_TEXT})")
    if len(a.keys) > MAX_KEYS or any(not 0 < len(k) <= MAX_KEY_NAME for k in a.keys):
        raise ValueError(
            f"{where}.action.keys: at most {MAX_KEYS} keys of 1 to {MAX_KEY_NAME} characters"
        )
    if a.kind in (ActionKind.PRESS, ActionKind.HOTKEY) and not a.keys:
        raise ValueError(f"{where}.action: a {a.kind} needs keys")
    if a.point is not None and fp.patch is None:
        # The patch is what checks the target itself (whatever the masks say): a pointer
        # step without one would act on whatever is there now.
        raise ValueError(f"{where}.screen: a pointer step needs its target patch")
    if step.effect is not None:
        _check_rect(step.effect, f"{where}.effect")
    if step.window is not None:
        _check_rect(step.window.rect, f"{where}.window.rect")
    for i, over in enumerate(step.above):
        _check_rect(over.frame, f"{where}.above[{i}].rect")
    for i, own in enumerate(step.own):
        _check_rect(own.frame, f"{where}.own[{i}].rect")
    for i, title in enumerate(step.titles):
        _check_rect(title.rect, f"{where}.titles[{i}].rect")
    if step.outcome is not None:
        for i, title in enumerate(step.outcome.titles):
            _check_rect(title.rect, f"{where}.outcome.titles[{i}].rect")
        if step.outcome.under is not None:
            _check_rect(step.outcome.under.rect, f"{where}.outcome.under.rect")
        for i, bare in enumerate(step.outcome.vacated):
            _check_rect(bare, f"{where}.outcome.vacated[{i}]")
            if not (bare.w and bare.h):
                raise ValueError(f"{where}.outcome.vacated[{i}]: an empty region")
    if step.landed is not None:
        if a.kind is not ActionKind.TYPE:
            raise ValueError(f"{where}.landed: only a typing step reads its field back")
        if step.landed.box is not None:
            _check_rect(step.landed.box, f"{where}.landed.box")


def _check_screen(fp: Fingerprint, where: str) -> None:
    if not (1 <= fp.width <= MAX_SCREEN and 1 <= fp.height <= MAX_SCREEN):
        raise ValueError(
            f"{where}.size {fp.width}x{fp.height} is no screen (1 to {MAX_SCREEN} px a side)"
        )
    if fp.patch is not None:
        _check_on_screen(fp.patch.x, fp.width, f"{where}.target")
        _check_on_screen(fp.patch.y, fp.height, f"{where}.target")
    if fp.pointer is not None:
        _check_on_screen(fp.pointer[0], fp.width, f"{where}.pointer")
        _check_on_screen(fp.pointer[1], fp.height, f"{where}.pointer")
    if len(fp.masks) > MAX_MASKS:
        raise ValueError(f"{where}.masks: {len(fp.masks)} regions (at most {MAX_MASKS})")
    for r in fp.masks:
        _check_rect(r, f"{where}.masks")


def _check_on_screen(value: int, side: int, where: str) -> None:
    if not 0 <= value < side:
        raise ValueError(f"{where} is off the recorded screen ({value}, screen side {side})")


def _check_rect(r: Rect, where: str) -> None:
    if r.w < 0 or r.h < 0 or not all(abs(v) <= 2 * MAX_SCREEN for v in (r.x, r.y, r.w, r.h)):
        raise ValueError(f"{where}: [{r.x}, {r.y}, {r.w}, {r.h}] is no screen region")


def masked_share(width: int, height: int, rects: Iterable[Rect]) -> float:
    """The share of a `width` x `height` screen covered by `rects` (rounded outwards on a
    coarse raster: a little more than the exact share, never less)."""
    clipped = [
        (max(r.x, 0), max(r.y, 0), min(r.right, width), min(r.bottom, height)) for r in rects
    ]
    clipped = [c for c in clipped if c[0] < c[2] and c[1] < c[3]]
    if not clipped:
        return 0.0
    import numpy as np

    n = _MASK_RASTER
    raster = np.zeros((n, n), dtype=bool)
    for x0, y0, x1, y1 in clipped:
        raster[y0 * n // height : -(-y1 * n // height), x0 * n // width : -(-x1 * n // width)] = 1
    return float(raster.mean())
