"""Flat OpenDocument text documents (`.fodt`, one XML file): written for the word
processor's task, read back from what the app saved, with the one character property the
task sets (subscript) shown in the text. ODF is the word processor's own format, so Ctrl+S
saves it with no question about the format."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import escape

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"

HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:automatic-styles>
<style:style style:name="head" style:family="paragraph">\
<style:text-properties fo:font-size="16pt" fo:font-weight="bold"/></style:style>
<style:style style:name="error" style:family="paragraph">\
<style:text-properties fo:color="#c01010" fo:font-weight="bold"/></style:style>
</office:automatic-styles>
<office:body><office:text>
"""
TAIL = "</office:text></office:body></office:document>\n"

Paragraph = tuple[str, str]
"""(text, paragraph style name or "")."""


def write(path: Path, paragraphs: list[Paragraph]) -> None:
    out = [HEAD]
    for text, style in paragraphs:
        attrs = f' text:style-name="{style}"' if style else ""
        out.append(f"<text:p{attrs}>{escape(text)}</text:p>\n")
    out.append(TAIL)
    path.write_text("".join(out), encoding="utf-8")


def _lowered(style: ET.Element) -> bool:
    """Whether a text style lowers its characters (subscript: "sub 58%", "-33% 58%")."""
    props = style.find(f"{{{STYLE}}}text-properties")
    position = "" if props is None else props.get(f"{{{STYLE}}}text-position", "")
    return position.startswith(("sub", "-"))


def paragraphs(path: Path) -> list[str]:
    """The body's paragraphs as text, subscripted characters written `_{...}`."""
    root = ET.parse(path).getroot()
    lowered = {
        s.get(f"{{{STYLE}}}name")
        for s in root.iter(f"{{{STYLE}}}style")
        if s.get(f"{{{STYLE}}}family") == "text" and _lowered(s)
    }
    body = root.find(f"{{{OFFICE}}}body/{{{OFFICE}}}text")
    if body is None:
        raise ValueError(f"{path}: no text body")

    def text_of(node: ET.Element) -> str:
        parts = [node.text or ""]
        for child in node:
            inner = text_of(child)
            if child.tag == f"{{{TEXT}}}span" and child.get(f"{{{TEXT}}}style-name") in lowered:
                inner = f"_{{{inner}}}" if inner else ""
            elif child.tag == f"{{{TEXT}}}s":  # runs of spaces
                inner = " " * int(child.get(f"{{{TEXT}}}c", "1"))
            elif child.tag == f"{{{TEXT}}}tab":
                inner = "\t"
            parts += [inner, child.tail or ""]
        return "".join(parts)

    return [text_of(p) for p in body.iter() if p.tag in (f"{{{TEXT}}}p", f"{{{TEXT}}}h")]
