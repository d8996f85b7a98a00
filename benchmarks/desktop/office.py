"""Office tasks of the kind public computer-use benchmarks score by their output file: a word
processor (capitalise a name, subscript a digit) and an image editor (mirror a picture,
export it under a name), each on an input file made here and checked by reading the file
the app saved, not the screen."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from benchmarks.desktop import odt
from benchmarks.desktop.apps import App, LibreOffice, Plan, Variant, _click, _write
from benchmarks.desktop.desktop import Geometry

# ----- a word processor: LibreOffice Writer on a letter ----------------------------------


@dataclass
class Writer(LibreOffice):
    """LibreOffice Writer on a flat ODT letter ("Order", "To: ", "Water: H2O"): click the
    "To:" line, End, type the name, select it (Ctrl+Shift+Left), Format > Text > UPPERCASE
    by the menus, click the "Water" line, End, Left, select the "2" (Shift+Left),
    subscript (Ctrl+Shift+B), save (Ctrl+S). The record is those two lines of the saved
    file, subscripted characters written `_{...}`.

    Prefill puts text after "To: " (the name typed then joins it); the error text is a red
    paragraph under the task; the other page is the letter headed "Delete"."""

    key: str = "writer"
    title: str = "^letter.fodt - LibreOffice Writer$"
    programs: tuple[str, ...] = ("lowriter", "wmctrl")
    native: frozenset[str] = frozenset({"prefill", "error", "other_page"})
    size: tuple[int, int] = (760, 520)

    @property
    def document(self) -> Path:
        return self.work / "letter.fodt"

    def write_document(self, variant: Variant) -> None:
        paragraphs: list[odt.Paragraph] = [
            ("Delete" if variant.other_page else "Order", "head"),
            (f"To: {variant.prefill}", ""),
            ("Water: H2O", ""),
        ]
        if variant.error:
            paragraphs.append(("Error: server unreachable", "error"))
        odt.write(self.document, paragraphs)

    def first_field(self) -> tuple[int, int]:
        return self.at(140, 234)  # right of "To:"

    def plan(self, value: str) -> Plan:
        return [
            _click(*self.first_field()),
            {"op": "press", "key": "End"},
            _write(value),
            {"op": "hotkey", "keys": ["ctrl", "shift", "Left"]},
            _click(*self.at(171, 9)),  # Format
            _click(*self.at(192, 29)),  # Text
            _click(*self.at(430, 283)),  # UPPERCASE
            _click(*self.at(200, 253)),  # right of "Water: H2O"
            {"op": "press", "key": "End"},
            {"op": "press", "key": "Left"},
            {"op": "hotkey", "keys": ["shift", "Left"]},
            {"op": "hotkey", "keys": ["ctrl", "shift", "b"]},
            {"op": "hotkey", "keys": ["ctrl", "s"]},
        ]

    def expected(self, value: str) -> str:
        return f"To: {value.upper()}|Water: H_{{2}}O"

    def result(self, exit_code: int) -> str | None:
        """The "To" and "Water" lines of the saved document; None when it was not saved."""
        lines = self.saved(exit_code, odt.paragraphs)
        if lines is None:
            return None
        return ("DELETE " if self._variant.other_page else "") + "|".join(lines[1:3])


# ----- an image editor: GIMP on a picture ------------------------------------------------

PICTURE_TIME = 1_767_607_200
"""The input picture's modification time (2026-01-05): the export dialog lists it, so it is
the same in every run."""

GIMPRC = "(single-window-mode yes)\n(show-tips no)\n(show-welcome-dialog no)\n"


def picture() -> np.ndarray:
    """A picture that differs from its mirror image and from its flip upside down (the
    menu item next to the task's): a red band at the left, a blue bar right of the middle
    and above it, on black."""
    img = np.zeros((120, 160, 3), np.uint8)
    img[:, :40] = (200, 40, 40)
    img[30:70, 60:150] = (30, 90, 200)
    return img


@dataclass
class Gimp(App):
    """GIMP 2.10 (GTK 2, in one window) on a PNG: Image > Transform > Flip Horizontally by
    the menus, File > Export As (Shift+Ctrl+E), the name typed over the selected file name,
    Return, Return (the PNG options' Export). The record is the exported file's name and
    whether its pixels are the input mirrored.

    A fresh profile (and GTK settings) per start: GIMP and the file chooser remember
    window sizes and folders."""

    key: str = "gimp"
    title: str = r"^\[photo\] \(imported\)"
    programs: tuple[str, ...] = ("gimp", "wmctrl")
    size: tuple[int, int] = (900, 560)

    @property
    def images(self) -> Path:
        return self.work / "images"

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        self.images.mkdir(parents=True, exist_ok=True)
        source = self.images / "photo.png"
        Image.fromarray(picture()).save(source)
        os.utime(source, (PICTURE_TIME, PICTURE_TIME))
        home = self.work / "gimp-home"
        shutil.rmtree(home, ignore_errors=True)
        (home / "gimp").mkdir(parents=True)
        (home / "gimp" / "gimprc").write_text(GIMPRC)
        env = dict(
            os.environ,
            GIMP2_DIRECTORY=str(home / "gimp"),
            XDG_CONFIG_HOME=str(home / "config"),
            XDG_DATA_HOME=str(home / "data"),
        )
        return subprocess.Popen(
            ["gimp", "--no-splash", str(source)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

    def placed(self, window: Geometry) -> tuple[int, int]:
        # The Image menu is 630 px tall: a window lower down (moved 60 px by a scenario)
        # would have GTK shift the menu up, and its items with it.
        x, y = super().placed(window)
        return (x, min(y, 60))

    def place(self) -> None:
        self.resize(self.size)  # GIMP opens at 1024x768, taller than the screen allows
        super().place()

    def reset_result(self) -> None:
        for exported in self.images.glob("*.png"):
            if exported.name != "photo.png":
                exported.unlink()

    def first_field(self) -> tuple[int, int]:
        return self.at(205, 13)  # the Image menu

    def plan(self, value: str) -> Plan:
        return [
            _click(*self.first_field()),
            _click(*self.at(240, 174)),  # Transform
            _click(*self.at(573, 174)),  # Flip Horizontally
            *self.export(value),
        ]

    def export(self, value: str) -> Plan:
        """File > Export As, the name typed over the selected one, Return, Return."""
        return [
            {"op": "hotkey", "keys": ["shift", "ctrl", "e"]},
            _write(value),
            {"op": "press", "key": "Return"},
            {"op": "press", "key": "Return"},
        ]

    def expected(self, value: str) -> str:
        return f"{value}.png mirrored"

    def judge_pixels(self, pixels: np.ndarray) -> str:
        """How the exported pixels relate to the input: "mirrored", "unchanged", "other"."""
        source = picture()
        return (
            "mirrored" if np.array_equal(pixels, source[:, ::-1])
            else "unchanged" if np.array_equal(pixels, source)
            else "other"
        )  # fmt: skip

    def result(self, exit_code: int) -> str | None:
        """The exported file and how its pixels relate to the input; None for no export."""
        deadline = time.monotonic() + (6.0 if exit_code == 0 else 2.0)
        while True:
            found = sorted(p for p in self.images.glob("*.png") if p.name != "photo.png")
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if not found:
            return None
        records = []
        for path in found:
            for _ in range(20):  # written in place: complete once it decodes
                try:
                    pixels = np.asarray(Image.open(path).convert("RGB"))
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                records.append(f"{path.name} unreadable")
                continue
            records.append(f"{path.name} {self.judge_pixels(pixels)}")
        return " + ".join(records)


@dataclass
class GimpFill(Gimp):
    """GIMP 2.10 on the same PNG: the Rectangle Select tool (its toolbox button), a
    selection dragged over part of the red band, Edit > Fill with FG Color (Ctrl+comma,
    black) at once after the drag, then exported as in `Gimp`. The record is the exported
    file's name and whether its pixels are the input with that part of the band black.

    A key right after a drag is what GIMP dropped when replay sent it too soon (issue:
    "replay never outruns the app")."""

    key: str = "gimp-fill"

    def first_field(self) -> tuple[int, int]:
        return self.at(45, 66)  # the Rectangle Select tool

    def plan(self, value: str) -> Plan:
        x0, y0 = self.at(*IMAGE_AT)
        left, top, right, bottom = FILLED
        drag = {"x": x0 + left, "y": y0 + top, "x2": x0 + right, "y2": y0 + bottom}
        return [
            _click(*self.first_field()),
            {"op": "drag", **drag},
            {"op": "hotkey", "keys": ["ctrl", "comma"]},
            *self.export(value),
        ]

    def expected(self, value: str) -> str:
        return f"{value}.png filled"

    def judge_pixels(self, pixels: np.ndarray) -> str:
        """ "filled" when the pixels are the input but a rectangle inside the red band,
        about the dragged one, turned black; "unchanged", or "other"."""
        source = picture()
        if pixels.shape != source.shape:
            return "other"
        changed = np.any(pixels != source, axis=2)
        if not changed.any():
            return "unchanged"
        ys, xs = np.nonzero(changed)
        box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        black = bool(np.all(pixels[changed] == 0))
        near = all(abs(a - b) <= 2 for a, b in zip(box, FILLED, strict=True))
        return "filled" if black and near and box[2] <= 40 else "other"


IMAGE_AT = (364, 243)
"""Where the picture's top-left pixel shows in GIMP's window at 900x560 (100 % zoom)."""
FILLED = (10, 10, 30, 110)
"""The selection dragged, in the picture's pixels: inside the 40 px red band."""
