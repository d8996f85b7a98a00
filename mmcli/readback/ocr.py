"""The text a field shows, read from its pixels with tesseract (for apps with no
accessibility tree: Tk, Xaw, Wine, a remote desktop).

`read_region(image, rect)` takes the field's crop (an RGB numpy array or a PIL image: the
field's box, its border included, nothing of its neighbours) and returns a `FieldText`
with the text tesseract reads, its mean word confidence and whether the text fills the
field's width (`partial`: a field scrolled sideways shows only part of a long value), or
a `NotRead` (no tesseract, a timeout, an empty crop).

Before tesseract the crop is cleaned the way a field needs: grey, light text on dark
turned dark on light, the field's border lines and the text caret (a thin bar taller
than any glyph) painted over with the field's background, scaled up so that the line is
about `TARGET_HEIGHT` px tall, and framed in a margin. tesseract runs once, one line of
text (`--psm 7`), English, TSV output, under a timeout. Without the caret painted over,
tesseract read it as a last "|" or "]", or with the letter it touched ("Lopez|" as
"Lopeq"); without the frame painted over, it read nothing at all for 6 of 15 Tk entry
values.

A read costs about 0.1 s (median of 30 on each of a Tk, GTK 3, Qt 5 and Chromium entry,
one thread); it is exact but for accented letters and, once, a letter's case
(`field.compare_typed` says what follows).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np
from PIL import Image

from mmcli.readback.field import FieldText, NotRead
from mmcli.screen.fingerprint import Rect
from mmcli.screen.runs import longest

TARGET_HEIGHT = 60
"""The field's inner height, in px, after scaling up (tesseract reads best with capitals
some 30 px tall)."""
MAX_SCALE = 4
MARGIN = 16
CORNER = 2
TIMEOUT = 5.0
LANGUAGE = "eng"
THREADS = "1"
"""tesseract's OpenMP threads (OMP_THREAD_LIMIT): on two cores more threads cost more
than they save (0.11 s a read with one, 0.16 s with two)."""


@dataclass(frozen=True)
class Cleaned:
    """A field's crop ready for tesseract, and where its text's ink lies."""

    image: Image.Image
    ink_left: int
    """Px between the field's inner left edge and its first ink (-1: no ink)."""
    ink_right: int
    """Px between its last ink and the inner right edge (-1: no ink)."""


def read_region(
    image: np.ndarray | Image.Image,
    rect: Rect | None = None,
    single_line: bool = True,
    timeout: float = TIMEOUT,
) -> FieldText | NotRead:
    """The text in the field `image` (a crop of the screen, at `rect` if given)."""
    if shutil.which("tesseract") is None:
        return NotRead("ocr", "tesseract is not installed (apt-get install tesseract-ocr)")
    gray = _gray(image)
    if gray.size == 0 or min(gray.shape) < 4:
        return NotRead("ocr", "the region is empty")
    cleaned = clean(gray)
    if cleaned.ink_left < 0:  # nothing but the field's frame and caret: it is empty
        return FieldText("", "ocr", rect=rect, confidence=100.0)
    done = tesseract(cleaned.image, "7" if single_line else "6", timeout)
    if isinstance(done, NotRead):
        return done
    text, confidence = parse_tsv(done)
    partial = fills_width(cleaned.ink_left, cleaned.ink_right, gray.shape[0])
    return FieldText(text, "ocr", rect=rect, confidence=confidence, partial=partial)


def tesseract(image: Image.Image, psm: str, timeout: float) -> str | NotRead:
    """tesseract's TSV for `image` (page segmentation mode `psm`), English, one thread,
    under `timeout`; a `NotRead` saying why when it does not run or fails."""
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    command = ["tesseract", "stdin", "stdout", "--psm", psm, "-l", LANGUAGE, "tsv"]
    try:
        done = subprocess.run(
            command,
            input=buffer.getvalue(),
            capture_output=True,
            timeout=timeout,
            env={**os.environ, "OMP_THREAD_LIMIT": THREADS},
        )
    except subprocess.TimeoutExpired:
        return NotRead("ocr", f"tesseract did not finish in {timeout:g} s")
    except OSError as e:
        return NotRead("ocr", f"tesseract did not run: {e}")
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return NotRead("ocr", f"tesseract failed: {error[-1] if error else done.returncode}")
    return done.stdout.decode("utf-8", "replace")


