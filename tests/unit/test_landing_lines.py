"""Where a recording reads typed text back, in an editor whose status bar tells the caret
("Ln 2, Col 6", Wine's notepad) or that the text changed: the typing changed its own
line and the status bar, so the box around all it changed spans the page between them.
The field is read on the line the text shows on alone, by real OCR of drawn pixels, not
over the page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from mmcli.backends import FakeBackend
from mmcli.backends.base import Backend
from mmcli.capture.landing import ONE_LINE, read_back
from mmcli.capture.steps import Capture
from mmcli.model import Action, ActionKind
from mmcli.readback.field import FieldText, NotRead
from mmcli.screen.analysis import patch_of
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import WindowRef

PAGE = Rect(230, 140, 760, 505)
STATUS = Rect(230, 648, 760, 20)
CLICK = (431, 242)
"""Below the text: the caret went to the end of the first line."""


class PixelsBackend(FakeBackend):
    """The fake display, reading fields by OCR of their pixels as a desktop without an
    accessibility tree does."""

    def read_field(
        self, box: Rect | None, frame: Frame | None = None, prefer: str = ""
    ) -> FieldText | NotRead:
        return Backend.read_field(self, box, frame, prefer)


def notepad(lines: list[str], modified: bool) -> Frame:
    font = ImageFont.truetype("DejaVuSans.ttf", 13)
    img = Image.new("RGB", (1280, 800), "#2f6f8f")
    draw = ImageDraw.Draw(img)
    draw.rectangle((226, 100, 996, 672), fill="#e8e8e8")
    draw.rectangle((PAGE.x, PAGE.y, PAGE.right, PAGE.bottom), fill="white", outline="#808080")
    for i, line in enumerate(lines):
        draw.text((PAGE.x + 6, PAGE.y + 4 + 16 * i), line, fill="black", font=font)
    if modified:  # a mark OCR reads as no text
        draw.rectangle((STATUS.x + 60, STATUS.y + 6, STATUS.x + 66, STATUS.y + 12), fill="#606060")
    return Frame.from_image(img)


def test_a_line_typed_under_another_is_read_on_its_line_not_over_the_page() -> None:
    before = notepad(["Ada", ""], modified=False)
    after = notepad(["Ada", "Paris"], modified=True)
    typing = Capture(
        Action(ActionKind.TYPE, text="Paris"), before.small, patch_of(before, *CLICK), CLICK,
        (1280, 800), datetime(2026, 11, 1, tzinfo=UTC),
        window=WindowRef("notepad.exe.Wine", Rect(226, 100, 770, 572)),
    )  # fmt: skip
    read_back(PixelsBackend(before.thumbnail()), [typing], after, None)
    box = typing.field_box
    assert isinstance(typing.read, FieldText) and typing.read.text.strip() == "Paris"
    assert box is not None and box.h <= ONE_LINE, box
    paris_line = Rect(PAGE.x, PAGE.y + 20, PAGE.w, 16)
    assert box.intersects(paris_line) and not box.intersects(STATUS), box


FIXTURES = Path(__file__).parent.parent / "fixtures"
INPUT_LINE = Rect(228, 96, 412, 22)
"""Calc's input line in the fixture (its left end and rows): the icons it swaps while a
cell is edited (fx, then a cross and a tick for Sum and =) stand left of it."""


def test_a_line_that_runs_over_a_field_s_border_is_read_in_the_field() -> None:
    """Calc, "Anna" typed into A1 (the screens of a real recording, the top-left 640x180):
    the text shows in the cell, and in the input line beside the icons Calc swapped as the
    cell's editor opened, one changed line across the input line's border. Widened from
    the icons' ground, that line read "tx X Y | Anna" in a box that ended after "Anna",
    and every replay of a longer value read it cut short ("tx X SY Hann")."""
    small = np.asarray(Image.open(FIXTURES / "calc-input-line-before-small.png"))
    after = Frame.from_image(Image.open(FIXTURES / "calc-input-line-typed.png"))
    typing = Capture(
        Action(ActionKind.TYPE, text="Anna"), small, None, (5, 5), (640, 180),
        datetime(2026, 12, 2, tzinfo=UTC),
        window=WindowRef("libreoffice.libreoffice-calc", Rect(0, 19, 640, 161)),
    )  # fmt: skip
    read_back(PixelsBackend(Image.new("RGB", (640, 180))), [typing], after, None)
    box = typing.field_box
    assert isinstance(typing.read, FieldText) and typing.read.text.strip() == "Anna"
    assert box is not None and box.h <= ONE_LINE, box
    if box.intersects(INPUT_LINE):  # the input line, whole, not the icons beside it
        assert box.x >= INPUT_LINE.x and box.right >= INPUT_LINE.right - 8, box
