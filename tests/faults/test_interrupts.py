"""`mm record` and `mm replay` killed (-9), interrupted (Ctrl-C) or stopped by the
fail-safe corner, on the real example app: no recording changes, nothing half-done is
trusted, and the next run starts right away."""

from __future__ import annotations

import re
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from Xlib import display as xlib_display

from examples.world import LoanApp, agent_command
from mmcli.desktop.display import _lock_path, display_lock
from mmcli.store.recordings import Store
from tests.faults.conftest import (
    REPLAY_SAMPLE,
    Running,
    act,
    mm,
    one_line_error,
    save_sample,
    snapshot,
)

pytestmark = pytest.mark.e2e


def test_kill_9_while_recording_over_a_recording_keeps_it_whole(
    loan: LoanApp, isolated_store: Path, running: list[Running]
) -> None:
    before = snapshot(isolated_store)
    assert any(p.endswith(".png") for p in before)
    rec = Running("record", "loan", "--overwrite", "--observe", "0", "--", *agent_command(loan))
    running.append(rec)
    rec.wait_for("recorded step 4")
    rec.signal(signal.SIGKILL)
    assert rec.wait() == -signal.SIGKILL
    rec.kill_leftovers()  # the orphaned agent

    assert snapshot(isolated_store) == before
    assert Store(isolated_store).names() == ["loan"]
    assert len(Store(isolated_store).load("loan").steps) > 0


def test_kill_9_at_any_moment_of_a_first_recording_leaves_nothing_replay_trusts(
    xdisplay: str, isolated_store: Path, running: list[Running]
) -> None:
    """Killed while the agent acts, while steps are built, or while saving: afterwards
    there is either no recording or a whole one whose thumbnails are all there."""
    agent = ["sh", "-c", f"{act('move', '300', '300')} && {act('move', '420', '310')}"]
    outcomes = set()
    for delay in (0.4, 0.9, 1.4, 1.9, 2.6):
        rec = Running("record", "first", "--overwrite", "--observe", "0", "--", *agent)
        running.append(rec)
        time.sleep(delay)
        rec.signal(signal.SIGKILL)
        code = rec.wait()
        rec.kill_leftovers()
        store = Store(isolated_store)
        if store.exists("first"):
            recording = store.load("first")
            for step in recording.steps:
                assert step.thumbnail is not None
                assert (store.thumbs.folder("first") / step.thumbnail).is_file()
            outcomes.add("whole")
        else:
            outcomes.add("none")
        assert code in (0, -signal.SIGKILL)
    assert "none" in outcomes  # at least the early kills landed before the save
    replayed = mm("replay", "gone", "--no-agent")
    assert replayed.returncode == 1
    assert "no recording named 'gone'" in one_line_error(replayed.stderr)


def test_kill_9_while_replaying_changes_nothing_and_the_next_replay_starts_at_once(
    loan: LoanApp, isolated_store: Path, xdisplay: str, running: list[Running]
) -> None:
    before = snapshot(isolated_store)
    rep = Running("replay", "loan", "--no-agent")
    running.append(rep)
    rep.wait_for("step 2/")
    rep.signal(signal.SIGKILL)
    assert rep.wait() == -signal.SIGKILL
    assert snapshot(isolated_store) == before
    # The display lock file still names the dead process: a stale lock, on its face.
    assert _lock_path(xdisplay).read_text().split() == [str(rep.pid)]

    loan.start()
    started = time.monotonic()
    again = mm("replay", "loan", "--no-agent")
    assert again.returncode == 0, again.stderr
    assert "in use" not in again.stderr
    assert time.monotonic() - started < 30  # a held lock would make it wait 60 s, then fail
    assert len(loan.records()) == 1
    assert snapshot(isolated_store) == before


