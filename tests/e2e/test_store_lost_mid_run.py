"""The store stops answering during a replay: done means exit 0 or 5, never 1.

The S3 server stopped answering after step 1 of a replay: the app got the submission, and
`mm` exited 1 after 40 s and wrote no history; exit 1 invites a retry, and a retry files
the task twice. Now the recorded screens are read before the first action, the run goes
on, and a history line that cannot be written is kept locally and sent with a later run:
the replay exits 5 (done, not journaled: do not retry)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmcli.store.recordings import Store
from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm
from tests.servers import seaweedfs

pytestmark = pytest.mark.e2e


def test_a_store_that_stops_answering_after_the_first_step(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with seaweedfs(tmp_path / "weed") as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        url = server.url("lost")
        monkeypatch.setenv("MM_HOME", url)
        loan_app.start()
        assert (
            mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app)).returncode == 0
        )
        loan_app.out.unlink()
        loan_app.start()
        replay = subprocess.Popen(
            [sys.executable, "-m", "mmcli", "replay", "loan", "--no-agent", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert replay.stderr is not None
        said = []
        for line in replay.stderr:
            said.append(line)
            if line.startswith("step 1/"):
                os.kill(server.pid, signal.SIGSTOP)  # the server stops answering
                break
        started = time.monotonic()
        try:
            out, rest = replay.communicate(timeout=170)
        finally:
            os.kill(server.pid, signal.SIGCONT)
        stderr = "".join(said) + rest
        took = time.monotonic() - started
        print(stderr, f"took {took:.1f}s")
        assert [{k: str(r[k]) for k in WANTED} for r in loan_app.records()] == [WANTED]
        assert replay.returncode == 5, stderr
        report = json.loads(out)
        assert report["outcome"] == "done-not-saved" and report["steps_replayed"] == 9
        assert "this run is not in the history" in stderr and "kept in " in stderr

        # The next run on the store, once it answers again, writes the kept line first.
        loan_app.out.unlink()
        loan_app.start()
        again = mm("replay", "loan", "--no-agent")
        assert again.returncode == 0, again.stderr
        history = [e for e in Store(url).runs.read("loan") if e["outcome"] == "from-memory"]
        assert len(history) == 2 and history[0]["at"] <= history[1]["at"]
        assert not list((tmp_path / "state").rglob("*.jsonl"))  # sent, then forgotten
