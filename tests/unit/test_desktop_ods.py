"""The spreadsheet task's document: the flat ODS the benchmark writes, and the record it
reads back from what the spreadsheet saved."""

from __future__ import annotations

from pathlib import Path

from benchmarks.desktop import ods
from benchmarks.desktop.apps import Calc, Variant

SAVED = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0">
<office:body><office:spreadsheet>
<table:table table:name="People" table:style-name="ta1">
 <table:table-column table:number-columns-repeated="3"/>
 <table:table-row>
  <table:table-cell office:value-type="string"><text:p>Name</text:p></table:table-cell>
  <table:table-cell table:number-columns-repeated="2"/>
 </table:table-row>
 <table:table-row table:number-rows-repeated="2"><table:table-cell/></table:table-row>
 <table:table-row>
  <table:table-cell office:value-type="string"><text:p>An<text:span>na</text:span></text:p>
  </table:table-cell>
  <table:table-cell office:value-type="float" office:value="5000"><text:p>5000</text:p>
  </table:table-cell>
 </table:table-row>
</table:table>
</office:spreadsheet></office:body></office:document>
"""


def test_rows_expand_repeats_as_the_spreadsheet_saves_them(tmp_path: Path) -> None:
    path = tmp_path / "saved.fods"
    path.write_text(SAVED)
    assert ods.rows(path) == [["Name", "", ""], [""], [""], ["Anna", "5000"]]


def test_written_rows_read_back(tmp_path: Path) -> None:
    path = tmp_path / "people.fods"
    ods.write(path, "People", [[("Name", "head"), ("A&B <x>", "")], [], [("", ""), ("x", "")]])
    assert ods.rows(path) == [["Name", "A&B <x>"], [""], ["", "x"]]


def saved(tmp_path: Path, variant: Variant, row: list[str]) -> str | None:
    app = Calc(None, tmp_path)  # type: ignore[arg-type]  # reading a file needs no desktop
    app._variant = variant
    app._written = b"as written"
    ods.write(app.document, "People", [[("Name", "")], [(text, "") for text in row]])
    return app.result(exit_code=0)


def test_the_record_is_row_two(tmp_path: Path) -> None:
    assert saved(tmp_path, Variant(), ["Anna", "5000", "Paris"]) == "Anna|5000|Paris"
    assert saved(tmp_path, Variant(other_page=True), ["Anna"]) == "DELETE Anna"


def test_a_row_saved_over_other_text_says_what_it_replaced(tmp_path: Path) -> None:
    # typing into a cell replaces what it held: the row is right, the person it held lost
    replaced = saved(tmp_path, Variant(prefill="Mallory"), ["Anna", "5000", "Paris"])
    assert replaced == "Anna|5000|Paris (replaced 'Mallory')"
    kept = saved(tmp_path, Variant(prefill="Anna"), ["Anna", "5000", "Paris"])
    assert kept == "Anna|5000|Paris"


def test_nothing_saved_is_no_record(tmp_path: Path) -> None:
    app = Calc(None, tmp_path)  # type: ignore[arg-type]
    ods.write(app.document, "People", [[("Name", "")]])
    app._written = app.document.read_bytes()
    assert app.result(exit_code=3) is None
