"""Property-based fuzzing of the codec and the store's reader: corrupt, truncated, hostile
or future-version documents only ever give `RecordingCorrupt`, one line naming the file,
and the file itself is never touched."""

from __future__ import annotations

import copy
import time
import tomllib
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from mmcli.errors import RecordingCorrupt
from mmcli.model import BUTTONS, FORMAT_VERSION, ActionKind, Recording, Step
from mmcli.screen.fingerprint import Rect
from mmcli.store import codec, validate
from mmcli.store.recordings import Store

GOLDEN = Path(__file__).parent.parent / "fixtures" / "golden-v3.toml"
TEXT = GOLDEN.read_text(encoding="utf-8")
DOC = tomllib.loads(TEXT)
SOURCE = "/store/fuzz.toml"

fuzz = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def load(text: str) -> Recording | None:
    """The recording, or None when refused: refused only with a one-line
    `RecordingCorrupt` that names the file."""
    try:
        recording = codec.loads(text, SOURCE)
    except RecordingCorrupt as e:
        message = str(e)
        assert message.startswith(SOURCE + ": ")
        assert "\n" not in message and "\r" not in message
        return None
    check_usable(recording)
    return recording


def check_usable(recording: Recording) -> None:
    """What the codec accepts, replay and `mm ls`/`mm show` can walk, and the codec can
    write back and read again."""
    parent = {s.id: s.parent for s in recording.steps}
    for step in recording.steps:
        node: int | None = step.id
        for _ in range(len(recording.steps)):
            node = parent[node] if node is not None else None
        assert node is None, f"step {step.id} never leads back to a first step"
    assert len(recording.trunk()) <= len(recording.steps)
    recording.branch_count()
    for step in recording.steps:
        grid = step.fingerprint.grid
        assert grid.cols > 0 and grid.rows > 0
        assert len(grid.hashes) == len(grid.tones) == len(grid.details) == grid.cols * grid.rows
        assert all(0 <= h < 2**64 for h in grid.hashes)
        assert step.thumbnail is None or (
            "/" not in step.thumbnail and not step.thumbnail.startswith(".")
        )
        assert step.action.button in BUTTONS
        a, fp = step.action, step.fingerprint
        points = [
            a.x,
            a.y,
            a.x2,
            a.y2,
            *(fp.pointer or ()),
            *((fp.patch.x, fp.patch.y) if fp.patch else ()),
        ]
        assert all(abs(v) < 2**15 for v in points if v is not None)
        check_within_bounds(recording, step)
    again = codec.loads(codec.dumps(recording), SOURCE)
    assert [(s.id, s.parent) for s in again.steps] == [(s.id, s.parent) for s in recording.steps]


def check_within_bounds(recording: Recording, step: Step) -> None:
    """What the validator guarantees of every step it lets through (docs/safety.md)."""
    a, fp = step.action, step.fingerprint
    w, h = fp.width, fp.height
    assert 1 <= w <= validate.MAX_SCREEN and 1 <= h <= validate.MAX_SCREEN
    for value, side in ((a.x, w), (a.y, h), (a.x2, w), (a.y2, h)):
        assert value is None or 0 <= value < side
    for point in (fp.pointer, (fp.patch.x, fp.patch.y) if fp.patch else None):
        assert point is None or (0 <= point[0] < w and 0 <= point[1] < h)
    if a.point is not None:
        assert fp.patch is not None, "a pointer step without its target check"
    top = validate.MAX_PRESSES if a.kind is ActionKind.PRESS else validate.MAX_CLICKS
    assert 1 <= a.clicks <= top
    assert abs(a.amount) <= validate.MAX_SCROLL
    assert len(a.text) <= validate.MAX_TEXT
    assert len(a.keys) <= validate.MAX_KEYS
    masks = [*fp.masks, *recording.ignore, *recording.volatile]
    assert exact_share(w, h, masks) <= validate.MAX_MASKED
    assert len(recording.steps) <= validate.MAX_STEPS


def exact_share(width: int, height: int, rects: list[Rect]) -> float:
    """The share of the screen `rects` cover, pixel-exact (an independent check of the
    validator's coarse raster, which may only overstate it)."""
    covered = np.zeros((height, width), dtype=bool)
    for r in rects:
        covered[max(r.y, 0) : max(r.bottom, 0), max(r.x, 0) : max(r.right, 0)] = True
    return float(covered.mean())


