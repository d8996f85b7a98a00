"""Flat OpenDocument spreadsheets (`.fods`, one XML file): written for the spreadsheet task,
read back from what the app saved. ODF is the spreadsheet's own format, so Ctrl+S saves it
with no question about the format."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import escape

TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"

HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:automatic-styles>
<style:style style:name="head" style:family="table-cell">\
<style:text-properties fo:font-weight="bold"/></style:style>
<style:style style:name="error" style:family="table-cell">\
<style:text-properties fo:color="#c01010" fo:font-weight="bold"/></style:style>
</office:automatic-styles>
<office:body><office:spreadsheet>
"""
TAIL = "</office:spreadsheet></office:body></office:document>\n"

Cell = tuple[str, str]
"""(text, cell style name or "")."""


def write(path: Path, sheet: str, rows: list[list[Cell]]) -> None:
    """One sheet of text cells, row by row from A1 (an empty text: an empty cell)."""
    out = [HEAD, f'<table:table table:name="{escape(sheet)}">\n']
    for row in rows:
        out.append("<table:table-row>")
        for text, style in row or [("", "")]:
            attrs = f' table:style-name="{style}"' if style else ""
            if text:
                out.append(
                    f'<table:table-cell{attrs} office:value-type="string">'
                    f"<text:p>{escape(text)}</text:p></table:table-cell>"
                )
            else:
                out.append(f"<table:table-cell{attrs}/>")
        out.append("</table:table-row>\n")
    out += ["</table:table>\n", TAIL]
    path.write_text("".join(out), encoding="utf-8")


def rows(path: Path, limit: int = 50) -> list[list[str]]:
    """The first sheet's cells as displayed (their text), the first `limit` rows and
    columns; repeated rows and cells (how ODF writes runs of empty ones) expanded."""
    root = ET.parse(path).getroot()
    table = root.find(f".//{{{TABLE}}}table")
    if table is None:
        raise ValueError(f"{path}: no sheet")
    found: list[list[str]] = []
    for row in table.iter(f"{{{TABLE}}}table-row"):
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (f"{{{TABLE}}}table-cell", f"{{{TABLE}}}covered-table-cell"):
                continue
            text = "\n".join("".join(p.itertext()) for p in cell.iter(f"{{{TEXT}}}p"))
            repeat = int(cell.get(f"{{{TABLE}}}number-columns-repeated", "1"))
            cells += [text] * min(repeat, limit - len(cells))
            if len(cells) >= limit:
                break
        repeat = int(row.get(f"{{{TABLE}}}number-rows-repeated", "1"))
        found += [cells] * min(repeat, limit - len(found))
        if len(found) >= limit:
            break
    return found
