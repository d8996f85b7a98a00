"""Requests and answers in a comparable form, whatever the provider.

A request body is walked once: tool-call ids become `#1`, `#2`... in order of first
appearance (so a conversation answered with fresh ids compares equal to the recorded
one), param and secret values become `{{key}}` placeholders (a literal `{{` is escaped:
only `mm` writes placeholders), `cache_control` marks and null fields are dropped (agents
move them around between calls), and each base64 screenshot becomes an image marker
`{"$image": LiveImage}` (live) or `{"$screen": id}` (stored).

Comparing: the last turns of a request (what the agent saw since the model last spoke)
must match exactly, screenshots judged as screens; earlier turns are history, where a
screenshot may have been dropped or replaced by text (agents keep only the last few).
An assistant turn is compared by what it said and did (text, tool calls), not by the
fields an SDK adds when it echoes the message back.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mmcli.model import escape_braces, render_template
from mmcli.params import parametrize

ID_KEYS = ("tool_use_id", "tool_call_id")
DROPPED_KEYS = ("cache_control",)


@dataclass
class LiveImage:
    """A screenshot as it arrived in a request: base64 data, decoded only when compared."""

    data: str
    media_type: str = ""
    decoded: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What `screens.frame_of` made of it (decoded once per request)."""

    @cached_property
    def raw(self) -> bytes:
        try:
            return base64.b64decode(self.data, validate=False)
        except (binascii.Error, ValueError):
            return b""


@dataclass
class IdMap:
    """Tool-call ids of one conversation, numbered in order of first appearance."""

    numbers: dict[str, str] = field(default_factory=dict)
    raws: dict[str, str] = field(default_factory=dict)

    def number(self, raw: str) -> str:
        if raw not in self.numbers:
            token = f"#{len(self.numbers) + 1}"
            self.numbers[raw] = token
            self.raws[token] = raw
        return self.numbers[raw]

    def raw(self, token: str, fresh: Callable[[], str]) -> str:
        """The live id of `token`; a fresh one (remembered) for an id the answer introduces."""
        if token not in self.raws:
            new = fresh()
            self.raws[token] = new
            self.numbers[new] = token
        return self.raws[token]


def image_marker(value: dict[str, Any]) -> LiveImage | None:
    """The screenshot in an Anthropic image block or an OpenAI `image_url` data URL."""
    kind = value.get("type")
    if kind == "image":
        source = value.get("source")
        if isinstance(source, dict) and source.get("type") == "base64":
            return LiveImage(str(source.get("data", "")), str(source.get("media_type", "")))
    if kind == "image_url":
        image = value.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str) and url.startswith("data:") and "," in url:
            head, data = url.split(",", 1)
            return LiveImage(data, head[5:].split(";", 1)[0])
    if kind == "input_image":  # OpenAI Responses-style parts, in case an agent mixes them
        url = value.get("image_url")
        if isinstance(url, str) and url.startswith("data:") and "," in url:
            head, data = url.split(",", 1)
            return LiveImage(data, head[5:].split(";", 1)[0])
    return None


def is_image(value: Any) -> bool:
    return isinstance(value, dict) and ("$image" in value or "$screen" in value)


def normalize(value: Any, ids: IdMap, values: Mapping[str, str]) -> Any:
    """`value` (parsed JSON) in comparable form; see the module docstring."""
    if isinstance(value, dict):
        image = image_marker(value)
        if image is not None:
            return {"$image": image}
        out: dict[str, Any] = {}
        is_call = value.get("type") in ("tool_use", "server_tool_use") or "function" in value
        for key, item in value.items():
            if item is None or key in DROPPED_KEYS:
                continue
            if isinstance(item, str) and (key in ID_KEYS or (key == "id" and is_call)):
                out[key] = ids.number(item)
            else:
                out[key] = normalize(item, ids, values)
        return out
    if isinstance(value, list):
        return [normalize(v, ids, values) for v in value]
    if isinstance(value, str):
        return parametrize(escape_braces(value), values)
    return value