# ---- values a TOML document can hold ------------------------------------------------------

scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0, 1, -1, 16, 9, 2**15, 2**31, 2**63 - 1]),
    st.floats(),
    st.booleans(),
    st.text(max_size=40),
    st.sampled_from(["", "16x9", "0x0", "-1x-1", "left", "click", "../x.png", "zz", "+1_2"]),
    st.datetimes(timezones=st.none() | st.just(UTC) | st.just(timezone(timedelta(hours=-5)))),
    st.dates(),
    st.times(),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=12,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key and index of a document, depth first."""
    found = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    for key, child in items:
        found.append((*prefix, key))
        found.extend(paths(child, (*prefix, key)))
    return found


def edited_value(path: tuple[Any, ...]) -> Any:
    node: Any = DOC
    for key in path:
        node = node[key]
    return node


PATHS = paths(DOC)
STRING_PATHS = [p for p in PATHS if isinstance(edited_value(p), str)]
STEP_COUNT = len(DOC["steps"])


def dump(doc: dict[str, Any]) -> str:
    try:
        return tomli_w.dumps(doc)
    except (TypeError, ValueError):
        assume(False)
        raise


def edited(path: tuple[Any, ...], value: Any = None, delete: bool = False) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


# ---- properties ------------------------------------------------------------------------------


@fuzz
@given(st.text(max_size=3000))
def test_any_text(text: str) -> None:
    load(text)


@fuzz
@given(st.integers(min_value=0, max_value=len(TEXT)))
def test_truncated_anywhere(end: int) -> None:
    recording = load(TEXT[:end])
    if recording is not None:  # cut at a step boundary: whole steps, a shorter task
        assert 0 < len(recording.steps) <= len(DOC["steps"])


@fuzz
@given(
    st.integers(min_value=0, max_value=len(TEXT)),
    st.integers(min_value=0, max_value=200),
    st.text(max_size=50),
)
def test_spliced(at: int, cut: int, insert: str) -> None:
    load(TEXT[:at] + insert + TEXT[at + cut :])


@fuzz
@given(st.sampled_from(PATHS), values)
def test_any_field_replaced_by_any_value(path: tuple[Any, ...], value: Any) -> None:
    load(dump(edited(path, value)))


@fuzz
@given(
    st.sampled_from(STRING_PATHS),
    st.integers(min_value=0),
    st.sampled_from(list("-_+ .x/0fFz\n")),
    st.booleans(),
)
def test_any_string_field_with_one_character_changed(
    path: tuple[Any, ...], at: int, char: str, insert: bool
) -> None:
    text = edited_value(path)
    at = at % (len(text) + 1)
    load(dump(edited(path, text[:at] + char + text[at + (0 if insert else 1) :])))


@fuzz
@given(
    st.lists(
        st.none() | st.integers(min_value=-1, max_value=STEP_COUNT),
        min_size=STEP_COUNT,
        max_size=STEP_COUNT,
    )
)
def test_any_parents(parents: list[int | None]) -> None:
    doc = copy.deepcopy(DOC)
    for step, parent in zip(doc["steps"], parents, strict=True):
        step.pop("parent", None)
        if parent is not None:
            step["parent"] = parent
    load(dump(doc))


@fuzz
@given(st.sampled_from(PATHS))
def test_any_field_removed(path: tuple[Any, ...]) -> None:
    load(dump(edited(path, delete=True)))


@fuzz
@given(st.dictionaries(st.text(max_size=10), values, max_size=8), st.booleans())
def test_any_document(doc: dict[str, Any], versioned: bool) -> None:
    if versioned:
        doc = {**doc, "format_version": FORMAT_VERSION}
    load(dump(doc))


@fuzz
@given(st.integers(min_value=FORMAT_VERSION + 1, max_value=2**63 - 1))
def test_a_future_version_says_to_upgrade_mm(version: int) -> None:
    text = TEXT.replace(f"format_version = {FORMAT_VERSION}", f"format_version = {version}", 1)
    with pytest.raises(RecordingCorrupt, match="upgrade mm") as err:
        codec.loads(text, SOURCE)
    assert str(err.value).startswith(SOURCE + ": ")


@fuzz
@given(
    st.binary(max_size=3000)
    | st.builds(
        lambda b, at: TEXT.encode()[:at] + b, st.binary(max_size=20), st.integers(0, len(TEXT))
    )
)
def test_store_load_of_any_bytes_leaves_them_untouched(tmp_path: Path, data: bytes) -> None:
    store = Store(tmp_path)
    path = tmp_path / "fuzz.toml"
    path.write_bytes(data)
    try:
        store.load("fuzz")
    except RecordingCorrupt as e:
        assert str(e).startswith(f"{path}: ")
        assert "\n" not in str(e)
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fuzz.toml"]


# ---- hostile documents that are valid TOML ----------------------------------------------------


def golden_with(old: str, new: str) -> str:
    assert old in TEXT
    return TEXT.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (golden_with("id = 0\n", "id = 0\nparent = 0\n"), "follows itself"),
        (golden_with("id = 0\n", "id = 0\nparent = 1\n"), "follows itself"),
        (golden_with('grid = "16x9"', 'grid = "0x0"'), "grid must look like 16x9"),
        (golden_with('grid = "16x9"', 'grid = "-1x-1"'), "grid must look like 16x9"),
        (golden_with('grid = "16x9"', 'grid = "+16x9"'), "grid must look like 16x9"),
        (golden_with('hashes = "0', 'hashes = "-'), "hexadecimal"),
        (golden_with('hashes = "01', 'hashes = "_1'), "hexadecimal"),
        (golden_with('tones = "00', 'tones = " 0'), "hexadecimal"),
        (
            golden_with('thumbnail = "t-0000.png"', 'thumbnail = "../../../etc/passwd"'),
            "plain file name",
        ),
        (golden_with('thumbnail = "t-0000.png"', 'thumbnail = "/etc/x.png"'), "plain file name"),
        (
            golden_with('kind = "click"\n', 'kind = "click"\nbutton = "laser"\n'),
            "button must be one of",
        ),
        (golden_with("x = 100\n", "x = 9223372036854775807\n"), "off any screen"),
        (golden_with("pointer = [\n    5,", "pointer = [\n    -99999,"), "off any screen"),
        ("x = " + "[" * 5000, "nested too deeply"),
        ("x = " + "{a = " * 5000, "nested too deeply"),
        (golden_with('kind = "click"', 'kind = "teleport"'), "unknown action"),
        (TEXT[: TEXT.index("[[steps]]")], "no steps"),
        (golden_with("format_version = 3", "format_version = true"), "no integer format_version"),
        (golden_with("format_version = 3", "format_version = 1.0"), "no integer format_version"),
    ],
)
def test_hostile_documents_are_refused(text: str, problem: str) -> None:
    with pytest.raises(RecordingCorrupt, match=problem) as err:
        codec.loads(text, SOURCE)
    assert str(err.value).startswith(SOURCE + ": ") and "\n" not in str(err.value)


# ---- the whole validator: any action on any screen --------------------------------------------

validator = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
"""A few seconds in all: each example dumps and loads one small document."""

EDGES = [-(2**62), -(2**15), -1, 0, 1, 1079, 1080, 1919, 1920, 2**15 - 1, 2**15, 2**62]
on_screen = st.integers(0, 1079)
coordinates = st.one_of(
    on_screen, on_screen, on_screen, st.integers(-5, 2100), st.sampled_from(EDGES)
)
small = st.integers(1, 3)
counts = st.one_of(
    small,
    small,
    small,
    st.integers(-2, 25),
    st.sampled_from([0, 3, 10, 11, 1000, 1001, 10_000, 10_001, 10**9, 2**62, -(2**62), -10_001]),
)
small_rects = st.lists(st.integers(0, 1000), min_size=2, max_size=2).flatmap(
    lambda xy: st.lists(st.integers(0, 300), min_size=2, max_size=2).map(lambda wh: xy + wh)
)
rects = (
    small_rects
    | small_rects
    | st.lists(st.integers(-50, 2000) | st.sampled_from(EDGES), min_size=4, max_size=4)
)
key_names = st.sampled_from(["ctrl", "a", "enter", "x" * 32, "x" * 33, ""]) | st.text(max_size=3)
sizes = st.lists(st.integers(-1, 20_000) | st.sampled_from(EDGES), min_size=2, max_size=2)
KEY_FORMS = ["{key} = 1", "[{key}]", "[[{key}]]", "x = {{ {key} = 1 }}", "x = [{{ {key} = 1 }}]"]
texts = st.text(max_size=20) | st.sampled_from([validate.MAX_TEXT, validate.MAX_TEXT + 1]).map(
    lambda n: "a" * n
)


FIELDS: dict[str, tuple[Any, Any]] = {
    # name: (a value a real recording could hold, anything at all)
    "kind": (st.sampled_from([k.value for k in ActionKind]), st.text(max_size=8)),
    "points": (
        st.lists(on_screen, min_size=4, max_size=4),
        st.lists(st.none() | coordinates, min_size=4, max_size=4),
    ),
    "clicks": (small, counts),
    "amount": (st.integers(-20, 20), counts),
    "text": (st.text(max_size=20), texts),
    "keys": (
        st.lists(st.sampled_from(["ctrl", "a", "enter"]), min_size=1, max_size=3),
        st.lists(key_names, max_size=12),
    ),
    "size": (st.none(), sizes),
    "target": (st.none(), st.just("drop") | st.lists(coordinates, min_size=2, max_size=2)),
    "pointer": (st.none(), st.lists(coordinates, min_size=2, max_size=2)),
    "masks": (st.lists(small_rects, max_size=2), st.lists(rects, max_size=6)),
    "ignore": (st.lists(small_rects, max_size=2), st.lists(rects, max_size=3)),
}


@validator
@given(
    st.integers(0, STEP_COUNT - 1), st.sets(st.sampled_from(sorted(FIELDS)), max_size=2), st.data()
)
def test_any_action_on_any_screen_is_refused_or_within_bounds(
    step: int, wild: set[str], data: st.DataObject
) -> None:
    """Each step edited to plausible values, but for up to two fields given anything."""
    v = {name: data.draw(FIELDS[name][name in wild], label=name) for name in FIELDS}
    doc = copy.deepcopy(DOC)
    action: dict[str, Any] = {"kind": v["kind"], "text": v["text"], "keys": v["keys"]}
    for name, value in zip(("x", "y", "x2", "y2"), v["points"], strict=True):
        if value is not None:
            action[name] = value
    action["clicks"] = v["clicks"]
    action["amount"] = v["amount"]
    doc["steps"][step]["action"] = action
    if "patch" not in doc["steps"][step]["screen"]:  # a step recorded without a target
        doc["steps"][step]["screen"] = copy.deepcopy(DOC["steps"][0]["screen"])
    screen = doc["steps"][step]["screen"]
    if v["size"] is not None:
        screen["size"] = v["size"]
    if v["target"] == "drop":
        screen.pop("target", None)
        screen.pop("patch", None)
    elif v["target"] is not None:
        screen["target"] = v["target"]
    if v["pointer"] is not None:
        screen["pointer"] = v["pointer"]
    screen["masks"] = v["masks"]
    doc["ignore"] = v["ignore"]
    event("accepted" if load(dump(doc)) is not None else "refused")


@validator
@given(
    st.integers(1, 3 * validate.MAX_KEY_PARTS),
    st.sampled_from(
        ["{key} = 1", "[{key}]", "[[{key}]]", "x = {{ {key} = 1 }}", "x = [{{ {key} = 1 }}]"]
    ),
    st.sampled_from(["a", '"a"', "'a.b'", " a ", "0", "a-b_c"]),
)
def test_dotted_keys_are_read_or_refused_at_once(parts: int, form: str, part: str) -> None:
    text = form.format(key=".".join([part] * parts)) + "\n"
    started = time.monotonic()
    with pytest.raises(RecordingCorrupt) as err:
        codec.loads(text, SOURCE)
    assert time.monotonic() - started < 1.0
    refused = "dotted key of more than" in str(err.value)
    assert refused == (parts > validate.MAX_KEY_PARTS), str(err.value)


def test_a_huge_dotted_key_is_refused_before_the_toml_reader() -> None:
    started = time.monotonic()
    with pytest.raises(RecordingCorrupt, match="dotted key of more than 64 parts"):
        codec.loads("a" + ".a" * 100_000 + " = 1\n", SOURCE)
    assert time.monotonic() - started < 1.0
