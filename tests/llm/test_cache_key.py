"""The cache key, end to end through `mm`: a request that differs from a recorded one in
any field that can change the answer (a header that selects beta features, a query
parameter, a stop sequence, a response schema, a forced function call, `n`) is not
answered from memory; one that differs only in fields known not to matter is."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.llm.fake_model import FakeModel

# The agent: sends each request of a file to the proxy its SDKs point at, writes down the
# status of each (the test changes the file between recording and replaying).
AGENT = """
import http.client, json, os, sys
from urllib.parse import urlsplit
base = urlsplit(os.environ["ANTHROPIC_BASE_URL"])
statuses = {}
for name, r in json.loads(open(sys.argv[1]).read()).items():
    conn = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
    headers = {"x-api-key": "k", "Content-Type": "application/json", **r["headers"]}
    conn.request("POST", base.path + r["path"], json.dumps(r["body"]), headers)
    response = conn.getresponse()
    response.read()
    statuses[name] = response.status
    conn.close()
open(sys.argv[2], "w").write(json.dumps(statuses))
"""

ANTHROPIC: dict[str, Any] = {
    "path": "/v1/messages",
    "headers": {"anthropic-version": "2023-06-01", "anthropic-beta": "b-one,b-two"},
    "body": {
        "model": "m",
        "max_tokens": 100,
        "temperature": 0.2,
        "messages": [{"role": "user", "content": "what next?"}],
    },
}
OPENAI: dict[str, Any] = {
    "path": "/v1/chat/completions",
    "headers": {},
    "body": {"model": "m", "messages": [{"role": "user", "content": "what next?"}]},
}


def variant(
    request: dict[str, Any],
    path: str = "",
    headers: dict[str, str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    out = copy.deepcopy(request)
    out["path"] += path
    out["headers"].update(headers or {})
    out["body"].update(fields)
    return out


MISSES = {
    "other beta header": variant(ANTHROPIC, headers={"anthropic-beta": "b-one,b-three"}),
    "one beta less": variant(ANTHROPIC, headers={"anthropic-beta": "b-one"}),
    "query parameter": variant(ANTHROPIC, path="?beta=true"),
    "stop sequences": variant(ANTHROPIC, stop_sequences=["Human:"]),
    "output format": variant(
        ANTHROPIC, output_format={"type": "json_schema", "schema": {"type": "object"}}
    ),
    "max tokens": variant(ANTHROPIC, max_tokens=5),
    "forced function": variant(OPENAI, function_call={"name": "delete_all"}),
    "three choices": variant(OPENAI, n=3),
}
HITS = {
    "anthropic": ANTHROPIC,
    "openai": OPENAI,
    "beta order": variant(ANTHROPIC, headers={"anthropic-beta": "b-two, b-one"}),
    "sampling": variant(ANTHROPIC, temperature=1.0, top_p=0.9, metadata={"user_id": "u"}),
    "streamed": variant(OPENAI, stream=True, stream_options={"include_usage": True}),
    "other client": variant(ANTHROPIC, headers={"User-Agent": "x", "x-stainless-retry-count": "1"}),
}


def mm(model: FakeModel, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    command = [sys.executable, "-m", "mmcli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)


def test_every_field_that_can_change_the_answer_is_in_the_key(
    fake_model: FakeModel, isolated_store: Path, tmp_path: Path
) -> None:
    requests, statuses = tmp_path / "requests.json", tmp_path / "statuses.json"
    agent = [sys.executable, "-c", AGENT, str(requests), str(statuses)]
    requests.write_text(json.dumps({"anthropic": ANTHROPIC, "openai": OPENAI}))
    rec = mm(fake_model, "record", "t", "--llm", "--upstream", fake_model.url, "--", *agent)
    assert rec.returncode == 0, rec.stderr
    assert fake_model.calls == 2

    requests.write_text(json.dumps({**HITS, **MISSES}))
    replay = mm(fake_model, "replay", "t", "--no-agent")  # the recorded agent, no model
    got = json.loads(statuses.read_text())
    assert {name: got[name] for name in MISSES} == dict.fromkeys(MISSES, 422)
    assert {name: got[name] for name in HITS} == dict.fromkeys(HITS, 200)
    assert replay.returncode == 3
    assert fake_model.calls == 2
