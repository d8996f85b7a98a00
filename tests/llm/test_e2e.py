"""End to end: a computer-use agent written with the official SDKs, on a real app on Xvfb,
recorded at the model API and replayed with zero model calls; on a moved window the model
is called from the step where the screen departs, and the branch is remembered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples.world import LoanApp
from tests.llm.fake_model import FakeModel

pytestmark = pytest.mark.e2e

AGENT = Path(__file__).with_name("computer_agent.py")
TASK = "Please type John Smith into the first field of the form."
API_KEY = "sk-test-0123456789-do-not-store"


def mm(model: FakeModel, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "COLUMNS": "120",
        "ANTHROPIC_BASE_URL": model.url,
        "OPENAI_BASE_URL": model.url + "/v1",
        "ANTHROPIC_API_KEY": API_KEY,
        "OPENAI_API_KEY": API_KEY,
    }
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", *args], capture_output=True, text=True, env=env, timeout=180
    )
    sys.stderr.write(result.stdout + result.stderr)
    return result


def typed_name(app: LoanApp) -> str:
    return str(app.widgets()["Name"]["text"])


@pytest.mark.parametrize(("api", "stream"), [("anthropic", False), ("openai", True)])
def test_record_replay_heal(
    form_app: LoanApp, fake_model: FakeModel, isolated_store: Path, api: str, stream: bool
) -> None:
    agent = [sys.executable, str(AGENT), "--api", api, "--task", TASK]
    if stream:
        agent.append("--stream")
    form_app.start()
    rec = mm(fake_model, "record", "form", "--llm", "--", *agent)
    assert rec.returncode == 0
    assert fake_model.calls == 4  # screenshot, click, type, done
    assert typed_name(form_app) == "John Smith"
    assert all(API_KEY in key for key in fake_model.seen_keys)  # the key reached the model
    files = [p for p in isolated_store.rglob("*") if p.is_file()]
    stored = "".join(p.read_text(errors="replace") for p in files)
    assert API_KEY not in stored
    assert 'kind = "llm"' in (isolated_store / "form.toml").read_text()

    form_app.start()
    again = mm(fake_model, "replay", "form", "--json")
    assert again.returncode == 0
    assert fake_model.calls == 4  # all from memory
    assert json.loads(again.stdout)["outcome"] == "from-memory"
    assert typed_name(form_app) == "John Smith"

    form_app.start("--position", "500,300")
    healed = mm(fake_model, "replay", "form", "--json")
    assert healed.returncode == 0
    report = json.loads(healed.stdout)
    assert report["outcome"] == "healed"
    assert report["from_memory"] == 1  # the first call carries no screenshot
    assert fake_model.calls == 4 + 3  # from the first screenshot on
    assert "screenshot differs" in report["divergence"]
    assert typed_name(form_app) == "John Smith"

    form_app.start("--position", "500,300")
    remembered = mm(fake_model, "replay", "form", "--json")
    assert remembered.returncode == 0
    assert json.loads(remembered.stdout)["outcome"] == "from-memory"
    assert fake_model.calls == 7
    assert typed_name(form_app) == "John Smith"

    form_app.start("--position", "300,60")
    refused = mm(fake_model, "replay", "form", "--no-agent")
    assert refused.returncode == 3
    assert fake_model.calls == 7

    shown = json.loads(mm(fake_model, "show", "form", "--json").stdout)
    assert len(shown["exchanges"]) == 7
    listed = json.loads(mm(fake_model, "ls", "--json").stdout)
    assert listed[0]["kind"] == "llm" and listed[0]["branches"] == 1
