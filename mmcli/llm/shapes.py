"""The two API shapes: Anthropic Messages and OpenAI Chat Completions.

Each shape knows where a request keeps its setup (every field but the conversation and
the few known not to change the answer: `unkeyed`) and its conversation, how to read the
answer from a response or from an event stream, and how to write an answer back as a
response or a well-formed event stream of its own kind.

An answer is kept as `{"message": assistant turn, "stop": why it ended, "model": ...,
"usage": {...}}`, the same whether it came streamed or not; and only when the model
finished it (`finished`, `finished_stream`): a body with its stop reason, a stream with
its API's own end (Anthropic's `message_stop`, OpenAI's `data: [DONE]`) and no error in it.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Iterator
from typing import Any


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {body}\n\n".encode()


def parse_sse(lines: Iterable[bytes]) -> Iterator[tuple[str | None, str]]:
    """(event, data) of each event in a `text/event-stream` body, line by line."""
    event: str | None = None
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    if data:
        yield event, "\n".join(data)


class Shape:
    name = ""
    path = ""
    """The request path the agent's SDK calls on the proxy."""
    suffix = ""
    """What the SDK appends to its base URL (the upstream's, too)."""
    default_base = ""
    env = ""
    """The environment variable that holds the base URL the SDK calls."""
    id_prefix = ""
    unkeyed: frozenset[str] = frozenset()
    """Request fields known not to change the answer; every other field is the setup,
    part of the cache key (docs/llm.md lists them and says why)."""

    def base_for_agent(self, root: str) -> str:
        return root

    def split(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        """(setup, conversation): the setup is every field but `messages` and `unkeyed`,
        so a field this code has never heard of still tells two requests apart."""
        setup = {k: v for k, v in body.items() if k != "messages" and k not in self.unkeyed}
        messages = body.get("messages")
        return setup, messages if isinstance(messages, list) else []

    def answer_of(self, response: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def collect_stream(self, events: Iterable[tuple[str | None, str]]) -> dict[str, Any]:
        raise NotImplementedError

    def finished(self, response: Any) -> dict[str, Any] | None:
        """The answer in a response body, if the model finished it; else None."""
        raise NotImplementedError

    def finished_stream(self, events: list[tuple[str | None, str]]) -> dict[str, Any] | None:
        """The answer in an event stream, if it ran to its API's own end; else None."""
        raise NotImplementedError

    def response(self, answer: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def stream(self, answer: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
        raise NotImplementedError

    def error(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError


class Anthropic(Shape):
    name = "anthropic"
    path = "/v1/messages"
    suffix = "/v1/messages"
    default_base = "https://api.anthropic.com"
    env = "ANTHROPIC_BASE_URL"
    id_prefix = "toolu_"
    unkeyed = frozenset(
        {
            "stream",  # an answer is served streamed or not, whichever was asked
            "metadata",  # the end user's id, for the provider's abuse checks
            "service_tier",  # which capacity serves the request, not what it answers
            "temperature",  # sampling: which of the model's answers comes, not the
            "top_p",  # question; a recorded answer is one the model gave to it
            "top_k",
        }
    )

    def answer_of(self, response: dict[str, Any]) -> dict[str, Any]:
        return {
            "message": {"role": "assistant", "content": response.get("content") or []},
            "stop": response.get("stop_reason") or "end_turn",
            "model": response.get("model", ""),
            "usage": _usage(response.get("usage")),
        }

    def finished(self, response: Any) -> dict[str, Any] | None:
        if (
            not isinstance(response, dict)
            or response.get("type") != "message"
            or not _named(response.get("stop_reason"))
            or not isinstance(response.get("content"), list)
        ):
            return None
        return self.answer_of(response)

    def finished_stream(self, events: list[tuple[str | None, str]]) -> dict[str, Any] | None:
        kinds, stopped = [], False
        for name, data in events:
            event = _json_object(data)
            kind = event.get("type") if event is not None else None
            if name == "error" or kind == "error" or (event is None and name != "ping"):
                return None  # overloaded, or a line that is not the API's
            kinds.append(kind)
            delta = (event or {}).get("delta")
            if kind == "message_delta" and isinstance(delta, dict):
                stopped = stopped or _named(delta.get("stop_reason"))
        if not kinds or kinds[0] != "message_start" or kinds[-1] != "message_stop" or not stopped:
            return None
        return self.collect_stream(events)

    def collect_stream(self, events: Iterable[tuple[str | None, str]]) -> dict[str, Any]:
        message: dict[str, Any] = {}
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, str] = {}
        for _, data in events:
            try:
                event = json.loads(data)
            except ValueError:
                continue
            kind = event.get("type")
            if kind == "message_start":
                message = dict(event.get("message") or {})
            elif kind == "content_block_start":
                blocks[event["index"]] = dict(event.get("content_block") or {})
            elif kind == "content_block_delta":
                block, delta = blocks.setdefault(event["index"], {}), event.get("delta") or {}
                if delta.get("type") == "text_delta":
                    block["text"] = block.get("text", "") + delta.get("text", "")
                elif delta.get("type") == "input_json_delta":
                    partial[event["index"]] = partial.get(event["index"], "") + delta.get(
                        "partial_json", ""
                    )
                elif delta.get("type") == "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
                elif delta.get("type") == "signature_delta":
                    block["signature"] = delta.get("signature", "")
            elif kind == "message_delta":
                message.update(event.get("delta") or {})
                message["usage"] = {**(message.get("usage") or {}), **(event.get("usage") or {})}
        for index, text in partial.items():
            blocks[index]["input"] = json.loads(text) if text else {}
        message["content"] = [blocks[i] for i in sorted(blocks)]
        return self.answer_of(message)

    def response(self, answer: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "msg_" + secrets.token_hex(12),
            "type": "message",
            "role": "assistant",
            "model": answer.get("model", ""),
            "content": answer["message"].get("content", []),
            "stop_reason": answer.get("stop", "end_turn"),
            "stop_sequence": None,
            "usage": answer.get("usage") or {"input_tokens": 0, "output_tokens": 0},
        }

    def stream(self, answer: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
        full = self.response(answer)
        usage = full["usage"]
        start = {**full, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        yield sse("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(full["content"]):
            kind = block.get("type")
            if kind == "text":
                first, delta = {**block, "text": ""}, {"type": "text_delta", "text": block["text"]}
            elif kind in ("tool_use", "server_tool_use"):
                first = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            elif kind == "thinking":
                first = {"type": "thinking", "thinking": ""}
                delta = {"type": "thinking_delta", "thinking": block.get("thinking", "")}
            else:
                first, delta = block, None
            yield sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
            if delta is not None:
                yield sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            if kind == "thinking" and block.get("signature"):
                signed = {"type": "signature_delta", "signature": block["signature"]}
                yield sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": signed},
                )
            yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": full["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        )
        yield sse("message_stop", {"type": "message_stop"})

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


class OpenAI(Shape):
    name = "openai"
    path = "/v1/chat/completions"
    suffix = "/chat/completions"
    default_base = "https://api.openai.com/v1"
    env = "OPENAI_BASE_URL"
    id_prefix = "call_"

    unkeyed = frozenset(
        {
            "stream",
            "stream_options",  # whether a stream ends with a usage chunk: served as asked
            "user",  # the end user's id, for the provider's abuse checks
            "safety_identifier",
            "metadata",  # tags for the provider's dashboard
            "store",  # whether the provider keeps the completion
            "prompt_cache_key",  # the provider's cache routing
            "service_tier",
            "temperature",  # sampling, as for Anthropic
            "top_p",
            "seed",
        }
    )

    def base_for_agent(self, root: str) -> str:
        return root + "/v1"

    def answer_of(self, response: dict[str, Any]) -> dict[str, Any]:
        choices = response.get("choices") or [{}]
        message = dict(choices[0].get("message") or {})
        message = {k: v for k, v in message.items() if v not in (None, [])}
        message["role"] = "assistant"
        return {
            "message": message,
            "stop": choices[0].get("finish_reason") or "stop",
            "model": response.get("model", ""),
            "usage": _usage(response.get("usage")),
        }

    def finished(self, response: Any) -> dict[str, Any] | None:
        choices = response.get("choices") if isinstance(response, dict) else None
        if (
            not isinstance(choices, list)
            or len(choices) != 1  # `n` > 1: one choice kept would answer for all of them
            or not isinstance(choices[0], dict)
            or not isinstance(choices[0].get("message"), dict)
            or not _named(choices[0].get("finish_reason"))
        ):
            return None
        return self.answer_of(response)

    def finished_stream(self, events: list[tuple[str | None, str]]) -> dict[str, Any] | None:
        if not events or events[-1][1].strip() != "[DONE]":
            return None
        stopped = False
        for _, data in events[:-1]:
            chunk = _json_object(data)
            if chunk is None or "error" in chunk or not isinstance(chunk.get("choices"), list):
                return None
            for choice in chunk["choices"]:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    return None  # `n` > 1, as above
                stopped = stopped or _named(choice.get("finish_reason"))
        return self.collect_stream(events) if stopped else None

    def collect_stream(self, events: Iterable[tuple[str | None, str]]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        calls: dict[int, dict[str, Any]] = {}
        finish, model, usage = None, "", None
        for _, data in events:
            if data.strip() == "[DONE]":
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                continue
            model = chunk.get("model") or model
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    message["content"] = message.get("content", "") + delta["content"]
                for part in delta.get("tool_calls") or []:
                    call = calls.setdefault(
                        part.get("index", 0),
                        {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                    )
                    call["id"] = part.get("id") or call["id"]
                    fn = part.get("function") or {}
                    call["function"]["name"] += fn.get("name") or ""
                    call["function"]["arguments"] += fn.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return self.answer_of(
            {
                "model": model,
                "usage": usage,
                "choices": [{"message": message, "finish_reason": finish}],
            }
        )

    def response(self, answer: dict[str, Any]) -> dict[str, Any]:
        message = {"content": None, **answer["message"], "role": "assistant"}
        return {
            "id": "chatcmpl-" + secrets.token_hex(12),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": answer.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": answer.get("stop", "stop"),
                    "logprobs": None,
                }
            ],
            "usage": answer.get("usage")
            or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def stream(self, answer: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
        full = self.response(answer)
        message = full["choices"][0]["message"]
        head = {k: full[k] for k in ("id", "created", "model")}
        head["object"] = "chat.completion.chunk"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return sse(None, {**head, "choices": [choice]})

        yield chunk({"role": "assistant", "content": ""})
        if message.get("content"):
            yield chunk({"content": message["content"]})
        for index, call in enumerate(message.get("tool_calls") or []):
            fn = call.get("function") or {}
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.get("id"),
                            "type": "function",
                            "function": {"name": fn.get("name", ""), "arguments": ""},
                        }
                    ]
                }
            )
            yield chunk(
                {"tool_calls": [{"index": index, "function": {"arguments": fn.get("arguments")}}]}
            )
        yield chunk({}, full["choices"][0]["finish_reason"])
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            yield sse(None, {**head, "choices": [], "usage": full["usage"]})
        yield sse(None, "[DONE]")

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "invalid_request_error", "code": status}}


def _named(value: Any) -> bool:
    """A stop reason the API gave: a non-empty string."""
    return isinstance(value, str) and bool(value)


def _json_object(data: str) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usage(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


SHAPES: dict[str, Shape] = {s.name: s for s in (Anthropic(), OpenAI())}


def shape_for(path: str) -> Shape | None:
    for shape in SHAPES.values():
        if path.rstrip("/") == shape.path:
            return shape
    return None
