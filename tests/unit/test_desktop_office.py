"""The office tasks' checkers: the flat ODT the word processor's task starts from, the
record read back from what it saved, and the image editor's exported picture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from benchmarks.desktop import odt
from benchmarks.desktop.apps import Variant
from benchmarks.desktop.office import Gimp, Writer, picture

SAVED = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:officeooo="http://openoffice.org/2009/office">
<office:automatic-styles>
  <style:style style:name="T1" style:family="text">
   <style:text-properties officeooo:rsid="000d6093"/>
  </style:style>
  <style:style style:name="T2" style:family="text">
   <style:text-properties style:text-position="sub 58%"/>
  </style:style>
  <style:style style:name="T3" style:family="text">
   <style:text-properties style:text-position="super 58%"/>
  </style:style>
</office:automatic-styles>
<office:body>
  <office:text>
   <text:sequence-decls>
    <text:sequence-decl text:display-outline-level="0" text:name="Text"/>
   </text:sequence-decls>
   <text:p text:style-name="P1">Order</text:p>
   <text:p text:style-name="Standard">To: <text:span text:style-name="T1">ADA</text:span></text:p>
   <text:p text:style-name="Standard">Water: H<text:span text:style-name="T2">2</text:span>O\
</text:p>
   <text:p>a<text:s text:c="2"/>b<text:span text:style-name="T3">3</text:span></text:p>
  </office:text>
 </office:body></office:document>
"""
"""What LibreOffice Writer 7.4 saved after the task (trimmed): the name in a span of its
own, the subscripted "2" in a span whose style lowers it."""


def test_a_saved_letter_reads_as_text_with_its_subscripts(tmp_path: Path) -> None:
    path = tmp_path / "letter.fodt"
    path.write_text(SAVED)
    # a superscript is not a subscript; runs of spaces are spaces
    assert odt.paragraphs(path) == ["Order", "To: ADA", "Water: H_{2}O", "a  b3"]


def test_written_paragraphs_read_back(tmp_path: Path) -> None:
    path = tmp_path / "letter.fodt"
    odt.write(path, [("Order", "head"), ("To: A&B <x>", ""), ("", "")])
    assert odt.paragraphs(path) == ["Order", "To: A&B <x>", ""]


def writer_record(tmp_path: Path, variant: Variant, body: str) -> str | None:
    app = Writer(None, tmp_path)  # type: ignore[arg-type]  # reading a file needs no desktop
    app._variant = variant
    app._written = b"as written"
    app.document.write_text(SAVED.replace("To: <text:span", body + "<text:span"))
    return app.result(exit_code=0)


def test_the_writer_record_is_the_two_lines_the_task_changes(tmp_path: Path) -> None:
    app = Writer(None, tmp_path)  # type: ignore[arg-type]
    assert writer_record(tmp_path, Variant(), "To: ") == app.expected("Ada")
    assert writer_record(tmp_path, Variant(), "To: MALLORY") == "To: MALLORYADA|Water: H_{2}O"
    assert writer_record(tmp_path, Variant(other_page=True), "To: ").startswith("DELETE ")


def test_a_letter_not_saved_is_no_record(tmp_path: Path) -> None:
    app = Writer(None, tmp_path)  # type: ignore[arg-type]
    app.write_document(Variant())
    app._written = app.document.read_bytes()
    assert app.result(exit_code=3) is None


def exported(tmp_path: Path, pixels: dict[str, np.ndarray]) -> str | None:
    app = Gimp(None, tmp_path)  # type: ignore[arg-type]
    app.images.mkdir(parents=True)
    Image.fromarray(picture()).save(app.images / "photo.png")
    for name, image in pixels.items():
        Image.fromarray(image).save(app.images / name)
    return app.result(exit_code=3)


def test_the_gimp_record_is_the_exported_file_and_how_it_relates_to_the_input(
    tmp_path: Path,
) -> None:
    app = Gimp(None, tmp_path)  # type: ignore[arg-type]
    assert exported(tmp_path / "a", {"Ada.png": picture()[:, ::-1]}) == app.expected("Ada")
    assert exported(tmp_path / "b", {"Ada.png": picture()}) == "Ada.png unchanged"
    # the flip next to the task's in the menu cannot pass for it
    assert exported(tmp_path / "c", {"Ada.png": picture()[::-1]}) == "Ada.png other"
    two = exported(tmp_path / "d", {"Ada.png": picture()[:, ::-1], "Bo.png": picture()})
    assert two == "Ada.png mirrored + Bo.png unchanged"
    assert exported(tmp_path / "e", {}) is None


def test_a_new_run_starts_with_no_exported_file(tmp_path: Path) -> None:
    app = Gimp(None, tmp_path)  # type: ignore[arg-type]
    app.images.mkdir(parents=True)
    Image.fromarray(picture()).save(app.images / "photo.png")
    Image.fromarray(picture()).save(app.images / "Ada.png")
    app.reset_result()
    assert sorted(p.name for p in app.images.iterdir()) == ["photo.png"]


def test_the_gimp_fill_record_is_the_band_part_filled_black() -> None:
    from benchmarks.desktop.office import FILLED, GimpFill

    app = GimpFill(None, Path("."))  # type: ignore[arg-type]
    filled = picture()
    left, top, right, bottom = FILLED
    filled[top:bottom, left:right] = 0
    assert app.judge_pixels(filled) == "filled"
    shifted = picture()
    shifted[top:bottom, left + 1 : right + 1] = 0  # a pixel off: the drag's rounding
    assert app.judge_pixels(shifted) == "filled"
    assert app.judge_pixels(picture()) == "unchanged"  # the fill lost
    wide = picture()
    wide[top:bottom, left : right + 30] = 0  # past the band: not the dragged selection
    assert app.judge_pixels(wide) == "other"
    grey = picture()
    grey[top:bottom, left:right] = 90  # another colour than the foreground's black
    assert app.judge_pixels(grey) == "other"
