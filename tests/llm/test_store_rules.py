"""The store's rules hold for model-API recordings, end to end through `mm`: a second
`mm record NAME --llm` running at the same time refuses as a screen recording does, and a
recording a model-API replay uses is not removed, replaced or pruned; one `mm proxy`
serves is reloaded when replaced between requests, and refused once removed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.llm.fake_model import FakeModel

MM = [sys.executable, "-m", "mmcli"]

# The agent: says it started, waits for the test's go, asks the model once.
AGENT = """
import sys, time, anthropic
from pathlib import Path
out = Path(sys.argv[1])
(out / ("started-" + sys.argv[2])).touch()
deadline = time.time() + 60
while not (out / "go").exists() and time.time() < deadline:
    time.sleep(0.05)
anthropic.Anthropic(api_key="k", max_retries=0).messages.create(
    model="m", max_tokens=10, messages=[{"role": "user", "content": "run " + sys.argv[2]}])
"""


def test_two_records_of_one_name_at_once_save_one(
    fake_model: FakeModel, isolated_store: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "COLUMNS": "200", "ANTHROPIC_BASE_URL": fake_model.url}
    runs = [
        subprocess.Popen(
            [*MM, "record", "t", "--llm", "--", sys.executable, "-c", AGENT, str(tmp_path), which],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for which in ("one", "two")
    ]
    deadline = time.time() + 60
    while not all((tmp_path / f"started-{w}").exists() for w in ("one", "two")):
        assert time.time() < deadline, "the agents never started"
        time.sleep(0.05)
    (tmp_path / "go").touch()
    results = [(run.communicate(timeout=120)[1], run.returncode)[::-1] for run in runs]
    assert sorted(code for code, _ in results) == [0, 1], results
    refused = next(err for code, err in results if code == 1)
    assert "already exists" in refused
    shown = subprocess.run(
        [*MM, "show", "t", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [e["depth"] for e in json.loads(shown.stdout)["exchanges"]] == [0]


def mm(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MM, *args],
        env={**os.environ, "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


ONE_CALL = (
    "import anthropic; anthropic.Anthropic(api_key='k', max_retries=0).messages.create("
    "model='m', max_tokens=10, messages=[{'role': 'user', 'content': 'other'}])"
)


def hands_off(store: Path, archive: Path, url: str) -> None:
    """What must not touch a recording in use: each refuses or leaves it."""
    agent = [sys.executable, "-c", ONE_CALL]
    recorded = mm("record", "t", "--llm", "--overwrite", "--", *agent, ANTHROPIC_BASE_URL=url)
    assert recorded.returncode == 1 and "being replayed" in recorded.stderr, recorded.stderr
    removed = mm("rm", "t", "--yes")
    assert removed.returncode == 1 and "being replayed" in removed.stderr, removed.stderr
    replaced = mm("import", str(archive), "--overwrite")
    assert replaced.returncode == 1 and "being replayed" in replaced.stderr, replaced.stderr
    pruned = mm("prune", "--older-than", "0s", "--yes")
    assert pruned.returncode == 0, pruned.stderr
    assert (store / "t.toml").exists()


def test_a_model_api_replay_marks_its_recording_in_use(
    fake_model: FakeModel, isolated_store: Path, tmp_path: Path
) -> None:
    url = fake_model.url
    (tmp_path / "go").touch()
    first = [sys.executable, "-c", AGENT, str(tmp_path), "one"]
    assert mm("record", "t", "--llm", "--", *first, ANTHROPIC_BASE_URL=url).returncode == 0
    archive = tmp_path / "t.tar.gz"
    assert mm("export", "t", str(archive)).returncode == 0
    (tmp_path / "go").unlink()
    other = shlex.join([sys.executable, "-c", AGENT, str(tmp_path), "two"])
    replay = subprocess.Popen(
        [*MM, "replay", "t", "--agent", other],
        env={**os.environ, "ANTHROPIC_BASE_URL": url},
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while not (tmp_path / "started-two").exists():
        assert replay.poll() is None and time.time() < deadline, "the agent never started"
        time.sleep(0.05)
    hands_off(isolated_store, archive, url)
    (tmp_path / "go").touch()
    _, err = replay.communicate(timeout=120)
    assert replay.returncode == 0 and "healed" in err, err
    shown = json.loads(mm("show", "t", "--json").stdout)
    assert [e["depth"] for e in shown["exchanges"]] == [0, 0]


def ask(port: int, token: str, text: str) -> tuple[int, str]:
    """One request to `mm proxy` for recording `t`, as the agents send it: the status and
    the body of the answer."""
    import anthropic

    base = f"http://127.0.0.1:{port}/t/{token}/r/t"
    client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0)
    try:
        answer = client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": text}]
        )
    except anthropic.APIStatusError as e:
        return e.status_code, e.response.text
    return 200, answer.model_dump_json()


def exchanges() -> int:
    """How many exchanges recording `t` holds (`mm show` loads it whole: it is valid)."""
    return len(json.loads(mm("show", "t", "--json").stdout)["exchanges"])


def test_mm_proxy_reloads_a_recording_replaced_under_it_and_refuses_a_removed_one(
    fake_model: FakeModel, isolated_store: Path, tmp_path: Path
) -> None:
    (tmp_path / "go").touch()
    first = [sys.executable, "-c", AGENT, str(tmp_path), "one"]
    url = fake_model.url
    assert mm("record", "t", "--llm", "--", *first, ANTHROPIC_BASE_URL=url).returncode == 0
    archive = tmp_path / "t.tar.gz"
    assert mm("export", "t", str(archive)).returncode == 0
    token = "a-token-for-this-test-0123456789"
    proxy = subprocess.Popen(
        [*MM, "proxy", "--port", "0", "--upstream", url],
        env={**os.environ, "MM_PROXY_TOKEN": token},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stderr is not None
        port = int(proxy.stderr.readline().split("127.0.0.1:")[1].split("/")[0])
        assert ask(port, token, "run one")[0] == 200
        assert fake_model.calls == 1  # from memory
        assert ask(port, token, "x")[0] == 200  # a miss: asked, and saved at once
        assert fake_model.calls == 2

        # Replaced by a new recording while served: the next request is answered from it.
        agent = [sys.executable, "-c", ONE_CALL]
        recorded = mm("record", "t", "--llm", "--overwrite", "--", *agent, ANTHROPIC_BASE_URL=url)
        assert recorded.returncode == 0, recorded.stderr
        assert fake_model.calls == 3
        assert ask(port, token, "other")[0] == 200
        assert fake_model.calls == 3  # the new recording's answer, from memory
        assert ask(port, token, "y")[0] == 200  # a miss, saved into the new recording
        assert fake_model.calls == 4
        assert exchanges() == 2

        # Replaced by an import: its exchanges answer, and a miss is saved onto them.
        replaced = mm("import", str(archive), "--overwrite")
        assert replaced.returncode == 0, replaced.stderr
        assert ask(port, token, "run one")[0] == 200
        assert fake_model.calls == 4
        assert ask(port, token, "z")[0] == 200
        assert fake_model.calls == 5
        assert exchanges() == 2  # the archive's one, and z

        # Removed: refused, and nothing is written back.
        assert mm("rm", "t", "--yes").returncode == 0
        status, body = ask(port, token, "run one")
        assert status == 400 and "'t' was removed" in body, body
        assert ask(port, token, "w")[0] == 400
        assert fake_model.calls == 5
        assert not (isolated_store / "t.toml").exists()
    finally:
        proxy.send_signal(signal.SIGINT)
        proxy.wait(timeout=30)
