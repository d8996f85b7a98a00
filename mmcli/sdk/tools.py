"""Instrumented tools: their identity, their checks, and how their calls are stored.

A tool is known by its qualified name and a hash of its source (as muscle-mem does): a
recorded call replays only through the same tool, unchanged. Arguments equal to a
top-level param's value are stored as a reference to the param and substituted on replay.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import marshal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mmcli.sdk.check import Check
from mmcli.sdk.document import StepRecord
from mmcli.sdk.errors import EngineNotReady, UnstorableValue
from mmcli.sdk.values import Codec, Param


@dataclass(frozen=True)
class Tool:
    func: Callable[..., Any]
    name: str
    source_hash: str
    is_method: bool
    pre_check: Check[..., Any] | None
    post_check: Check[..., Any] | None

    def accepts(self, step: StepRecord) -> bool:
        """True when `step` was recorded through this tool, with the same checks."""
        return (
            step.tool == self.name
            and step.tool_hash == self.source_hash
            and step.method == self.is_method
            and (step.pre is None) == (self.pre_check is None)
            and (step.post is None) == (self.post_check is None)
        )


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[tuple[str, str], Tool] = {}

    def register(
        self,
        func: Callable[..., Any],
        is_method: bool,
        pre_check: Check[..., Any] | None,
        post_check: Check[..., Any] | None,
    ) -> Tool:
        for role, check in (("pre_check", pre_check), ("post_check", post_check)):
            if check is not None and not isinstance(check, Check):
                raise EngineNotReady(
                    f"{role} of {func.__qualname__} must be a Check, not {type(check).__name__}"
                )
        tool = Tool(func, func.__qualname__, source_hash(func), is_method, pre_check, post_check)
        key = (tool.name, tool.source_hash)
        if key in self._tools:
            raise EngineNotReady(f"Attempted to register duplicate tool {tool.name}")
        self._tools[key] = tool
        return tool

    def get(self, step: StepRecord) -> Tool | None:
        tool = self._tools.get((step.tool, step.tool_hash))
        return tool if tool is not None and tool.accepts(step) else None

    def has_methods(self) -> bool:
        return any(t.is_method for t in self._tools.values())

    def methods(self) -> list[str]:
        return sorted(t.name for t in self._tools.values() if t.is_method)

    def __len__(self) -> int:
        return len(self._tools)


def source_hash(func: Callable[..., Any]) -> str:
    """A hash of the function's source (its syntax tree), or of its code object when the
    source is not available (functions made with exec, in a REPL)."""
    try:
        lines = inspect.getsource(func).splitlines()
        indent = len(lines[0]) - len(lines[0].lstrip())
        tree = ast.parse("\n".join(line[indent:] for line in lines))
        data = ast.dump(tree, annotate_fields=True, include_attributes=False).encode()
    except (OSError, TypeError, SyntaxError, IndexError):
        code = getattr(func, "__code__", None)
        data = marshal.dumps(code) if code is not None else func.__qualname__.encode()
    return hashlib.sha256(data).hexdigest()[:16]


# ---- arguments -------------------------------------------------------------------------


def encode_call(
    codec: Codec,
    tool: Tool,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    params: Mapping[str, Any],
) -> tuple[list[Any], dict[str, Any]]:
    """A call's arguments as stored: params by reference, everything else encoded."""
    where = f"tool {tool.name!r}"
    enc_args = [
        codec.encode(_as_param(v, params), f"{where}, positional argument {i}")
        for i, v in enumerate(args)
    ]
    enc_kwargs = {
        k: codec.encode(_as_param(v, params), f"{where}, argument {k!r}") for k, v in kwargs.items()
    }
    return enc_args, enc_kwargs


def _as_param(value: Any, params: Mapping[str, Any]) -> Any:
    """`Param(key)` when `value` equals a param's value (the last such key, as
    muscle-mem does), else `value`. True never stands for 1, nor 1 for True."""
    found = None
    for key, param_value in params.items():
        if same_value(value, param_value):
            found = key
    return value if found is None else Param(found)


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool | np.bool_) != isinstance(b, bool | np.bool_):
        return False
    try:
        equal = a == b
        return bool(equal) if isinstance(equal, bool | np.bool_) else False
    except Exception:  # equality of arbitrary user values may raise anything
        return False


class MissingParam(Exception):
    """A stored call refers to a param the current engine call does not give."""


def resolve_call(
    codec: Codec, step: StepRecord, params: Mapping[str, Any], context: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments to call the tool with now: fresh values, params substituted, and
    the context object first for a method."""
    args = tuple(_substitute(codec.decode(a), params) for a in step.args)
    kwargs = {k: _substitute(codec.decode(v), params) for k, v in step.kwargs.items()}
    if step.method:
        args = (context, *args)
    return args, kwargs


def _substitute(value: Any, params: Mapping[str, Any]) -> Any:
    if isinstance(value, Param):
        if value.key not in params:
            raise MissingParam(value.key)
        return params[value.key]
    return value


def call_key(codec: Codec, step: StepRecord, params: Mapping[str, Any]) -> str:
    """A string equal for two stored calls exactly when they make the same call now."""

    def sub(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"$param"}:
            key = str(value["$param"])
            if key not in params:
                raise MissingParam(key)
            try:
                return codec.encode(params[key], "param")
            except UnstorableValue:
                return {"$repr": repr(params[key])}
        return value

    body = [
        step.tool,
        step.tool_hash,
        [sub(a) for a in step.args],
        {k: sub(v) for k, v in step.kwargs.items()},
    ]
    return json.dumps(body, sort_keys=True, default=str)
