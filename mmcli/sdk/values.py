"""Python values <-> TOML-ready data, for tool arguments and captured snapshots.

Plain JSON values (strings, numbers, booleans, lists, tables with string keys) are
written as they are. Everything else is a table with one key naming its type:

    {"$none" = true}                          None (TOML has no null)
    {"$tuple" = [...]}                        a tuple
    {"$int" = "123..."}                       an integer beyond 64 bits
    {"$dict" = {...}}                         a table whose keys start with "$"
    {"$bytes" = "base64"}                     bytes, bytearray
    {"$ndarray" = {dtype, shape, data}}       a numpy array of numbers or booleans
    {"$fingerprint" = {...}}                  a screen fingerprint (as in CLI recordings)
    {"$screen" = {...}}                       a `ScreenSnapshot` (fingerprint, reference)
    {"$dataclass" = {class, fields}}          a dataclass instance, by class path
    {"$param" = "key"}                        a top-level param (tool arguments only)

Store files may come from anywhere, so decoding never imports a module and never
unpickles: a dataclass is rebuilt only from a class this process already has (one it
encoded itself, or one found in a module that is already imported).
"""

from __future__ import annotations

import base64
import dataclasses
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mmcli.screen.fingerprint import Fingerprint
from mmcli.sdk.errors import UnknownClass, UnstorableValue
from mmcli.store.codec import fingerprint_doc, fingerprint_from_doc

INT_RANGE = (-(2**63), 2**63 - 1)
"""TOML integers are 64-bit; larger ones are written as strings."""
ARRAY_KINDS = "biuf"
"""numpy dtype kinds that may be stored: booleans, integers, floats."""


@dataclass(frozen=True)
class Param:
    """A tool argument recorded as a reference to a top-level param."""

    key: str


