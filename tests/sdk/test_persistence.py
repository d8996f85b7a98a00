"""The cache survives a restart and is shared by processes: real Python processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from mmcli.sdk.document import summary

WORKER = """
import json, sys, time
from dataclasses import dataclass
from pathlib import Path

from mmcli import Check, Engine

state_file, go_file, tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
engine = Engine()
performed = []


@dataclass
class Screen:
    title: str
    fields: tuple


def look(text: str) -> Screen:
    return Screen(state_file.read_text(), ("name", "email"))


@engine.function(pre_check=Check(look, lambda cur, cand: cur == cand))
def type_text(text: str) -> None:
    performed.append(text)


def agent(who: str) -> None:
    type_text(who)
    type_text("done")


engine.set_agent(agent).finalize()
while not go_file.exists():
    time.sleep(0.01)
hit = engine("ann", tags=[tag], params={"who": "ann"})
print(json.dumps({"hit": hit, "performed": performed}))
"""


def run_workers(tmp_path: Path, store: Path, tags: list[str]) -> list[dict[str, object]]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    state, go = tmp_path / "state", tmp_path / "go"
    if not state.exists():
        state.write_text("form")
    go.unlink(missing_ok=True)
    env = {**os.environ, "MM_HOME": str(store), "PYTHONPATH": os.getcwd()}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(state), str(go), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for tag in tags
    ]
    time.sleep(0.5 if len(tags) > 1 else 0)  # let them all import and wait at the line
    go.write_text("")
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    return results


def test_a_second_process_replays_what_the_first_recorded(
    tmp_path: Path, isolated_store: Path
) -> None:
    [first] = run_workers(tmp_path, isolated_store, ["t"])
    assert first == {"hit": False, "performed": ["ann", "done"]}
    [second] = run_workers(tmp_path, isolated_store, ["t"])
    assert second == {"hit": True, "performed": ["ann", "done"]}
    (tmp_path / "state").write_text("another form")
    [third] = run_workers(tmp_path, isolated_store, ["t"])
    assert third["hit"] is False
    assert summary(isolated_store / "sdk.toml")["branches"] == 2


def test_processes_recording_at_once_lose_nothing(tmp_path: Path, isolated_store: Path) -> None:
    tags = [f"tag{i}" for i in range(6)]
    results = run_workers(tmp_path, isolated_store, tags)
    assert all(r["hit"] is False for r in results)
    info = summary(isolated_store / "sdk.toml")
    assert info["branches"] == 6 and info["tags"] == tags and info["params"] == ["who"]
    assert all(r["hit"] is True for r in run_workers(tmp_path, isolated_store, tags))
