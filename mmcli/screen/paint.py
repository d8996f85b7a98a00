"""Painting over what may show a secret in a kept screen: thumbnails of screen
recordings, screenshots of model-API ones, a divergence's live screen.

What is painted in a thumbnail is masked in its fingerprint too (`fingerprint.blank`
blanks the same downscaled pixels), so replay compares like with like; the core of a
step's click target is never painted, as its checks must see it.
"""

from __future__ import annotations

import io

from mmcli.screen.fingerprint import PATCH_SIZE, SCALE, Frame, Patch, Rect

TEXT_GROW = 160
"""A param-typed field may show longer text at replay: its mask extends this far right."""
TEXT_GROW_LEFT = 80
"""... and this far left, where a right-aligned field (a calculator's display, a number in
a spreadsheet cell) grows: about ten more digits."""


def text_mask(rect: Rect, reach: tuple[int, int] | None = None) -> Rect:
    """Where typed text shows (`rect`) and may show at replay: a param's value there may
    be longer. `reach`: how far its field's blank ground runs left and right of it
    (`analysis.ground_reach`, at most `TEXT_GROW_LEFT` and `TEXT_GROW`), where the mask
    then stops: never over a neighbouring field. Without it, those maxima."""
    left, right = reach if reach is not None else (TEXT_GROW_LEFT, TEXT_GROW)
    left = min(left, rect.x)
    return Rect(rect.x - left, rect.y, rect.w + left + right, rect.h).grow(2)


def paintable(regions: list[Rect], patch: Patch | None) -> list[Rect]:
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

CROP_MARGIN = 16
"""Screen pixels of context kept around the task area where it is cut out of a screen."""


def area_png(frame: Frame, box: Rect, regions: list[Rect]) -> bytes:
    """`box` of `frame` at the screen's own resolution, with `regions` (screen pixels)
    painted over."""
    from PIL import Image, ImageDraw

    image = Image.frombuffer("RGB", (frame.width, frame.height), frame.raw, "raw", "BGRX", 0, 1)
    crop = image.crop((box.x, box.y, box.right, box.bottom))
    draw = ImageDraw.Draw(crop)
    for r in regions:
        part = r.intersection(box)
        if part is not None:
            x, y = part.x - box.x, part.y - box.y
            draw.rectangle([x, y, x + part.w - 1, y + part.h - 1], fill=PAINT)
    buf = io.BytesIO()
    crop.save(buf, format="PNG")
    return buf.getvalue()
