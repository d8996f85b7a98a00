"""The store under stress: two `mm record` of one name at once, a full disk, a read-only
file system. One clear line, the right exit code, and the previous recording intact."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.world import LoanApp
from mmcli.desktop.display import start_xvfb, stop_xvfb
from mmcli.store.recordings import Store
from tests.faults.conftest import (
    Mount,
    Running,
    act,
    mm,
    one_line_error,
    save_sample,
    snapshot,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def second_display(xdisplay: str) -> Iterator[str]:
    """Another Xvfb, so that two `mm record` need not wait for each other's display."""
    server, display = start_xvfb()
    yield display
    stop_xvfb(server)


def barrier_agent(x: int, mine: Path, other: Path) -> list[str]:
    """Acts once, then waits (up to 20 s) until the other agent has acted too."""
    return [
        "sh",
        "-c",
        f"{act('move', str(x), '300')} && touch {mine} && i=0; "
        f"while [ ! -e {other} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done",
    ]


def test_two_records_of_one_name_at_once_one_wins_the_other_is_refused(
    xdisplay: str,
    second_display: str,
    isolated_store: Path,
    tmp_path: Path,
    running: list[Running],
) -> None:
    a, b = tmp_path / "a-acted", tmp_path / "b-acted"
    first = Running("record", "same", "--observe", "0", "--", *barrier_agent(301, a, b))
    second = Running(
        "record",
        "same",
        "--observe",
        "0",
        "--",
        *barrier_agent(302, b, a),
        env={"DISPLAY": second_display},
    )
    running += [first, second]
    codes = {first.wait(90): first, second.wait(90): second}
    assert a.exists() and b.exists()  # both agents ran at the same time
    assert sorted(codes) == [0, 1], (first.stderr, second.stderr)
    winner, loser = codes[0], codes[1]
    assert "recorded 'same'" in winner.stderr
    assert "recording 'same' already exists" in one_line_error(loser.stderr)

    store = Store(isolated_store)
    saved = store.load("same")
    won_with = 301 if winner is first else 302
    assert [s.action.describe() for s in saved.steps] == [f"move to ({won_with}, 300)"]
    kept = saved.thumbnail_names()
    assert {p.name for p in store.thumbs.folder("same").iterdir()} == kept
    assert [p.name for p in isolated_store.iterdir() if p.suffix == ".tmp"] == []


def test_a_second_record_on_a_busy_display_waits_then_is_refused_without_running(
    xdisplay: str, isolated_store: Path, tmp_path: Path, running: list[Running]
) -> None:
    ran = tmp_path / "second-ran"
    first = Running(
        "record",
        "same",
        "--observe",
        "0",
        "--",
        "sh",
        "-c",
        f"{act('move', '301', '300')} && sleep 1",
    )
    running.append(first)
    first.wait_for("recorded step 1")
    second = mm("record", "same", "--observe", "0", "--", "sh", "-c", f"touch {ran}")
    assert first.wait() == 0, first.stderr
    assert second.returncode == 1
    assert "already exists" in one_line_error(second.stderr)
    assert not ran.exists()  # refused before its agent could run
    assert len(Store(isolated_store).load("same").steps) == 1


def record_over_sample() -> subprocess.CompletedProcess[str]:
    """`mm record sample --overwrite`, with an agent that acts once."""
    return mm(
        "record",
        "sample",
        "--overwrite",
        "--observe",
        "0",
        "--",
        *act("move", "300", "300").split(),
    )


def test_disk_full_while_saving_is_one_line_exit_1_previous_intact(
    xdisplay: str, tmpfs_store: Mount, isolated_store: Path
) -> None:
    before = save_sample(isolated_store)
    tmpfs_store.fill()
    result = record_over_sample()
    assert result.returncode == 1, result.stderr
    assert "disk full" in one_line_error(result.stderr)
    assert "previous version is intact" in result.stderr
    after = snapshot(isolated_store)
    after.pop("filler")
    assert after == before
    assert Store(isolated_store).load("sample").command == ["python", "agent.py", "--fast"]


def test_read_only_store_while_saving_is_one_line_exit_1_previous_intact(
    xdisplay: str, tmpfs_store: Mount, isolated_store: Path
) -> None:
    before = save_sample(isolated_store)
    tmpfs_store.read_only()
    result = record_over_sample()
    assert result.returncode == 1, result.stderr
    assert "read-only" in one_line_error(result.stderr)
    assert snapshot(isolated_store) == before


def test_replay_on_a_read_only_store_still_reports_the_task_done(
    tmpfs_store: Mount, loan: LoanApp, isolated_store: Path
) -> None:
    """The replay history cannot be written: exit 5 (done, not saved), never a failure of a
    task that was done (a caller retrying on exit 1 would submit the form twice); the line
    is kept on this machine for the next run."""
    before = snapshot(isolated_store)
    tmpfs_store.read_only()
    result = mm("replay", "loan", "--no-agent")
    assert result.returncode == 5, result.stderr
    assert "done, not saved" in result.stderr and "do not retry" in result.stderr
    assert "history" in result.stderr and "read-only" in result.stderr
    assert len(loan.records()) == 1
    assert snapshot(isolated_store) == before