def denormalize(value: Any, ids: IdMap, fresh: Callable[[], str], values: Mapping[str, str]) -> Any:
    """A stored answer made live: ids mapped back (fresh ones for new calls), params filled."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        is_call = value.get("type") in ("tool_use", "server_tool_use") or "function" in value
        for key, item in value.items():
            if isinstance(item, str) and (key in ID_KEYS or (key == "id" and is_call)):
                out[key] = ids.raw(item, fresh)
            else:
                out[key] = denormalize(item, ids, fresh, values)
        return out
    if isinstance(value, list):
        return [denormalize(v, ids, fresh, values) for v in value]
    if isinstance(value, str) and "{{" in value:
        return render_template(value, values)
    return value


def fresh_id(prefix: str) -> Callable[[], str]:
    return lambda: prefix + secrets.token_hex(12)


# ---- comparing ---------------------------------------------------------------------------

ScreenJudge = Callable[[dict[str, Any], dict[str, Any]], bool]
"""(recorded marker, live marker) -> the screens match."""


def same(recorded: Any, live: Any, judge: ScreenJudge | None) -> bool:
    """Whether a live value matches the recorded one. With `judge`, screenshots are
    compared by it and lists must align one to one; without (history), a recorded
    screenshot matches any live one, or a text in its place, or nothing."""
    if is_image(recorded) or is_image(live):
        if not (is_image(recorded) and is_image(live)):
            return False
        return judge is None or judge(recorded, live)
    if isinstance(recorded, dict):
        if not isinstance(live, dict) or recorded.keys() != live.keys():
            return False
        return all(same(recorded[k], live[k], judge) for k in recorded)
    if isinstance(recorded, list):
        if not isinstance(live, list):
            return False
        if judge is not None:
            return len(recorded) == len(live) and all(
                same(r, lv, judge) for r, lv in zip(recorded, live, strict=True)
            )
        return _same_history_list(recorded, live)
    return bool(recorded == live)


def _same_history_list(recorded: list[Any], live: list[Any]) -> bool:
    i = j = 0
    while i < len(recorded) and j < len(live):
        r, lv = recorded[i], live[j]
        if is_image(r) and not is_image(lv):
            if i + 1 < len(recorded) and same(recorded[i + 1], lv, None):
                i += 1  # dropped
                continue
            if _is_text(lv):
                i, j = i + 1, j + 1  # replaced by a text
                continue
            return False
        if not same(r, lv, None):
            return False
        i, j = i + 1, j + 1
    return j == len(live) and all(is_image(r) for r in recorded[i:])


def _is_text(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, dict) and value.get("type") == "text")


def said(message: Any) -> list[Any]:
    """What an assistant turn said and did: its texts and tool calls, in order."""
    if not isinstance(message, dict):
        return [message]
    out: list[Any] = []
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            out.append(("text", str(block["text"]).strip()))
        elif kind in ("tool_use", "server_tool_use"):
            out.append(("call", block.get("id"), block.get("name"), block.get("input")))
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            fn = call.get("function") or {}
            out.append(("call", call.get("id"), fn.get("name"), _arguments(fn.get("arguments"))))
    return out


def _arguments(text: Any) -> Any:
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def same_message(recorded: Any, live: Any, judge: ScreenJudge | None) -> bool:
    if (
        isinstance(recorded, dict)
        and isinstance(live, dict)
        and recorded.get("role") == live.get("role") == "assistant"
    ):
        return said(recorded) == said(live)
    return same(recorded, live, judge)


def same_turns(recorded: list[Any], live: list[Any], judge: ScreenJudge | None) -> bool:
    return len(recorded) == len(live) and all(
        same_message(r, lv, judge) for r, lv in zip(recorded, live, strict=True)
    )


def images(value: Any) -> list[dict[str, Any]]:
    """Every image marker in `value`, in order."""
    if is_image(value):
        return [value]
    if isinstance(value, dict):
        return [m for v in value.values() for m in images(v)]
    if isinstance(value, list):
        return [m for v in value for m in images(v)]
    return []


def replace_images(value: Any, swap: Callable[[dict[str, Any]], Any]) -> Any:
    if is_image(value):
        return swap(value)
    if isinstance(value, dict):
        return {k: replace_images(v, swap) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_images(v, swap) for v in value]
    return value


def target_of(answer_message: Any) -> tuple[int, int] | None:
    """Where the answer's first tool call acts on the screen (a computer-use click), if
    it says: `coordinate: [x, y]` or `x`/`y` in its input."""
    for item in said(answer_message):
        if item[0] != "call" or not isinstance(item[3], dict):
            continue
        args = item[3]
        point = args.get("coordinate")
        if isinstance(point, list) and len(point) == 2 and all(_int(v) for v in point):
            return (int(point[0]), int(point[1]))
        if _int(args.get("x")) and _int(args.get("y")):
            return (int(args["x"]), int(args["y"]))
    return None


def _int(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
