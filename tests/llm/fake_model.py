"""A stand-in for a model provider on 127.0.0.1: speaks the Anthropic Messages and OpenAI
Chat Completions APIs, streamed or not, and decides its answers by looking at the
screenshot it receives, as a computer-use model would. It counts the calls it answers.

The task it knows: "type NAME into the first field of the form". From the latest
screenshot it finds the first text field (a white box at least 200 px wide on the screen)
and clicks its centre; after a click it types the name given in the task; after typing it
says it is done. Independent of mmcli on purpose (its own event streams).
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from PIL import Image

TASK = re.compile(r"type (.+?) into the first field")


def first_field(png: bytes) -> tuple[int, int] | None:
    """Centre of the first white box at least 200 px wide, from the top of the screen."""
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    white = (pixels == 255).all(axis=2)
    for y in range(white.shape[0]):
        row = white[y]
        if row.sum() < 200:
            continue
        xs = np.flatnonzero(row)
        runs = np.split(xs, np.flatnonzero(np.diff(xs) != 1) + 1)
        run = next((r for r in runs if len(r) >= 200), None)
        if run is None:
            continue
        x0, x1 = int(run[0]), int(run[-1])
        y1 = y
        while y1 + 1 < white.shape[0] and white[y1 + 1, x0:x1].all():
            y1 += 1
        return ((x0 + x1) // 2, (y + y1) // 2)
    return None


def decide(task: str, last_action: str | None, screenshot: bytes | None) -> dict[str, Any]:
    """The next step: {"action": ...} for a tool call, or {"text": ...} to finish."""
    found = TASK.search(task)
    if found is None:
        return {"text": "I do not know this task."}
    if screenshot is None:
        return {"action": "screenshot"}
    if last_action in ("screenshot", None):
        point = first_field(screenshot)
        if point is None:
            return {"text": "I cannot find the form on the screen."}
        return {"action": "left_click", "coordinate": list(point)}
    if last_action == "left_click":
        return {"action": "type", "text": found.group(1)}
    return {"text": "Done: the name is typed."}


# ---- reading the conversation ------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def _images(value: Any) -> list[bytes]:
    found: list[bytes] = []
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("source"), dict):
            found.append(base64.b64decode(value["source"]["data"]))
        elif value.get("type") == "image_url":
            url = value["image_url"]["url"]
            found.append(base64.b64decode(url.split(",", 1)[1]))
        else:
            for v in value.values():
                found += _images(v)
    elif isinstance(value, list):
        for v in value:
            found += _images(v)
    return found


def _last_action(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                return str(block["input"].get("action"))
        for call in message.get("tool_calls") or []:
            return str(json.loads(call["function"]["arguments"]).get("action"))
        return None
    return None


def _latest_screenshot(messages: list[Any]) -> bytes | None:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return None
        shots = _images(message.get("content"))
        if shots:
            return shots[-1]
    return None


# ---- the server ----------------------------------------------------------------------------


class FakeModel:
    def __init__(self) -> None:
        self.calls = 0
        self.seen_keys: list[str] = []
        self.paths: list[str] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with model.lock:
                    model.calls += 1
                    model.paths.append(self.path)
                    model.seen_keys.append(
                        self.headers.get("x-api-key") or self.headers.get("Authorization") or ""
                    )
                messages = body["messages"]
                task = next(_text_of(m["content"]) for m in messages if m["role"] == "user")
                step = decide(task, _last_action(messages), _latest_screenshot(messages))
                path = self.path.split("?", 1)[0]
                if path.endswith("/v1/messages"):
                    self._anthropic(body, step)
                elif path.endswith("/chat/completions"):
                    self._openai(body, step)
                else:
                    self.send_error(404)

            def _send(self, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, events: list[bytes]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for e in events:
                    self.wfile.write(e)
                    self.wfile.flush()
                self.close_connection = True

            def _anthropic(self, body: dict[str, Any], step: dict[str, Any]) -> None:
                n = model.calls
                if "action" in step:
                    block: dict[str, Any] = {
                        "type": "tool_use",
                        "id": f"toolu_fake{n:04d}",
                        "name": "computer",
                        "input": step,
                    }
                    stop = "tool_use"
                else:
                    block, stop = {"type": "text", "text": step["text"]}, "end_turn"
                message = {
                    "id": f"msg_fake{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": [block],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                }
                if not body.get("stream"):
                    self._send(message)
                    return

                def ev(name: str, data: dict[str, Any]) -> bytes:
                    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

                start = {**message, "content": [], "stop_reason": None}
                events = [ev("message_start", {"type": "message_start", "message": start})]
                if block["type"] == "text":
                    first = {"type": "text", "text": ""}
                    text = block["text"]
                    deltas = [{"type": "text_delta", "text": text[:5]}]
                    deltas.append({"type": "text_delta", "text": text[5:]})
                else:
                    first = {**block, "input": {}}
                    js = json.dumps(block["input"])
                    deltas = [
                        {"type": "input_json_delta", "partial_json": js[:7]},
                        {"type": "input_json_delta", "partial_json": js[7:]},
                    ]
                events.append(
                    ev(
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": first},
                    )
                )
                events.append(ev("ping", {"type": "ping"}))
                for d in deltas:
                    events.append(
                        ev(
                            "content_block_delta",
                            {"type": "content_block_delta", "index": 0, "delta": d},
                        )
                    )
                events.append(ev("content_block_stop", {"type": "content_block_stop", "index": 0}))
                events.append(
                    ev(
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 20},
                        },
                    )
                )
                events.append(ev("message_stop", {"type": "message_stop"}))
                self._stream(events)

            def _openai(self, body: dict[str, Any], step: dict[str, Any]) -> None:
                n = model.calls
                message: dict[str, Any] = {"role": "assistant", "content": None}
                if "action" in step:
                    message["tool_calls"] = [
                        {
                            "id": f"call_fake{n:04d}",
                            "type": "function",
                            "function": {"name": "computer", "arguments": json.dumps(step)},
                        }
                    ]
                    finish = "tool_calls"
                else:
                    message["content"], finish = step["text"], "stop"
                head = {"id": f"chatcmpl-fake{n}", "created": 1700000000, "model": body["model"]}
                if not body.get("stream"):
                    choice = {"index": 0, "message": message, "finish_reason": finish}
                    self._send(
                        {
                            **head,
                            "object": "chat.completion",
                            "choices": [choice],
                            "usage": {"prompt_tokens": 9, "total_tokens": 12},
                        }
                    )
                    return

                def chunk(delta: dict[str, Any], fin: str | None = None) -> bytes:
                    c = {"index": 0, "delta": delta, "finish_reason": fin}
                    data = {**head, "object": "chat.completion.chunk", "choices": [c]}
                    return f"data: {json.dumps(data)}\n\n".encode()

                events = [chunk({"role": "assistant", "content": ""})]
                if message.get("content"):
                    events.append(chunk({"content": message["content"][:4]}))
                    events.append(chunk({"content": message["content"][4:]}))
                for call in message.get("tool_calls") or []:
                    args = call["function"]["arguments"]
                    events.append(
                        chunk(
                            {
                                "tool_calls": [
                                    {
                                        "index": 0,
                                        "id": call["id"],
                                        "type": "function",
                                        "function": {"name": "computer", "arguments": args[:6]},
                                    }
                                ]
                            }
                        )
                    )
                    events.append(
                        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[6:]}}]})
                    )
                events.append(chunk({}, finish))
                events.append(b"data: [DONE]\n\n")
                self._stream(events)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
