"""Screenshots in requests, judged as screens with the replay check.

What a recording keeps of a screenshot is what `mm record` keeps of a screen: its
fingerprint (with the patch around the answer's click target, when the answer clicks)
and a thumbnail downscaled by `SCALE`; never the image itself. Regions that may show a
secret are painted in the thumbnail and masked in the fingerprint (`leaks.shown_regions`).
"""

from __future__ import annotations

import copy
import hashlib
import io
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from mmcli.llm.conversation import LiveImage
from mmcli.screen.analysis import fingerprint_of
from mmcli.screen.carets import without_bars
from mmcli.screen.fingerprint import SCALE, Fingerprint, Frame, Rect
from mmcli.screen.matcher import Policy, References, Verdict, compare
from mmcli.screen.paint import blank_png, paintable

MAX_PIXELS = 8192 * 8192
FORMATS = ["PNG", "JPEG", "WEBP", "GIF"]
ILLEGIBLE = 4
"""A screenshot of a run with secrets is kept at this many times less than a thumbnail's
resolution (a sixteenth of the screen's): no text can be read there, a dialog or a page
still can (`coarse`)."""


def coarse(small: np.ndarray) -> np.ndarray:
    """A downscaled screen (luma, or RGB) with no text legible: each `ILLEGIBLE` square of
    pixels one colour, at the same size."""
    h, w = small.shape[:2]
    image = Image.fromarray(small)
    blocks = image.reduce(ILLEGIBLE) if min(h, w) >= ILLEGIBLE else image
    return np.asarray(blocks.resize((w, h), Image.Resampling.NEAREST))


@dataclass
class Screen:
    """A recorded screenshot: fingerprint, thumbnail file and the reference it gives."""

    fingerprint: Fingerprint
    thumbnail: str
    reference: np.ndarray | None = field(default=None, repr=False)
    png: bytes | None = field(default=None, repr=False)
    """The thumbnail's bytes, until written beside the document."""
    digest: str = ""
    """SHA-256 of the screenshot's bytes: the very same image needs no decoding."""
    coarse: bool = False
    """Kept with no text legible (a run with secrets: `coarse`); judged so."""


def digest_of(image: LiveImage) -> str:
    if "digest" not in image.decoded:
        image.decoded["digest"] = hashlib.sha256(image.data.encode("ascii", "replace")).hexdigest()
    return str(image.decoded["digest"])


class ImageFrame(Frame):
    """A `Frame` of a decoded screenshot, without the copy to a BGRA buffer a grab has:
    the downscaled luma straight from the image (the same weights `Frame` applies to a
    grab's bytes), the full pixels only if a matcher asks for them (the target patch)."""

    def __init__(self, image: Image.Image) -> None:
        self.width, self.height = image.size
        self.raw = b""
        self.image = image
        self._pixels: np.ndarray | None = None
        luma = image.convert("L", matrix=(0.114, 0.587, 0.299, 0.0))
        self.small = np.asarray(luma.reduce(SCALE))

    @property
    def pixels(self) -> np.ndarray:
        if self._pixels is None:
            self._pixels = np.asarray(self.image)[..., ::-1]  # BGR, as a grab's bytes
        return self._pixels

    def thumbnail(self) -> Image.Image:
        return self.image.reduce(SCALE)


def frame_of(image: LiveImage) -> Frame | None:
    """The screenshot as a `Frame` (None if it is not a readable image)."""
    if "frame" in image.decoded:
        cached: Frame | None = image.decoded["frame"]
        return cached
    frame: Frame | None = None
    try:
        with Image.open(io.BytesIO(image.raw), formats=FORMATS) as picture:
            if picture.width * picture.height <= MAX_PIXELS:
                picture.load()
                frame = ImageFrame(picture if picture.mode == "RGB" else picture.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError, SyntaxError):
        frame = None
    image.decoded["frame"] = frame
    return frame


def screen_of(
    frame: Frame,
    target: tuple[int, int] | None,
    name: str,
    digest: str = "",
    paint: list[Rect] | None = None,
    illegible: bool = False,
) -> Screen:
    """What is kept of a screenshot. `paint`: regions that may show a secret, painted in
    the thumbnail and masked in the fingerprint (the core of the click target aside, as
    in a screen recording), before anything is stored. `illegible` (a run with secrets:
    a secret the agent's screen shows, never typed, cannot be told apart): the thumbnail
    kept with no text legible (`coarse`), and judged so."""
    if target is not None and not (0 <= target[0] < frame.width and 0 <= target[1] < frame.height):
        target = None
    fingerprint = fingerprint_of(frame, target)
    thumbnail = frame.thumbnail()
    if illegible:  # blocks first, then the paint on whole blocks: no paint blended in
        thumbnail = _without_bars(frame).reduce(SCALE)
        thumbnail = Image.fromarray(coarse(np.asarray(thumbnail.convert("RGB"))))
        paint = [_on_blocks(r) for r in paint or ()]
    out = io.BytesIO()
    thumbnail.save(out, "PNG", optimize=False)
    png = out.getvalue()
    if paint:
        masks = paintable(paint, fingerprint.patch)
        fingerprint = fingerprint_of(frame, target, masks)
        png = blank_png(png, masks)
    thumb = Image.open(io.BytesIO(png))
    reference = Frame.small_from_thumbnail(thumb)
    return Screen(fingerprint, name, reference, png, digest, coarse=illegible)


def _without_bars(frame: Frame) -> Image.Image:
    """The screen with its caret-like bars painted over (`carets.without_bars`): a caret
    blurred into a coarse block changes its colour with the blink phase."""
    rgb = np.ascontiguousarray(frame.pixels[..., 2::-1])
    return Image.fromarray(without_bars(rgb))


def _on_blocks(r: Rect) -> Rect:
    """`r` grown to whole blocks of a coarse thumbnail (`ILLEGIBLE` of its pixels)."""
    step = SCALE * ILLEGIBLE
    x0, y0 = r.x // step * step, r.y // step * step
    x1, y1 = -(-r.right // step) * step, -(-r.bottom // step) * step
    return Rect(x0, y0, x1 - x0, y1 - y0)


def judge(screen: Screen, image: LiveImage, policy: Policy) -> Verdict | None:
    """The replay check of `image` against `screen`; None when the image is unreadable."""
    if screen.digest and digest_of(image) == screen.digest:
        return Verdict(())
    frame = frame_of(image)
    if frame is None:
        return None
    if screen.coarse:  # compared as it was kept: no text legible on either side
        frame = copy.copy(frame)
        frame.small = coarse(ImageFrame(_without_bars(frame)).small)
    fp = screen.fingerprint
    references = References.prepare(screen.reference, [], fp.masks)
    return compare(fp, frame, policy, references=references)


def read_thumbnail(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
        if image.width * image.height > MAX_PIXELS:
            raise ValueError("thumbnail too large")
        return Frame.small_from_thumbnail(image)


def describe(marker: dict[str, Any]) -> str:
    return str(marker.get("$screen", "screenshot"))
