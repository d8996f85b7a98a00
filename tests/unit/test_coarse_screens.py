"""Screens of a model-API run with secrets, kept and judged with no text legible
(`llm.screens.coarse`): a caret blinking in a field is no difference (its bar blurred
into a block changed the block's colour with the phase), a dialog still is."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from mmcli.llm.conversation import LiveImage
from mmcli.llm.screens import frame_of, judge, screen_of
from mmcli.screen.carets import without_bars
from mmcli.screen.matcher import Policy

FIELD = (240, 160, 520, 190)
CARET_X = 274
"""Clear of the text, 2 px wide as Tk draws a caret (`insertwidth`)."""
TOUCHING_X = 266
"""Right after the text's last glyph, 1 px from it: where a caret stands after typing."""


def form(
    caret: int | None = None, dialog: bool = False, box: bool = False, error: bool = False
) -> Image.Image:
    image = Image.new("RGB", (800, 500), "#ececec")
    draw = ImageDraw.Draw(image)
    draw.text((60, 168), "Name", fill="black")
    draw.rectangle(FIELD, fill="white", outline="#7a7a7a")
    draw.text((248, 168), "Ada", fill="black")
    if caret is not None:
        draw.rectangle([caret, 164, caret + 1, 185], fill="black")
    if error:  # a short error label beside the field
        draw.text((530, 168), "Invalid!", fill="#c00000")
    if box:  # a small square, not a bar: a checkbox ticked, an icon
        draw.rectangle([CARET_X - 4, 168, CARET_X + 4, 182], fill="black")
    if dialog:
        draw.rectangle([200, 120, 600, 330], fill="white", outline="black", width=2)
        draw.text((220, 140), "Session expired", fill="black")
    return image


def shot(image: Image.Image) -> LiveImage:
    out = io.BytesIO()
    image.save(out, "PNG")
    return LiveImage(base64.b64encode(out.getvalue()).decode("ascii"), "image/png")


def kept(image: Image.Image) -> object:
    frame = frame_of(shot(image))
    assert frame is not None
    return screen_of(frame, None, "s", illegible=True)


@pytest.mark.parametrize("x", [CARET_X, TOUCHING_X])
def test_a_caret_in_its_other_blink_phase_is_no_difference(x: int) -> None:
    for recorded, live in ((None, x), (x, None)):
        verdict = judge(kept(form(caret=recorded)), shot(form(caret=live)), Policy.DEFAULT)  # type: ignore[arg-type]
        assert verdict is not None and verdict.ok, verdict


def test_a_dialog_a_small_square_or_an_error_label_is_still_a_difference() -> None:
    screen = kept(form(caret=CARET_X))
    for live in (form(dialog=True), form(box=True), form(caret=CARET_X, error=True)):
        verdict = judge(screen, shot(live), Policy.DEFAULT)  # type: ignore[arg-type]
        assert verdict is not None and not verdict.ok


def test_only_bars_are_painted_over() -> None:
    plain, with_caret = np.asarray(form()).astype(int), np.asarray(form(caret=CARET_X))
    assert (without_bars(with_caret)[:, CARET_X] != with_caret[:, CARET_X]).any()
    erased = without_bars(with_caret).astype(int)
    assert np.abs(erased[160:191, CARET_X] - plain[160:191, CARET_X]).max() <= 2
    squared = np.asarray(form(box=True))
    assert (without_bars(squared)[168:183, CARET_X - 4 : CARET_X + 5] == 0).all()
