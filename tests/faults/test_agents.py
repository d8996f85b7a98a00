"""Agents that hang, crash or flood their output, under `mm record` and as the fallback of
`mm replay`: the run is reported, the agent is stopped, nothing it did is stored."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from mmcli.store.recordings import Store
from tests.faults.conftest import (
    MM,
    REPLAY_SAMPLE,
    Running,
    act,
    mm,
    one_line_error,
    save_sample,
    snapshot,
)

pytestmark = pytest.mark.e2e

FLOOD_MB = 50


def python_agent(code: str) -> str:
    """`--agent` text running `code` in Python."""
    return shlex.join([sys.executable, "-c", code])


def stubborn_sleeper(pid_file: Path) -> str:
    """Hangs and ignores SIGTERM: only SIGKILL ends it. Writes its pid as this machine
    sees it (in the sandbox's own process namespace `os.getpid()` is another number)."""
    return (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"open({str(pid_file)!r}, 'w').write(os.readlink('/proc/self'))\n"
        "time.sleep(600)\n"
    )


def flood(then: str) -> str:
    """Writes FLOOD_MB MB to stdout and to stderr, then runs the shell words `then`."""
    return (
        "import os, sys\n"
        "chunk = b'x' * (1 << 20)\n"
        f"for _ in range({FLOOD_MB}):\n"
        "    sys.stdout.buffer.write(chunk)\n"
        "    sys.stderr.buffer.write(chunk)\n"
        "sys.stdout.flush(); sys.stderr.flush()\n"
        f"os.execvp('sh', ['sh', '-c', {then!r}])\n"
    )


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# ---- the fallback agent of `mm replay` ----------------------------------------------------


def test_hanging_fallback_agent_is_killed_after_agent_timeout_exit_4(
    xdisplay: str, isolated_store: Path, tmp_path: Path
) -> None:
    before = save_sample(isolated_store)
    pid_file = tmp_path / "agent.pid"
    started = time.monotonic()
    result = mm(
        *REPLAY_SAMPLE,
        "--agent-timeout",
        "1",
        "--agent",
        python_agent(stubborn_sleeper(pid_file)),
        timeout=60,
    )
    assert result.returncode == 4, result.stderr
    assert "agent failed" in result.stderr
    assert time.monotonic() - started < 30
    assert not alive(int(pid_file.read_text()))
    assert snapshot(isolated_store) == before


def test_crashing_fallback_agent_exit_4_and_its_actions_are_not_saved(
    xdisplay: str, isolated_store: Path
) -> None:
    before = save_sample(isolated_store)
    agent = f"sh -c '{act('move', '300', '300')} && {act('move', '500', '300')} && exit 7'"
    result = mm(*REPLAY_SAMPLE, "--agent", agent)
    assert result.returncode == 4, result.stderr
    assert "agent failed (exit 7)" in result.stderr
    assert "recorded step 2" in result.stderr  # it did act: two steps were captured
    assert snapshot(isolated_store) == before
    assert len(Store(isolated_store).load("sample").steps) == 5


def test_fallback_agent_flooding_its_output_is_passed_through_and_saves_nothing(
    xdisplay: str, isolated_store: Path, tmp_path: Path
) -> None:
    before = save_sample(isolated_store)
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    agent = python_agent(flood(f"{act('move', '300', '300')}; exit 3"))
    with out.open("wb") as o, err.open("wb") as e:
        code = _run([*MM, *REPLAY_SAMPLE, "--agent", agent], o, e)
    assert code == 4
    assert out.stat().st_size == FLOOD_MB << 20
    assert err.stat().st_size >= FLOOD_MB << 20
    with err.open("rb") as e:
        e.seek(FLOOD_MB << 20)
        tail = e.read().decode(errors="replace")
    assert "agent failed (exit 3)" in tail
    assert snapshot(isolated_store) == before


# ---- the agent of `mm record` -------------------------------------------------------------


def test_hanging_agent_under_record_is_killed_with_what_it_started(
    xdisplay: str, isolated_store: Path, tmp_path: Path
) -> None:
    """A wrapper script whose real agent hangs: both are gone when `mm record` returns."""
    before = save_sample(isolated_store)
    pid_file = tmp_path / "agent.pid"
    real_agent = shlex.join([sys.executable, "-c", stubborn_sleeper(pid_file)])
    result = mm(
        "record",
        "sample",
        "--overwrite",
        "--observe",
        "0",
        "--agent-timeout",
        "1",
        "--",
        "sh",
        "-c",
        f"{real_agent}; echo the wrapper goes on",
        timeout=60,
    )
    assert result.returncode == 4, result.stderr
    assert "not saved" in result.stderr and "timed out" in result.stderr
    assert not alive(int(pid_file.read_text()))
    assert snapshot(isolated_store) == before


def test_crashing_agent_under_record_keeps_the_previous_recording(
    xdisplay: str, isolated_store: Path
) -> None:
    before = save_sample(isolated_store)
    script = f"{act('move', '300', '300')} && exit 5"
    result = mm("record", "sample", "--overwrite", "--observe", "0", "--", "sh", "-c", script)
    assert result.returncode == 5
    assert "recorded step 1" in result.stderr and "not saved" in result.stderr
    assert snapshot(isolated_store) == before


def test_agent_flooding_its_output_under_record_is_recorded_normally(
    xdisplay: str, isolated_store: Path, tmp_path: Path
) -> None:
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    command = [sys.executable, "-c", flood(act("move", "300", "300"))]
    with out.open("wb") as o, err.open("wb") as e:
        code = _run([*MM, "record", "noisy", "--observe", "0", "--", *command], o, e)
    assert code == 0
    assert out.stat().st_size == FLOOD_MB << 20
    assert [s.action.describe() for s in Store(isolated_store).load("noisy").steps] == [
        "move to (300, 300)"
    ]


def _run(command: list[str], stdout: object, stderr: object) -> int:
    import subprocess

    return subprocess.run(
        command,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=stderr,  # type: ignore[arg-type]
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    ).returncode


def test_agent_that_is_not_there_is_a_one_line_error(xdisplay: str, isolated_store: Path) -> None:
    before = save_sample(isolated_store)
    result = mm(*REPLAY_SAMPLE, "--agent", "/nonexistent/agent --fast")
    assert result.returncode == 1
    assert "agent command not found: '/nonexistent/agent'" in one_line_error(result.stderr)
    assert snapshot(isolated_store) == before


def test_fallback_agent_that_does_nothing_has_not_healed_exit_4(
    xdisplay: str, isolated_store: Path
) -> None:
    before = save_sample(isolated_store)
    result = mm(*REPLAY_SAMPLE, "--agent", "true", timeout=60)
    assert result.returncode == 4, result.stderr
    assert "agent failed (exit 0): the agent exited 0 without performing any action" in (
        result.stderr.replace("\n", " ")
    )
    assert snapshot(isolated_store) == before


def test_heal_done_but_not_saved_is_exit_5_and_prune_leaves_a_running_replay_alone(
    xdisplay: str, isolated_store: Path, tmp_path: Path, running: list[Running]
) -> None:
    """The agent heals; `mm prune --yes`, run meanwhile by someone else, skips the
    recording in use; then the recording's file vanishes before the branch is saved: the
    task was done, exit 5. (The agent itself cannot touch the store: it is read-only in
    the agent's sandbox.)"""
    save_sample(isolated_store)
    toml = isolated_store / "sample.toml"
    healed, go = tmp_path / "healed", tmp_path / "go"
    script = (
        f"{act('move', '300', '300')} && touch {shlex.quote(str(healed))} && "
        f"for _ in $(seq 600); do test -f {shlex.quote(str(go))} && exit 0; sleep 0.1; done"
    )
    rep = Running(*REPLAY_SAMPLE, "--agent", f"sh -c {shlex.quote(script)}")
    running.append(rep)
    deadline = time.monotonic() + 60
    while not healed.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert healed.exists(), rep.stderr
    pruned = mm("prune", "--yes", "--older-than", "1m")
    assert "skipped sample: a replay is using it" in pruned.stderr, pruned.stderr
    assert toml.exists()
    toml.unlink()
    go.touch()
    assert rep.wait(90) == 5, rep.stderr
    result = rep
    assert "done, not saved" in result.stderr and "do not retry" in result.stderr
