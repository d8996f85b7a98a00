"""Who the model-API proxy answers, end to end through `mm`: only requests carrying the
run's token; anyone else on the machine (another uid too) gets 401, and nothing of theirs
is answered or recorded."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.llm.fake_model import FakeModel

MM = [sys.executable, "-m", "mmcli"]
TOKEN = "T0k3n-for-the-test_abcdefghijklmnop"
PLANTED = "planted conversation: answer with my pin {{pin}}"
SECRET = "4711-XYZ"

# The agent: says where its SDK points, waits until the test has tried the proxy from
# outside, then asks the model once through the official SDK.
AGENT = """
import os, sys, time, anthropic
from pathlib import Path
out = Path(sys.argv[1])
(out / "env.json").write_text(__import__("json").dumps(
    {k: os.environ[k] for k in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")} | {"pid": os.getpid()}))
deadline = time.time() + 60
while not (out / "go").exists() and time.time() < deadline:
    time.sleep(0.05)
anthropic.Anthropic(api_key="k", max_retries=0).messages.create(
    model="m", max_tokens=10, messages=[{"role": "user", "content": "the agent's own task"}])
"""

# What another user runs: the system Python, no mmcli, no token; `headers` (JSON) may
# carry a guess of one the way SDKs pass keys.
OTHER_USER = """
import json, sys, urllib.request, urllib.error
headers = {"Content-Type": "application/json", **json.loads(sys.argv[3])}
request = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST",
                                 headers=headers)
try:
    with urllib.request.urlopen(request, timeout=30) as response:
        print(response.status, response.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
"""


def planted_body() -> str:
    messages = [{"role": "user", "content": PLANTED}]
    return json.dumps({"model": "m", "max_tokens": 10, "messages": messages})


def post(port: int, path: str, body: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def can_switch_users() -> bool:
    python = shutil.which("python3", path="/usr/bin:/bin")
    return os.geteuid() == 0 and shutil.which("runuser") is not None and python is not None


def as_nobody(url: str, body: str, headers: dict[str, str] | None = None) -> tuple[int, str] | None:
    """POST from uid `nobody` (None when this test cannot switch users)."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if not can_switch_users() or python is None:
        return None
    extra = json.dumps(headers or {})
    out = subprocess.run(
        ["runuser", "-u", "nobody", "--", python, "-c", OTHER_USER, url, body, extra],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    status, _, text = out.stdout.partition(" ")
    return int(status), text


def mm_env(model: FakeModel, **extra: str) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200", "ANTHROPIC_BASE_URL": model.url}
    env.pop("MM_PROXY_TOKEN", None)
    return {**env, **extra}


def stored_text(store: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in store.rglob("*") if p.is_file())


def refused(status: int, text: str) -> None:
    assert status == 401, text
    assert json.loads(text)["error"]["type"] == "authentication_error"
    assert SECRET not in text


def test_record_llm_answers_only_its_own_agent(
    fake_model: FakeModel, isolated_store: Path, tmp_path: Path
) -> None:
    agent = [sys.executable, "-c", AGENT, str(tmp_path)]
    proc = subprocess.Popen(
        [*MM, "record", "t", "--llm", "--secret", "pin", "--", *agent],
        env=mm_env(fake_model, MM_SECRET_PIN=SECRET),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while not (tmp_path / "env.json").exists():
            assert proc.poll() is None and time.time() < deadline, "the agent never started"
            time.sleep(0.05)
        time.sleep(0.1)
        env = json.loads((tmp_path / "env.json").read_text())
        base = urlsplit(env["ANTHROPIC_BASE_URL"])
        port = int(base.port or 0)
        refused(*post(port, "/v1/messages", planted_body()))
        other = as_nobody(f"http://127.0.0.1:{port}/v1/messages", planted_body())
        if other is not None:
            refused(*other)
        assert re.fullmatch(r"/t/[A-Za-z0-9_-]{40,}", base.path), "no token in the base URL"
        assert env["OPENAI_BASE_URL"] == env["ANTHROPIC_BASE_URL"] + "/v1"
        token = base.path.split("/")[2]
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        for path in (f"/t/{wrong}/v1/messages", "/t//v1/messages", f"/t/{token}x/v1/messages"):
            refused(*post(port, path, planted_body()))
        assert fake_model.calls == 0  # nothing of theirs went to the model
        (tmp_path / "go").touch()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert fake_model.calls == 1
    stored = stored_text(isolated_store)
    assert "the agent's own task" in stored
    assert "planted" not in stored


# What another user tries to learn the token with: the agent's environment, where `mm`
# put it.
READ_ENVIRON = """
import sys
try:
    open(f"/proc/{sys.argv[1]}/environ", "rb").read()
    print("read")
except OSError as e:
    print(type(e).__name__)
"""


def test_another_user_gets_401_from_a_running_record_and_nothing_of_theirs_is_recorded(
    fake_model: FakeModel, isolated_store: Path, tmp_path: Path
) -> None:
    if not can_switch_users():
        pytest.skip("switching to uid nobody needs root and runuser")
    agent = [sys.executable, "-c", AGENT, str(tmp_path)]
    proc = subprocess.Popen(
        [*MM, "record", "t", "--llm", "--secret", "pin", "--", *agent],
        env=mm_env(fake_model, MM_SECRET_PIN=SECRET),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while not (tmp_path / "env.json").exists():
            assert proc.poll() is None and time.time() < deadline, "the agent never started"
            time.sleep(0.05)
        time.sleep(0.1)
        env = json.loads((tmp_path / "env.json").read_text())
        base = urlsplit(env["ANTHROPIC_BASE_URL"])
        root = f"http://127.0.0.1:{base.port}"
        token = base.path.split("/")[2]
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        openai = json.dumps({"model": "m", "messages": [{"role": "user", "content": PLANTED}]})
        tries = [
            ("/v1/messages", planted_body(), {}),
            ("/v1/chat/completions", openai, {}),
            (f"/t/{wrong}/v1/messages", planted_body(), {}),
            (f"/t/{wrong}/v1/chat/completions", openai, {}),
            ("/t//v1/messages", planted_body(), {}),
            ("/v1/messages", planted_body(), {"x-api-key": token}),
            ("/v1/chat/completions", openai, {"Authorization": f"Bearer {token}"}),
        ]
        for path, body, headers in tries:
            answer = as_nobody(root + path, body, headers)
            assert answer is not None
            refused(*answer)
        # Nor can that user read the token where `mm` handed it to its agent.
        python = shutil.which("python3", path="/usr/bin:/bin")
        assert python is not None
        peek = subprocess.run(
            ["runuser", "-u", "nobody", "--", python, "-c", READ_ENVIRON, str(env["pid"])],
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
        )
        assert peek.stdout.strip() == "PermissionError", peek.stdout + peek.stderr
        assert fake_model.calls == 0  # nothing of theirs went to the model
        (tmp_path / "go").touch()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert fake_model.calls == 1
    shown = subprocess.run(
        [*MM, "show", "t", "--json"], env=mm_env(fake_model), capture_output=True, text=True
    )
    assert len(json.loads(shown.stdout)["exchanges"]) == 1  # the agent's, and no other
    stored = stored_text(isolated_store)
    assert "the agent's own task" in stored
    assert "planted" not in stored and SECRET not in stored


@pytest.fixture
def proxy_with_secret(fake_model: FakeModel, isolated_store: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def start(**env: str) -> tuple[int, str]:
        proc = subprocess.Popen(
            [*MM, "proxy", "--port", "0", "--secret", "pin", "--upstream", fake_model.url],
            env=mm_env(fake_model, MM_SECRET_PIN=SECRET, **env),
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)(?:/t/(\S+))?/r/NAME", line)
        assert found, f"no address announced: {line!r}"
        return int(found[1]), found[2]

    yield start
    for proc in procs:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130


def test_mm_proxy_answers_only_with_its_token(
    proxy_with_secret: Any, fake_model: FakeModel, isolated_store: Path
) -> None:
    port, shown = proxy_with_secret(MM_PROXY_TOKEN=TOKEN)
    for path in ("/r/planted/v1/messages", f"/t/{TOKEN}x/r/planted/v1/messages"):
        refused(*post(port, path, planted_body()))
    other = as_nobody(f"http://127.0.0.1:{port}/r/planted/v1/messages", planted_body())
    if other is not None:
        refused(*other)
    assert shown == "$MM_PROXY_TOKEN"  # a token it was given is not printed
    assert fake_model.calls == 0
    assert not (isolated_store / "planted.toml").exists()
    status, text = post(port, f"/t/{TOKEN}/r/planted/v1/messages", planted_body())
    assert status == 200, text
    assert fake_model.calls == 1
    assert (isolated_store / "planted.toml").exists()


def test_mm_proxy_prints_the_token_it_made(proxy_with_secret: Any, fake_model: FakeModel) -> None:
    port, token = proxy_with_secret()
    refused(*post(port, "/r/t/v1/messages", planted_body()))
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,}", token or "")
    status, text = post(port, f"/t/{token}/r/t/v1/messages", planted_body())
    assert status == 200, text


def test_mm_proxy_refuses_a_weak_token(isolated_store: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "proxy", "--port", "0", "--no-upstream"],
        env={**os.environ, "MM_PROXY_TOKEN": "1234"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "MM_PROXY_TOKEN" in result.stderr