def test_ctrl_c_stops_replay_between_actions_with_exit_130(
    loan: LoanApp, isolated_store: Path, xdisplay: str, running: list[Running]
) -> None:
    before = snapshot(isolated_store)
    rep = Running("replay", "loan", "--no-agent")
    running.append(rep)
    rep.wait_for("step 2/")
    rep.signal(signal.SIGINT)
    assert rep.wait() == 130
    assert "interrupted" in one_line_error(rep.stderr)
    time.sleep(0.5)  # anything still in flight would reach the app by now
    assert loan.records() == []  # the form was never submitted
    assert snapshot(isolated_store) == before
    history = Store(isolated_store).runs.read("loan")
    assert [h["outcome"] for h in history] == ["aborted"]
    with display_lock(wait=0, display=xdisplay):  # released: taken without waiting
        pass


def test_ctrl_c_while_the_fallback_agent_runs_stops_it_and_saves_nothing(
    xdisplay: str, isolated_store: Path, tmp_path: Path, running: list[Running]
) -> None:
    before = save_sample(isolated_store)
    pid_file = tmp_path / "agent.pid"
    # The agent's pid as this machine sees it: in the sandbox's process namespace `$$`
    # is another number.
    sleeper = shlex.join(
        [
            sys.executable,
            "-c",
            f"import os, time; open({str(pid_file)!r}, 'w').write(os.readlink('/proc/self'))"
            "; time.sleep(60)",
        ]
    )
    agent = f"sh -c {shlex.quote(act('move', '300', '300') + '; exec ' + sleeper)}"
    rep = Running(*REPLAY_SAMPLE, "--agent", agent)
    running.append(rep)
    rep.wait_for("handing over to the agent")
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), rep.stderr
    rep.signal(signal.SIGINT)
    assert rep.wait() == 130
    assert "interrupted" in one_line_error(rep.stderr)
    assert snapshot(isolated_store) == before
    assert not _alive(int(pid_file.read_text()))


def _push_pointer_into_the_corner(until: threading.Event) -> None:
    """A user slamming the mouse into the top-left corner, and holding it there."""
    screen = xlib_display.Display()
    try:
        root = screen.screen().root
        while not until.is_set():
            root.warp_pointer(0, 0)
            screen.sync()
            time.sleep(0.005)
    finally:
        screen.close()


def test_pointer_in_a_corner_stops_replay_before_the_next_action(
    loan: LoanApp, isolated_store: Path, running: list[Running]
) -> None:
    before = snapshot(isolated_store)
    rep = Running("replay", "loan", "--no-agent")
    running.append(rep)
    rep.wait_for("step 1/")
    done = threading.Event()
    pusher = threading.Thread(target=_push_pointer_into_the_corner, args=(done,), daemon=True)
    pusher.start()
    try:
        code = rep.wait()
    finally:
        done.set()
        pusher.join(5)
    assert code == 130, rep.stderr
    assert "fail-safe" in one_line_error(rep.stderr)
    performed = [line for line in rep.lines if re.match(r"step \d+/\d+: ", line)]
    total = len(Store(isolated_store).load("loan").trunk())
    assert 1 <= len(performed) < total
    time.sleep(0.5)
    assert loan.records() == []  # Submit was never clicked
    assert snapshot(isolated_store) == before
    history = Store(isolated_store).runs.read("loan")
    assert history[-1]["outcome"] == "aborted"
    assert history[-1]["steps_replayed"] == len(performed)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_ctrl_c_while_recording_saves_nothing_with_exit_130(
    xdisplay: str, isolated_store: Path, running: list[Running]
) -> None:
    before = save_sample(isolated_store)
    agent = ["sh", "-c", f"{act('move', '300', '300')} && exec sleep 60"]
    rec = Running("record", "sample", "--overwrite", "--observe", "0", "--", *agent)
    running.append(rec)
    rec.wait_for("recorded step 1")
    rec.signal(signal.SIGINT)
    assert rec.wait() == 130
    assert "nothing was saved" in one_line_error(rec.stderr)
    assert snapshot(isolated_store) == before
