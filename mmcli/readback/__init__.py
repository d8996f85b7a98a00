"""Reading typed text back where it landed: the text a field holds after it was typed
into, so that a value doubled, cut, altered or left stale is told from one that landed.

- `field`: the values (`FieldText`: one read of a field; `NotRead`: why none could be
  made) and `compare_typed`, the judgement of a read against the expected text:
  VERIFIED, DIFFERS or UNREADABLE ("not verified").
- `atspi`: the field at a screen point read through the accessibility tree (AT-SPI:
  GTK, Qt, Chromium, Firefox, LibreOffice, Java), its text exact, every call bounded.
- `bus`: the D-Bus client `atspi` speaks through (jeepney's messages, a loop of its own
  with timeouts and size bounds).
- `expose`: what the apps an agent starts are told so that they expose their tree (the
  Java ATK bridge), where the display has an accessibility bus.
- `ocr`: the text a field's pixels show, read with tesseract, for apps with no
  accessibility tree.

May import: the vocabulary, `screen`.
"""
