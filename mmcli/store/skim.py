"""What `mm ls` shows of a recording, read without parsing the whole document.

A recording's steps are most of its TOML (fingerprints in hex), and the standard
library's parser takes ~12 ms for a 20-step one: listing 10,000 copied-in recordings
would take minutes. Here the header (name, created, params) is parsed as TOML, and the
steps are counted, with their ids, parents and thumbnails, from the lines `mm` writes;
the last step (where a copy cut short would end) must be whole, each line as `mm` writes
it. A document that does not look exactly so gives None, and the caller parses it in
full, which also says what is wrong with it. What skimming cannot see (a bad hex digit
in a fingerprint) is reported when the recording is opened (`mm show`, `mm replay`).
"""

from __future__ import annotations

import re
import tomllib
from datetime import datetime
from typing import Any

from mmcli.model import FORMAT_VERSION

STEPS = "\n[[steps]]\n"
_STRING = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SCALAR = rf"(?:{_STRING}|-?\d+|true|false|\d{{4}}-\d\d-\d\d[ T][0-9:.+\-Z]+)"
_LINE = (
    r"(?:\[\[steps\]\]|\[steps(?:\.[a-z_]+)+\]|"
    rf"[a-z_]+ = (?:{_SCALAR}|\[\]|\[)|"
    rf"(?: {{4}})+(?:{_SCALAR}|\[|\]),?|\]|)"
)
_STEP_LINES = re.compile(rf"(?:{_LINE}\n)*")
_STEP_HEAD = re.compile(
    r"\[\[steps\]\]\nid = (\d+)\n(?:parent = (\d+)\n)?(?:created = [^\n]*\n)?"
    r'(?:thumbnail = "([^"\n]*)"\n)?'
)
_FIRST_LINES = re.compile(
    rf"format_version = \d+\nname = {_STRING}\ncreated = [0-9][0-9:. +\-TZ]*\n"
)
_PARAMS = re.compile(rf"\nparams = (?:\[\]|\[\n(?: {{4}}{_STRING},\n)*\])\n")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")
_SCREEN_KEYS = ("\nsize = [\n", "\ngrid = ", "\nhashes = ", "\ntones = ", "\ndetails = ")


def skim(text: str, name: str) -> dict[str, Any] | None:
    """The listing's entry for a `mm record` document (`kind`, `steps`, `branches`,
    `params`, `created`), or None when the document must be parsed in full."""
    cut = text.find(STEPS)
    if cut < 0 or not text.endswith("\n"):
        return None
    head = _header(text[:cut])
    if head is None:
        return None
    created = head.get("created")
    params = head.get("params")
    if (
        head.get("format_version") != FORMAT_VERSION
        or head.get("name") != name
        or "kind" in head
        or not isinstance(created, datetime)
        or not isinstance(params, list)
        or not all(isinstance(p, str) for p in params)
    ):
        return None
    steps = text.count("\n[[steps]]\n")
    if text.count("\n[steps.screen]\n") != steps:
        return None
    # A document cut short (a copy that did not finish) ends in a step cut short: the
    # last step must be whole, every line of it as `mm` writes it.
    last = text[text.rindex(STEPS) + 1 :]
    screen = last[last.find("\n[steps.screen]\n") :]
    pointed = "\n[steps.action]\n" in last and "\nx = " in last.split("\n[steps.screen]\n")[0]
    if (
        _STEP_LINES.fullmatch(last) is None
        or not _balanced(last)
        or not all(key in screen for key in _SCREEN_KEYS)
        or (pointed and "\npatch = " not in screen)  # a pointer step keeps its target
    ):
        return None
    seen: set[int] = set()
    parents: set[int] = set()
    for found in _STEP_HEAD.finditer(text, cut):
        step_id, parent, thumbnail = int(found[1]), found[2], found[3]
        # `mm` writes a parent before its children: a loop, or a parent further down,
        # is for the full parse to judge.
        if step_id in seen or (parent and int(parent) not in seen):
            return None
        if thumbnail is not None and (
            not _PLAIN_NAME.fullmatch(thumbnail) or thumbnail in (".", "..")
        ):
            return None
        seen.add(step_id)
        if parent:
            parents.add(int(parent))
    if len(seen) != steps:
        return None
    return {
        "kind": "cli",
        "steps": steps,
        "branches": max(len(seen - parents) - 1, 0),  # the trunk is no branch
        "pending": text.count("\npending = true\n"),
        "params": list(params),
        "created": created.isoformat(),
    }


def _header(text: str) -> dict[str, Any] | None:
    """The header keys the listing needs: the first three lines and `params`, parsed as
    TOML where `mm` writes them (the rest of the header is for the full parse); the
    whole header where they are not so."""
    first = _FIRST_LINES.match(text)
    params = _PARAMS.search(text)
    try:
        if first is None or params is None or "\nkind = " in text:
            return tomllib.loads(text)
        return tomllib.loads(first[0] + params[0][1:])
    except tomllib.TOMLDecodeError:
        return None


def _balanced(lines: str) -> bool:
    """As many arrays closed as opened (tables and `[]` end in `]` too)."""
    opened = lines.count("[\n")
    closed = lines.count("]\n") + lines.count("],\n")
    not_arrays = (
        lines.count("[[steps]]\n")
        + lines.count("\n[steps.")
        + lines.count("[]\n")
        + lines.count("[],\n")
    )
    return opened == closed - not_arrays
