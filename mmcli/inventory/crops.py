"""A divergence as people compare it: the task area of a kept screen cut out at the
screen's own size, with the regions that differed outlined.

Only ever drawn from the stored thumbnails, which were painted where a secret may show
before they were written: nothing here reads a screen. They are kept at a quarter of the
screen's size (`SCALE`), so a crop shows each of their pixels as a SCALE x SCALE block: one
pixel of the crop is one pixel of the screen, and a region's outline sits where the
region was on the screen.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mmcli.screen.fingerprint import SCALE, Rect
from mmcli.screen.paint import CROP_MARGIN

if TYPE_CHECKING:
    from PIL import Image

MARGIN = CROP_MARGIN
"""Screen pixels of context kept around the task area (as replay keeps it)."""
OUTLINE = (255, 0, 255)
"""The colour a region that differed is outlined in (magenta: rare in an app's own UI)."""
OUTLINE_WIDTH = 3


def screen_of(png: bytes) -> Rect:
    """The screen a thumbnail was taken of (its size times SCALE), at the origin."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        width, height = image.size
    return Rect(0, 0, width * SCALE, height * SCALE)


def crop_box(area: Rect | None, screen: Rect, margin: int = MARGIN) -> Rect:
    """What a crop shows: the task area grown by `margin`, within the screen (the whole
    screen when there is no task area, or it lies off the screen)."""
    if area is None:
        return screen
    return area.grow(margin).intersection(screen) or screen


def area_crop(png: bytes, box: Rect) -> Image.Image:
    """`box` (screen pixels) of a thumbnail, at the screen's size: `box.w` x `box.h`."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        thumb = image.convert("RGB")
    x0, y0 = box.x // SCALE, box.y // SCALE
    x1, y1 = -(-box.right // SCALE), -(-box.bottom // SCALE)
    cells = thumb.crop((x0, y0, x1, y1))  # past the thumbnail's edge: black
    big = cells.resize(((x1 - x0) * SCALE, (y1 - y0) * SCALE), Image.Resampling.NEAREST)
    left, top = box.x - x0 * SCALE, box.y - y0 * SCALE
    return big.crop((left, top, left + box.w, top + box.h))


def full_crop(png: bytes, box: Rect) -> Image.Image | None:
    """A live task area kept at the screen's own resolution (`box`, screen pixels), or
    None when the file is not a picture of exactly that size."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(png)) as image:
            if image.size != (box.w, box.h):
                return None
            return image.convert("RGB")
    except (OSError, ValueError):
        return None


def outlined(image: Image.Image, regions: Sequence[Rect], box: Rect) -> int:
    """Draw each region (screen pixels) that meets `box` as a rectangle just outside its
    edges, on `image` (the crop of `box`); returns how many were drawn."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(image)
    drawn = 0
    for region in regions:
        if region.intersection(box) is None:
            continue
        ring = region.grow(OUTLINE_WIDTH)
        x0, y0 = ring.x - box.x, ring.y - box.y
        draw.rectangle(
            [x0, y0, x0 + ring.w - 1, y0 + ring.h - 1], outline=OUTLINE, width=OUTLINE_WIDTH
        )
        drawn += 1
    return drawn


def png_of(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()