class Codec:
    """Encodes and decodes values; remembers the dataclasses it has seen encoded."""

    def __init__(self) -> None:
        self._classes: dict[str, type] = {}

    # ---- encoding ----------------------------------------------------------------------

    def encode(self, value: Any, where: str) -> Any:
        """TOML-ready data for `value`; `UnstorableValue` naming `where` if impossible."""
        if value is None:
            return {"$none": True}
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, int):
            number = int(value)
            return number if INT_RANGE[0] <= number <= INT_RANGE[1] else {"$int": str(number)}
        if isinstance(value, float):
            return float(value)
        if isinstance(value, Param):
            return {"$param": value.key}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return {"$tuple": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, dict):
            return self._encode_dict(value, where)
        if isinstance(value, bytes | bytearray):
            return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
        special = self._encode_special(value, where)
        if special is not None:
            return special
        raise UnstorableValue(
            f"{where}: cannot store a value of type {_type_name(value)}; use JSON values, "
            "bytes, tuples, dataclasses, numpy arrays or screen fingerprints"
        )

    def _encode_dict(self, value: dict[Any, Any], where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise UnstorableValue(
                    f"{where}: dictionary key {key!r} is a {_type_name(key)}, not a string"
                )
            out[key] = self.encode(item, f"{where}[{key!r}]")
        if any(k.startswith("$") for k in out):
            return {"$dict": out}
        return out

    def _encode_special(self, value: Any, where: str) -> dict[str, Any] | None:
        from mmcli.sdk.screen import ScreenSnapshot, snapshot_doc

        if isinstance(value, np.generic) and value.dtype.kind in ARRAY_KINDS:
            return self.encode(value.item(), where)
        if isinstance(value, np.ndarray):
            return {"$ndarray": _array_doc(value, where)}
        if isinstance(value, Fingerprint):
            return {"$fingerprint": fingerprint_doc(value)}
        if isinstance(value, ScreenSnapshot):
            return {"$screen": snapshot_doc(value)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            path = f"{cls.__module__}:{cls.__qualname__}"
            self._classes[path] = cls
            fields = {
                f.name: self.encode(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value)
            }
            return {"$dataclass": {"class": path, "fields": fields}}
        return None

    # ---- decoding ----------------------------------------------------------------------

    def decode(self, data: Any) -> Any:
        """The value `data` encodes (fresh objects each time). Malformed data raises
        `ValueError`; a dataclass this process does not have raises `UnknownClass`."""
        if isinstance(data, list):
            return [self.decode(v) for v in data]
        if not isinstance(data, dict):
            if isinstance(data, bool | int | float | str):
                return data
            raise ValueError(f"unexpected stored value of type {type(data).__name__}")
        tags = [k for k in data if k.startswith("$")]
        if not tags:
            return {k: self.decode(v) for k, v in data.items()}
        if len(data) != 1:
            raise ValueError(f"a tagged value has extra keys: {sorted(data)}")
        tag = tags[0]
        body = data[tag]
        decoder = _DECODERS.get(tag)
        if decoder is None:
            raise ValueError(f"unknown value type {tag!r}")
        return decoder(self, body)

    def _decode_dataclass(self, body: Any) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("fields"), dict):
            raise ValueError("a $dataclass needs a class and fields")
        path = body.get("class")
        if not isinstance(path, str):
            raise ValueError("a $dataclass class must be a string")
        cls = self._classes.get(path) or _loaded_class(path)
        values = {k: self.decode(v) for k, v in body["fields"].items()}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if set(values) != set(fields):
            raise ValueError(f"stored fields of {path} do not match the class")
        init = {k: v for k, v in values.items() if fields[k].init}
        obj = cls(**init)
        for key, value in values.items():
            if not fields[key].init:
                object.__setattr__(obj, key, value)
        return obj


def _loaded_class(path: str) -> type:
    """The dataclass at `module:qualname`, from a module already imported (never imports)."""
    module_name, _, qualname = path.partition(":")
    module = sys.modules.get(module_name)
    if module is None or not qualname or "<locals>" in qualname:
        raise UnknownClass(
            f"stored snapshot class {path} is not available in this process; "
            f"import {module_name} (and define the class at module level) before the engine runs"
        )
    obj: Any = module
    for part in qualname.split("."):
        obj = vars(obj).get(part) if hasattr(obj, "__dict__") else None
        if obj is None:
            raise UnknownClass(f"stored snapshot class {path} is not defined in {module_name}")
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise UnknownClass(f"stored snapshot class {path} is not a dataclass")
    return obj


def _array_doc(value: np.ndarray, where: str) -> dict[str, Any]:
    if value.dtype.kind not in ARRAY_KINDS:
        raise UnstorableValue(f"{where}: cannot store a numpy array of dtype {value.dtype}")
    data = np.ascontiguousarray(value).tobytes()
    return {
        "dtype": value.dtype.str,
        "shape": list(value.shape),
        "data": base64.b64encode(data).decode("ascii"),
    }


def _decode_array(codec: Codec, body: Any) -> np.ndarray:
    if not isinstance(body, dict):
        raise ValueError("a $ndarray must be a table")
    dtype = np.dtype(str(body["dtype"]))
    if dtype.kind not in ARRAY_KINDS:
        raise ValueError(f"numpy dtype {dtype} may not be stored")
    shape = body["shape"]
    if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError("a $ndarray shape must be a list of sizes")
    raw = base64.b64decode(str(body["data"]), validate=True)
    if len(raw) != dtype.itemsize * math.prod(shape):
        raise ValueError("a $ndarray has the wrong number of bytes for its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _decode_int(codec: Codec, body: Any) -> int:
    if not isinstance(body, str):
        raise ValueError("a $int must be a string of digits")
    return int(body)


def _decode_tuple(codec: Codec, body: Any) -> tuple[Any, ...]:
    if not isinstance(body, list):
        raise ValueError("a $tuple must be an array")
    return tuple(codec.decode(v) for v in body)


def _decode_dict(codec: Codec, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ValueError("a $dict must be a table")
    return {k: codec.decode(v) for k, v in body.items()}


def _decode_bytes(codec: Codec, body: Any) -> bytes:
    if not isinstance(body, str):
        raise ValueError("$bytes must be a base64 string")
    return base64.b64decode(body, validate=True)


def _decode_param(codec: Codec, body: Any) -> Param:
    if not isinstance(body, str):
        raise ValueError("a $param must name a param")
    return Param(body)


def _decode_screen(codec: Codec, body: Any) -> Any:
    from mmcli.sdk.screen import snapshot_from_doc

    return snapshot_from_doc(body)


_DECODERS: dict[str, Callable[[Codec, Any], Any]] = {
    "$none": lambda codec, body: None,
    "$int": _decode_int,
    "$tuple": _decode_tuple,
    "$dict": _decode_dict,
    "$bytes": _decode_bytes,
    "$ndarray": _decode_array,
    "$fingerprint": lambda codec, body: fingerprint_from_doc(body, "$fingerprint"),
    "$screen": _decode_screen,
    "$dataclass": Codec._decode_dataclass,
    "$param": _decode_param,
}


def _type_name(value: Any) -> str:
    cls = type(value)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )
