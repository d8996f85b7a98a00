"""The store's rules hold for model-API recordings, end to end through `mm`: a second
`mm record NAME --llm` running at the same time refuses as a screen recording does."""

from __future__ import annotations

import json
import os
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
