"""Only complete answers are kept, end to end through `mm`: an upstream that cuts its
stream, errs in the middle of it, never ends it, fails or cuts a body is passed on to the
agent as it was, never recorded, and never answered from memory later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

HALF = "The complete answer is: click the bl"
WHOLE = "The complete answer is: click the blue button."


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def anthropic_events(text: str) -> list[bytes]:
    start = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": []}
    return [
        sse("message_start", {"type": "message_start", "message": {**start, "usage": {}}}),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
    ]


def anthropic_end() -> list[bytes]:
    return [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        sse("message_stop", {"type": "message_stop"}),
    ]


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return sse(
        None, {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    )


def message(text: str, stop: str | None = "end_turn") -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": content, "stop_reason": stop, "usage": {}}  # fmt: skip


class Upstream(BaseHTTPRequestHandler):
    """Answers by the mode named in the request's text; counts what it answered."""

    protocol_version = "HTTP/1.1"
    calls: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        mode = body["messages"][-1]["content"]
        Upstream.calls.append(mode)
        getattr(self, "mode_" + mode.replace("-", "_"))()

    def head(self, status: int, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()

    def chunked(self, parts: list[bytes], end: bool) -> None:
        self.head(200, "text/event-stream", Transfer_Encoding="chunked")
        for part in parts:
            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            self.wfile.flush()
        if end:
            self.wfile.write(b"0\r\n\r\n")
        self.close_connection = not end

    def json(self, status: int, payload: Any, cut: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.head(status, "application/json", Content_Length=str(len(data)))
        self.wfile.write(data[: len(data) // 2] if cut else data)
        self.close_connection = cut

    # -- complete: kept --
    def mode_whole(self) -> None:
        self.json(200, message(WHOLE))

    def mode_whole_stream(self) -> None:
        self.chunked(anthropic_events(WHOLE) + anthropic_end(), end=True)

    # -- not complete: never kept --
    def mode_cut_chunked(self) -> None:  # the connection drops mid-stream
        self.chunked(anthropic_events(HALF), end=False)

    def mode_cut_close(self) -> None:  # a stream that just ends, without message_stop
        self.head(200, "text/event-stream", Connection="close")
        self.wfile.write(b"".join(anthropic_events(HALF)))
        self.close_connection = True

    def mode_error_event(self) -> None:  # overloaded in the middle of the answer
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        self.chunked([*anthropic_events(HALF), sse("error", error)], end=True)

    def mode_no_done(self) -> None:  # an OpenAI stream without `data: [DONE]`
        chunks = [openai_chunk({"role": "assistant", "content": HALF})]
        self.chunked(chunks, end=True)

    def mode_cut_body(self) -> None:  # Content-Length promised, half sent
        self.json(200, message(HALF), cut=True)

    def mode_no_stop(self) -> None:  # a 200 whose body has no stop reason
        self.json(200, message(HALF, stop=None))

    def mode_server_error(self) -> None:
        self.json(500, {"type": "error", "error": {"type": "api_error", "message": HALF}})

    def mode_overloaded(self) -> None:
        self.json(529, {"type": "error", "error": {"type": "overloaded_error", "message": HALF}})


# (mode, API path, streamed)
BAD = [
    ("cut-chunked", "/v1/messages", True),
    ("cut-close", "/v1/messages", True),
    ("error-event", "/v1/messages", True),
    ("no-done", "/v1/chat/completions", True),
    ("cut-body", "/v1/messages", False),
    ("no-stop", "/v1/messages", False),
    ("server-error", "/v1/messages", False),
    ("overloaded", "/v1/messages", False),
]
GOOD = [("whole", "/v1/messages", False), ("whole-stream", "/v1/messages", True)]

# The agent: asks each request through the proxy its SDKs are pointed at (raw HTTP, to
# see exactly what arrives) and writes down what it got.
AGENT = """
import http.client, json, os, sys
from urllib.parse import urlsplit
base = urlsplit(os.environ["ANTHROPIC_BASE_URL"])
seen = {}
for mode, path, stream in json.loads(sys.argv[2]):
    body = {"model": "m", "max_tokens": 10, "stream": stream,
            "messages": [{"role": "user", "content": mode}]}
    conn = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
    conn.request("POST", base.path + path, json.dumps(body), {"x-api-key": "k"})
    try:
        response = conn.getresponse()
        seen[mode] = [response.status, response.read().decode()]
    except http.client.IncompleteRead:
        seen[mode] = [response.status, "CUT"]
    except Exception as e:
        seen[mode] = [0, type(e).__name__]
    conn.close()
open(sys.argv[1], "w").write(json.dumps(seen))
"""


@pytest.fixture
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Upstream.calls = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def mm(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "mmcli", *args], env=env, capture_output=True, text=True, timeout=180
    )


def agent(out: Path, requests: list[tuple[str, str, bool]]) -> list[str]:
    return [sys.executable, "-c", AGENT, str(out), json.dumps(requests)]


def test_only_answers_the_model_finished_are_kept(
    upstream: str, isolated_store: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    rec = mm("record", "t", "--llm", "--upstream", upstream, "--", *agent(seen, GOOD + BAD))
    assert rec.returncode == 0, rec.stderr
    got = json.loads(seen.read_text())
    # only the finished answers kept
    document = (isolated_store / "t.toml").read_text()
    assert WHOLE in document
    assert HALF not in document.replace(WHOLE, "")
    # the others passed on as they were
    assert got["cut-chunked"] == [200, "CUT"]
    assert got["cut-close"][0] == 200 and HALF in got["cut-close"][1]
    assert "message_stop" not in got["cut-close"][1]
    assert "overloaded_error" in got["error-event"][1]
    assert HALF in got["no-done"][1] and "[DONE]" not in got["no-done"][1]
    assert got["cut-body"][0] == 502 and "cut off" in got["cut-body"][1]
    assert got["server-error"][0] == 500 and got["overloaded"][0] == 529

    # later, with no model: the finished ones from memory, the rest refused (never a half)
    Upstream.calls = []
    seen.unlink()
    replay = mm("replay", "t", "--no-agent")  # the recorded agent, the same requests
    assert replay.returncode == 3, replay.stderr
    got = json.loads(seen.read_text())
    assert Upstream.calls == []
    assert got["whole"][0] == 200 and WHOLE in got["whole"][1]
    assert got["whole-stream"][0] == 200 and "message_stop" in got["whole-stream"][1]
    for mode, _, _ in BAD:
        assert got[mode][0] == 422, (mode, got[mode])
        assert HALF not in got[mode][1]
