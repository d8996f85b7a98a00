"""Secrets in model answers, end to end through `mm`: an answer is the same recorded and
replayed. The model's own literal `{{pin}}` stays `{{pin}}`, and so does the user's in the
agent's command (a replay never puts the secret where the recording did not), and the
secret's value the model wrote is stored as a placeholder and given back as the value."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

SECRET = "4711-XYZ"


def _without_ports(text: str) -> str:
    """`text` less the proxy's address: port 34711 holds "4711" by chance."""
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


MM = [sys.executable, "-m", "mmcli"]


class Echo(BaseHTTPRequestHandler):
    """A model that answers `echo: ` and the last user text."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = "echo: " + body["messages"][-1]["content"]
        data = json.dumps(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# The agent: asks the model to echo a text with literal braces and one with the secret,
# writes down what came back, and the arguments it was given after the output file.
AGENT = """
import json, os, sys, anthropic
client = anthropic.Anthropic(api_key="k", max_retries=0)
said = []
literal = "{" * 2 + "pin" + "}" * 2  # not spelled out: a command's {{pin}} is a param
for text in ("type " + literal + " here", "type " + os.environ["MM_PARAM_PIN"] + " here"):
    answer = client.messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": text}])
    said.append(answer.content[0].text)
said += sys.argv[2:]
open(sys.argv[1], "w").write(json.dumps(said))
"""


def test_an_answer_is_the_same_recorded_and_replayed(
    echo: str, isolated_store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "said.json"
    env = {**os.environ, "MM_SECRET_PIN": SECRET, "COLUMNS": "200"}
    mm = [sys.executable, "-m", "mmcli"]
    # The user's own `{{pin}}` in the command is no placeholder: the replay runs it as is.
    agent = [sys.executable, "-c", AGENT, str(out), "note={{pin}}"]
    rec = subprocess.run(
        [*mm, "record", "t", "--llm", "--secret", "pin", "--upstream", echo, "--", *agent],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rec.returncode == 0, rec.stderr
    recorded = json.loads(out.read_text())
    assert recorded == ["echo: type {{pin}} here", f"echo: type {SECRET} here", "note={{pin}}"]
    assert SECRET not in (isolated_store / "t.toml").read_text()
    out.unlink()
    replay = subprocess.run(
        [*mm, "replay", "t", "--no-agent", "--secret", "pin"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replay.returncode == 0, replay.stderr
    assert json.loads(out.read_text()) == recorded


class Pieces(BaseHTTPRequestHandler):
    """A computer-use model that types the PIN in two pieces, then says it is done."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        if turn < 2:
            text = ("4711", "-XYZ")[turn]
            call = {"action": "type", "text": text}
            content = [
                {"type": "tool_use", "id": f"toolu_{turn}", "name": "computer", "input": call}
            ]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "done"}], "end_turn"
        data = json.dumps(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": content,
                "stop_reason": stop,
                "usage": {},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# A computer-use loop that performs nothing: each tool call gets an empty result.
LOOP_CODE = """
import anthropic
client = anthropic.Anthropic(api_key="k", max_retries=0)
messages = [{"role": "user", "content": "log in"}]
while True:
    answer = client.messages.create(model="m", max_tokens=10, messages=messages)
    calls = [b for b in answer.content if b.type == "tool_use"]
    if not calls:
        break
    messages.append({"role": "assistant", "content": [c.model_dump() for c in calls]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": c.id, "content": "ok"} for c in calls]})
"""
LOOP = [sys.executable, "-c", LOOP_CODE]


def test_a_secret_the_model_types_in_pieces_is_never_saved(
    isolated_store: Path, tmp_path: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pieces)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        upstream = f"http://127.0.0.1:{server.server_address[1]}"
        rec = subprocess.run(
            [*MM, "record", "t", "--llm", "--secret", "pin", "--upstream", upstream, "--", *LOOP],
            env={**os.environ, "MM_SECRET_PIN": SECRET, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert rec.returncode == 1, rec.stderr
    assert "secret 'pin'" in rec.stderr and "nothing was saved" in rec.stderr
    said = _without_ports(rec.stderr)
    assert SECRET not in said and "4711" not in said
    assert not (isolated_store / "t.toml").exists()


def computer(action: str, text: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "computer", "input": {"action": action, "text": text}}


def fill(value: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "fill_form", "input": {"field": "pin", "value": value}}


def said_text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


# What a model may carry a piece of the secret in, answer after answer (then "done").
PIECES = {
    "said": [[said_text("Your PIN starts with 4711, I will not type it.")]],
    "keys": [[computer("key", c)] for c in "4711"] + [[computer("key", "minus")]],
    "keys-and-type": [[computer("key", "4")], [computer("key", "7")], [computer("type", "11")]],
    "another-tool": [[fill("4711")], [fill("-XYZ")]],
    "type-then-key": [[computer("type", "47")], [computer("key", "1")], [computer("key", "1")]],
}


def scripted(turns: list[list[dict[str, Any]]]) -> type[BaseHTTPRequestHandler]:
    class Scripted(BaseHTTPRequestHandler):
        """A model that gives `turns` one by one (tool calls numbered), then says done."""

        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            turn = sum(m["role"] == "assistant" for m in body["messages"])
            blocks = turns[turn] if turn < len(turns) else [said_text("done")]
            content = [
                {**b, "id": f"toolu_{turn}_{i}"} if b["type"] == "tool_use" else b
                for i, b in enumerate(blocks)
            ]
            calls = any(b["type"] == "tool_use" for b in content)
            data = json.dumps(
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": content,
                    "stop_reason": "tool_use" if calls else "end_turn",
                    "usage": {},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Scripted


@pytest.mark.parametrize("case", sorted(PIECES))
def test_a_piece_of_the_secret_anywhere_in_the_answers_is_never_saved(
    case: str, isolated_store: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), scripted(PIECES[case]))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        upstream = f"http://127.0.0.1:{server.server_address[1]}"
        rec = subprocess.run(
            [*MM, "record", "t", "--llm", "--secret", "pin", "--upstream", upstream, "--", *LOOP],
            env={**os.environ, "MM_SECRET_PIN": SECRET, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert rec.returncode == 1, rec.stderr
    assert "secret 'pin'" in rec.stderr and "nothing was saved" in rec.stderr
    assert "4711" not in _without_ports(rec.stderr)
    assert not (isolated_store / "t.toml").exists()


def test_text_that_holds_no_piece_of_the_secret_is_saved(isolated_store: Path) -> None:
    # The control: the same kinds of answer, with other text, are recorded.
    turns = [[said_text("Logging in.")], [computer("key", "4")], [computer("type", "2")]]
    turns += [[fill("0000")], [computer("key", "Return")]]
    server = ThreadingHTTPServer(("127.0.0.1", 0), scripted(turns))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        upstream = f"http://127.0.0.1:{server.server_address[1]}"
        rec = subprocess.run(
            [*MM, "record", "t", "--llm", "--secret", "pin", "--upstream", upstream, "--", *LOOP],
            env={**os.environ, "MM_SECRET_PIN": SECRET, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert rec.returncode == 0, rec.stderr
    assert (isolated_store / "t.toml").exists()


def test_an_openai_call_s_arguments_are_read_as_json() -> None:
    from mmcli.llm.leaks import answer_strings
    from mmcli.params import leaked_in

    arguments = '{"value": "\\u0034\\u0037\\u0031\\u0031"}'  # 4711, JSON-escaped
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "#1", "type": "function", "function": {"name": "fill", "arguments": arguments}}
        ],
    }
    assert "4711" not in arguments  # escaped in the JSON text ...
    assert leaked_in("".join(answer_strings(message)), {"pin": SECRET}) == "pin"  # ... read