def fills_width(ink_left: int, ink_right: int, height: int) -> bool:
    """Whether a field's text (and caret) spans its width, from its inner padding on one
    side to the same padding on the other: a field scrolled sideways, showing only part
    of a long value. A value that fits leaves room on the side it is not aligned to."""
    if ink_left < 0:
        return False
    near, far = sorted((ink_left, ink_right))
    return far <= near + max(3, height // 8) and far <= height // 2 + 2


def parse_tsv(tsv: str) -> tuple[str, float | None]:
    """The text of tesseract's TSV output (words joined by a space, lines by a newline)
    and its mean word confidence, weighted by the words' lengths (None: no word)."""
    lines: dict[tuple[str, ...], list[str]] = {}
    weighted, letters = 0.0, 0
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        word = cells[11].strip()
        lines.setdefault(tuple(cells[1:5]), []).append(word)
        try:
            conf = float(cells[10])
        except ValueError:
            continue
        weighted += max(conf, 0.0) * len(word)
        letters += len(word)
    text = "\n".join(" ".join(words) for words in lines.values())
    return text, (weighted / letters if letters else None)


def _gray(image: np.ndarray | Image.Image) -> np.ndarray:
    if isinstance(image, Image.Image):
        return np.asarray(image.convert("L"), dtype=np.uint8)
    array = np.asarray(image)
    if array.ndim == 2:
        return array.astype(np.uint8)
    rgb = array[..., :3].astype(np.float32)
    return (rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)).astype(np.uint8)


