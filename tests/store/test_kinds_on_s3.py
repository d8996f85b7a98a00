"""Every kind of document on a store in a bucket (a real SeaweedFS): the SDK's documents,
shared by processes, and `mm ls` listing them."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from examples.world import LoanApp
from mmcli.sdk.document import summary
from mmcli.store.recordings import Store
from tests.llm.conftest import fake_model, form_app, small_display  # noqa: F401 - fixtures
from tests.llm.fake_model import FakeModel
from tests.llm.test_e2e import AGENT, API_KEY, TASK, mm, typed_name
from tests.sdk.test_persistence import run_workers


def test_sdk_processes_share_a_document_in_a_bucket(tmp_path: Path, s3_url: str) -> None:
    tags = [f"tag{i}" for i in range(4)]
    results = run_workers(tmp_path, s3_url, tags)  # type: ignore[arg-type]
    assert all(r["hit"] is False for r in results)
    info = summary((Store(s3_url), "sdk"))
    assert info["branches"] == 4 and info["tags"] == tags
    assert all(r["hit"] is True for r in run_workers(tmp_path, s3_url, tags))  # type: ignore[arg-type]
    listed = subprocess.run(
        [sys.executable, "-m", "mmcli", "ls", "--json", "--store", s3_url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (entry,) = json.loads(listed.stdout)
    assert entry["name"] == "sdk" and entry["kind"] == "sdk" and entry["branches"] == 4
    assert entry["replays"] >= 8


def test_a_model_api_recording_in_a_bucket(
    form_app: LoanApp,  # noqa: F811
    fake_model: FakeModel,  # noqa: F811
    s3_url: str,
    isolated_store: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MM_HOME", s3_url)
    agent = [sys.executable, str(AGENT), "--api", "anthropic", "--task", TASK]
    form_app.start()
    assert mm(fake_model, "record", "form", "--llm", "--", *agent).returncode == 0
    assert fake_model.calls == 4
    # The bucket's command runs only as this machine's operator allows it.
    allow = ["--allow-agent", shlex.join(agent)]
    form_app.start("--position", "500,300")
    healed = mm(fake_model, "replay", "form", "--json", *allow)
    assert healed.returncode == 0 and json.loads(healed.stdout)["outcome"] == "healed"
    form_app.start("--position", "500,300")
    remembered = mm(fake_model, "replay", "form", "--json", *allow)
    assert json.loads(remembered.stdout)["outcome"] == "from-memory"
    assert fake_model.calls == 7
    assert typed_name(form_app) == "John Smith"
    listed = json.loads(mm(fake_model, "ls", "--json").stdout)
    assert listed[0]["kind"] == "llm" and listed[0]["branches"] == 1
    assert API_KEY not in "".join(
        Store(s3_url).objects.get(i.key).data.decode(errors="replace")
        for i in Store(s3_url).objects.listing()
    )
    assert not isolated_store.exists()
