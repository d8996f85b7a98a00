"""Values <-> stored data: what round-trips, what is refused, what is never trusted."""

from __future__ import annotations

import dataclasses
import sys
import tomllib
from typing import Any

import numpy as np
import pytest
import tomli_w

from mmcli.sdk.errors import UnknownClass, UnstorableValue
from mmcli.sdk.screen import ScreenSnapshot
from mmcli.sdk.values import Codec, Param
from tests.helpers import literal_fingerprint


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int
    label: str | None = None
    extra: int = dataclasses.field(default=0, init=False)


def roundtrip(value: Any, codec: Codec | None = None) -> Any:
    codec = codec or Codec()
    text = tomli_w.dumps({"v": codec.encode(value, "test")})
    return codec.decode(tomllib.loads(text)["v"])


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -(2**63),
        2**100,
        1.5,
        float("inf"),
        "",
        'text with "quotes" and {{braces}}',
        [],
        [1, "a", None, [2.5, {"k": None}]],
        {},
        {"a": 1, "b": [True, None]},
        {"$param": "not a param", "x": 1},
        (1, (2, "3")),
        b"\x00\xffbytes",
        Param("name"),
    ],
)
def test_values_roundtrip(value: Any) -> None:
    assert roundtrip(value) == value
    assert type(roundtrip(value)) is type(value)


def test_numpy_arrays_and_scalars_roundtrip() -> None:
    for array in [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([True, False])]:
        back = roundtrip(array)
        assert back.dtype == array.dtype and np.array_equal(back, array)
    assert roundtrip(np.int64(7)) == 7 and type(roundtrip(np.float64(0.5))) is float
    with pytest.raises(UnstorableValue, match="dtype object"):
        Codec().encode(np.array([object()]), "x")


def test_fingerprints_and_screen_snapshots_roundtrip() -> None:
    fp = literal_fingerprint(1)
    assert roundtrip(fp) == fp
    back = roundtrip(ScreenSnapshot(fp))
    assert isinstance(back, ScreenSnapshot) and back.fingerprint == fp and back.frame is None


def test_dataclasses_roundtrip_by_class_path() -> None:
    p = Point(1, 2, "a")
    object.__setattr__(p, "extra", 5)
    encoded = Codec().encode(p, "x")
    assert encoded["$dataclass"]["class"] == f"{__name__}:Point"
    back = Codec().decode(encoded)  # a fresh codec: found in the imported module
    assert back == p and back.extra == 5 and back is not p


def test_a_local_dataclass_is_rebuilt_only_by_the_codec_that_saw_it() -> None:
    @dataclasses.dataclass
    class Local:
        n: int

    codec = Codec()
    encoded = codec.encode(Local(1), "x")
    assert codec.decode(encoded) == Local(1)
    with pytest.raises(UnknownClass, match="not available in this process"):
        Codec().decode(encoded)


def test_decoding_never_imports_a_module() -> None:
    assert "antigravity" not in sys.modules
    stored = {"$dataclass": {"class": "antigravity:Fly", "fields": {}}}
    with pytest.raises(UnknownClass, match="import antigravity"):
        Codec().decode(stored)
    assert "antigravity" not in sys.modules


def test_decoding_rebuilds_only_dataclasses() -> None:
    stored = {"$dataclass": {"class": "os:system", "fields": {}}}
    with pytest.raises(UnknownClass, match="not a dataclass"):
        Codec().decode(stored)


@pytest.mark.parametrize(
    "value, problem",
    [
        (object(), "type object"),
        ({1: "a"}, "key 1 is a int"),
        ({"k": {2, 3}}, r"x\['k'\]: cannot store a value of type set"),
        (lambda: None, "type function"),
    ],
)
def test_unstorable_values_name_where_and_what(value: Any, problem: str) -> None:
    with pytest.raises(UnstorableValue, match=problem):
        Codec().encode(value, "x")


@pytest.mark.parametrize(
    "data",
    [
        {"$what": 1},
        {"$none": True, "other": 1},
        {"$ndarray": {"dtype": "|O", "shape": [1], "data": ""}},
        {"$ndarray": {"dtype": "<f8", "shape": [2], "data": "AAAA"}},
        {"$bytes": "not base64!"},
        {"$dataclass": {"class": f"{__name__}:Point", "fields": {"x": 1}}},
    ],
)
def test_malformed_stored_values_are_refused(data: Any) -> None:
    with pytest.raises(ValueError):
        Codec().decode(data)