def clean(gray: np.ndarray) -> Cleaned:
    """The crop as tesseract reads it best (see the module's docstring)."""
    background = int(np.median(gray))
    if background < 128:  # light text on a dark field
        gray, background = 255 - gray, 255 - background
    ink = np.abs(gray.astype(np.int16) - background) > 64
    band = slice(*_middle_band(gray, ink, background))
    gray, ink = gray[band], ink[band]
    top, bottom, left, right = _inside_border(ink)
    inner = gray[top:bottom, left:right].copy()
    inner_ink = ink[top:bottom, left:right].copy()
    columns = np.flatnonzero(inner_ink.any(axis=0))  # the caret counts: it shows the end
    if columns.size == 0:
        return Cleaned(Image.new("L", (8, 8), 255), -1, -1)
    ink_left, ink_right = int(columns[0]), int(inner.shape[1] - 1 - columns[-1])
    caret = _caret_columns(inner_ink)
    inner[:, caret] = background
    if len(caret) == columns.size:  # only a caret: an empty field
        return Cleaned(Image.new("L", (8, 8), 255), -1, -1)
    # Stretch so the background is white and the darkest ink black.
    darkest = int(inner.min())
    span = max(1, background - darkest)
    stretched = np.clip((inner.astype(np.int32) - darkest) * 255 // span, 0, 255).astype(np.uint8)
    picture = Image.fromarray(stretched)
    scale = max(1, min(MAX_SCALE, round(TARGET_HEIGHT / max(1, inner.shape[0]))))
    if scale > 1:
        picture = picture.resize(
            (picture.width * scale, picture.height * scale), Image.Resampling.LANCZOS
        )
    framed = Image.new("L", (picture.width + 2 * MARGIN, picture.height + 2 * MARGIN), 255)
    framed.paste(picture, (MARGIN, MARGIN))
    return Cleaned(framed, ink_left, ink_right)


RULE_TONE = 16
"""Grey levels off the ground by which a row of a rule (a spreadsheet's gridline) stands."""
RULE_SPAN = 0.9
"""The least part of a row's width a rule runs across."""


def _middle_band(gray: np.ndarray, ink: np.ndarray, background: int) -> tuple[int, int]:
    """The rows (start, stop) between the rules across the crop that hold its middle
    row: a field's box is grown around its text, and in a spreadsheet it reaches past the
    cell's gridlines into the rows above and below, where another cell's glyphs end
    (Calc's bold header read as a "." after the typed value: "Anna." for "Anna"). A rule
    is a row all but a tenth of which is one tone, off the ground by `RULE_TONE` or
    more (too light to count as ink: Calc's gridlines are grey 192 on white). The whole
    crop when no rule crosses it, its middle row is one, or nothing but rules lies past
    the band (an entry's own frame: cut off, a short crop let a "J" at the field's left
    edge pass for a frame line, "lohn" for "John")."""
    height = gray.shape[0]
    rows = gray.astype(np.int16)
    median = np.median(rows, axis=1)
    alike = (np.abs(rows - median[:, None]) <= 24).mean(axis=1) >= RULE_SPAN
    rule = alike & (np.abs(median - background) > RULE_TONE)
    middle = height // 2
    if not rule.any() or rule[middle]:
        return 0, height
    start, stop = middle, middle + 1
    while start > 0 and not rule[start - 1]:
        start -= 1
    while stop < height and not rule[stop]:
        stop += 1
    outside = np.ones(height, dtype=bool)
    outside[start:stop] = False
    if not (outside & ~rule & ink.any(axis=1)).any():
        return 0, height  # nothing past the rules but the field's own frame: keep it
    return start, stop


ACROSS = 0.9
"""A line with ink over this much of the crop's width (or height) crosses it: a rule."""


def _inside_border(ink: np.ndarray, depth: int = 5) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of the crop inside the field's frame: rows and columns
    at the edges, up to `depth` deep, that are blank (a margin outside the frame), lines
    (ink across most of their length) or hold ink only within `CORNER` px of their ends
    (a rounded corner's remnant)."""
    height, width = ink.shape
    top, bottom, left, right = 0, height, 0, width
    # A margin outside the frame (a box grown past the field): blank edge lines first;
    # a column blank but where a rule across the whole crop crosses it too (the rule
    # above Wine's text, through the margin beside the scrollbar's edge that ends its
    # line). Not so a row: the caret's column may run nearly the crop's height, and the
    # rows below the baseline it alone reaches tell it from a letter.
    columns = ink[~(ink.mean(axis=1) > ACROSS), :]
    while top < depth and bottom - top > 2 and not ink[top].any():
        top += 1
    while height - bottom < depth and bottom - top > 2 and not ink[bottom - 1].any():
        bottom -= 1
    while left < depth and right - left > 2 and not columns[:, left].any():
        left += 1
    while width - right < depth and right - left > 2 and not columns[:, right - 1].any():
        right -= 1
    changed = True
    while changed and bottom - top > 2 and right - left > 2:
        changed = False
        if top < depth and _frame_line(ink[top, left:right]):
            top, changed = top + 1, True
        if height - bottom < depth and _frame_line(ink[bottom - 1, left:right]):
            bottom, changed = bottom - 1, True
        if left < depth and _frame_line(ink[top:bottom, left]):
            left, changed = left + 1, True
        if width - right < depth and _frame_line(ink[top:bottom, right - 1]):
            right, changed = right - 1, True
    return top, bottom, left, right


def _frame_line(line: np.ndarray) -> bool:
    if not line.any():
        return False
    if line.mean() > 0.5:
        return True
    where = np.flatnonzero(line)
    return bool(np.all((where <= CORNER) | (where >= len(line) - 1 - CORNER)))


def _caret_columns(ink: np.ndarray, widest: int = 3) -> list[int]:
    """The columns of a text caret, which tesseract would read as a "|", "]" or "l", or
    merge with the letter it touches ("z|" as "q"): where typing leaves it, after the
    text (`_end_caret`), or inside it where the field kept text after the typed part
    (`_inner_caret`: GIMP's export name "Ada|.png", read "Adalpng" with the caret)."""
    return _end_caret(ink, widest) or _inner_caret(ink, widest)


def _end_caret(ink: np.ndarray, widest: int) -> list[int]:
    """A caret after the text: the last ink, a solid bar at most `widest` px wide, half
    the field's inner height or more, 2 px longer than any other stroke and reaching 2
    px or more below the baseline (an "l" or "I" at the end stops at the baseline)."""
    height = ink.shape[0]
    filled = np.flatnonzero(ink.any(axis=0))
    bar: list[int] = []
    for x in filled[::-1][:widest]:
        if not _solid(ink[:, x]) or ink[:, x].sum() < height / 2 or (bar and bar[-1] != x + 1):
            break
        bar.append(int(x))
    if not bar or len(bar) == len(filled):
        return bar  # nothing, or a bar alone: the caret in an empty field (or a lone "I")
    others = [int(x) for x in filled if x not in bar]
    stroke = max(longest(ink[:, x]) for x in others)
    bottoms = np.array([np.flatnonzero(ink[:, x])[-1] for x in others])
    baseline = int(np.bincount(bottoms).argmax())
    bar_run = min(longest(ink[:, x]) for x in bar)
    bar_bottom = max(int(np.flatnonzero(ink[:, x])[-1]) for x in bar)
    return bar if bar_run >= stroke + 2 and bar_bottom >= baseline + 2 else []


LINE_ENDS = 3
"""Px within which the tallest glyphs reach a caret's top and bottom (`_inner_caret`)."""


def _inner_caret(ink: np.ndarray, widest: int) -> list[int]:
    """A caret inside the text: one solid bar at most `widest` px wide, 2 px longer than
    any other stroke, reaching higher than every glyph's top and lower than every
    glyph's bottom, but within `LINE_ENDS` of the highest and the lowest (a caret spans
    the font's whole line; a "J" or a "p" stops within it). Text with no ascender or no
    descender gives no line to measure by: no caret is taken inside it."""
    filled = np.flatnonzero(ink.any(axis=0))
    runs = {int(x): longest(ink[:, x]) for x in filled}
    tallest = max(runs.values(), default=0)
    bar = [x for x in runs if runs[x] >= tallest - 1 and _solid(ink[:, x])]
    if not bar or len(bar) > widest or bar[-1] - bar[0] != len(bar) - 1:
        return []  # no bar, or more than one: no caret told from the text
    others = [x for x in runs if x not in bar]
    if not others:
        return []
    tops = [int(np.flatnonzero(ink[:, x])[0]) for x in others]
    bottoms = [int(np.flatnonzero(ink[:, x])[-1]) for x in others]
    bar_top = min(int(np.flatnonzero(ink[:, x])[0]) for x in bar)
    bar_bottom = max(int(np.flatnonzero(ink[:, x])[-1]) for x in bar)
    longer = min(runs[x] for x in bar) >= max(runs[x] for x in others) + 2
    beyond = bar_top < min(tops) and bar_bottom > max(bottoms)
    # The line's tallest glyphs reach near both its ends ("d" and "p" within 3 px): the
    # bar spans that line. A "J" among lower-case letters alone reaches far above them.
    spans = min(tops) - bar_top <= LINE_ENDS and bar_bottom - max(bottoms) <= LINE_ENDS
    return bar if longer and beyond and spans else []


def _solid(column: np.ndarray) -> bool:
    """Whether a column's ink is one unbroken run."""
    rows = np.flatnonzero(column)
    return rows.size > 0 and len(rows) == rows[-1] - rows[0] + 1


FIND_SCALE = 2
"""A piece of the screen is read for a phrase at twice its size (small type reads best so)."""


def words(tsv: str) -> list[tuple[str, Rect]]:
    """The words of tesseract's TSV output with their boxes (in the image read)."""
    found = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        with contextlib.suppress(ValueError):
            left, top, width, height = (int(c) for c in cells[6:10])
            found.append((cells[11].strip(), Rect(left, top, width, height)))
    return found


def read_words(luma: np.ndarray, timeout: float = TIMEOUT) -> list[tuple[str, Rect]] | None:
    """The words tesseract reads in `luma` (a piece of the screen, full resolution,
    grey), read as `find_phrase` reads it, each with its box in the piece's pixels, left
    to right; None when tesseract is not there or fails."""
    if shutil.which("tesseract") is None or min(luma.shape[:2]) < 6:
        return None
    done = tesseract(_framed(luma), "11", timeout)
    if isinstance(done, NotRead):
        return None
    return sorted(((w, _unscaled(b)) for w, b in words(done)), key=lambda wb: wb[1].x)


def _framed(luma: np.ndarray) -> Image.Image:
    """`luma` at `FIND_SCALE` times its size in a margin of its own median tone."""
    image = Image.fromarray(np.ascontiguousarray(luma.astype(np.uint8)))
    image = image.resize(
        (image.width * FIND_SCALE, image.height * FIND_SCALE), Image.Resampling.LANCZOS
    )
    framed = Image.new(
        "L", (image.width + 2 * MARGIN, image.height + 2 * MARGIN), int(np.median(luma))
    )
    framed.paste(image, (MARGIN, MARGIN))
    return framed


def _unscaled(box: Rect) -> Rect:
    """A box found in `_framed`'s image, in the piece's pixels."""
    return Rect(
        (box.x - MARGIN) // FIND_SCALE,
        (box.y - MARGIN) // FIND_SCALE,
        -(-box.w // FIND_SCALE),
        -(-box.h // FIND_SCALE),
    )


def find_phrase(luma: np.ndarray, phrase: str, timeout: float = TIMEOUT) -> list[Rect]:
    """Where `phrase` is written in `luma` (a piece of the screen, full resolution, grey),
    in any font or size tesseract reads: the box of each run of words that spells it
    (case, accents and spacing aside), in the piece's pixels; none when tesseract is not
    there, or does not read it."""
    found = _phrase_runs(luma, phrase, timeout)
    return found[0] if found else []


def find_phrase_alone(luma: np.ndarray, phrase: str, timeout: float = TIMEOUT) -> list[Rect]:
    """`find_phrase`'s boxes that are the phrase's only place on their line, counting
    where it runs into other text with no space between: text typed twice into a field
    ("JuniorJosephine", or "Ada Ada") cannot tell which is the field's, and is not
    found."""
    found = _phrase_runs(luma, phrase, timeout)
    if not found:
        return []
    return _alone(*found)


def find_phrase_twice(luma: np.ndarray, phrase: str, timeout: float = TIMEOUT) -> list[Rect]:
    """The lines where `phrase` shows more than once, run together or apart (text typed
    twice into one field: "JuniorJosephine", "Ada Ada"): for each, the box around its
    places on that line."""
    found = _phrase_runs(luma, phrase, timeout)
    return _twice(found[1]) if found else []


def _twice(glued: list[Rect]) -> list[Rect]:
    """The boxes around the places of `glued` that share a line with another."""
    out: list[Rect] = []
    for place in glued:
        line = [g for g in glued if place.y < g.bottom and g.y < place.bottom]
        if len(line) >= 2:
            box = line[0]
            for g in line[1:]:
                box = box.union(g)
            if box not in out:
                out.append(box)
    return out


def _alone(words: list[Rect], glued: list[Rect]) -> list[Rect]:
    """The boxes of `words` that are the only one of `glued` on their line."""
    return [w for w in words if sum(w.y < g.bottom and g.y < w.bottom for g in glued) == 1]


def _phrase_runs(
    luma: np.ndarray, phrase: str, timeout: float
) -> tuple[list[Rect], list[Rect]] | None:
    """One OCR of `luma`: the boxes of the runs of words that spell `phrase`, and of the
    runs whose letters hold it with the spaces left out (`_glued_runs`); None when
    tesseract is not there or reads nothing."""
    target = _loose_words(phrase)
    if not target or shutil.which("tesseract") is None or min(luma.shape[:2]) < 6:
        return None
    done = tesseract(_framed(luma), "11", timeout)
    if isinstance(done, NotRead):
        return None
    read = [(_loose_words(w), b) for w, b in words(done)]

    def boxes(runs: list[tuple[int, int]]) -> list[Rect]:
        out = []
        for first, last in runs:
            box = read[first][1]
            for _, b in read[first + 1 : last + 1]:
                box = box.union(b)
            out.append(_unscaled(box))
        return out

    return boxes(_word_runs(read, target)), boxes(_glued_runs(read, target))


def _word_runs(read: list[tuple[list[str], Rect]], target: list[str]) -> list[tuple[int, int]]:
    """The runs of words read (first, last index) that are `target`'s words."""
    n = len(target)
    spelled = [w[0] if w else "" for w, _ in read]
    return [(i, i + n - 1) for i in range(len(read) - n + 1) if spelled[i : i + n] == target]


def _glued_runs(read: list[tuple[list[str], Rect]], target: list[str]) -> list[tuple[int, int]]:
    """The runs of words read (first, last index) whose letters, spaces left out, hold
    `target`'s: each place it starts."""
    text, owner = "", []
    for i, (w, _) in enumerate(read):
        piece = "".join(w)
        text += piece
        owner += [i] * len(piece)
    wanted = "".join(target)
    runs = []
    at = text.find(wanted)
    while at >= 0:
        runs.append((owner[at], owner[at + len(wanted) - 1]))
        at = text.find(wanted, at + 1)
    return list(dict.fromkeys(runs))


def _loose_words(text: str) -> list[str]:
    """`text`'s words without accents, casefolded, punctuation at their ends left out."""
    import unicodedata

    decomposed = unicodedata.normalize("NFD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return [w.strip(".,;:!?\"'()[]{}") for w in plain.split() if w.strip(".,;:!?\"'()[]{}")]
