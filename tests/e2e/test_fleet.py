"""A batch spread over a fleet: the real Temporal dev server and a real SeaweedFS on
127.0.0.1, two `mm worker` processes, each on its own Xvfb with its own example app, over
one store in a bucket. What each app filed is read back: every row once, never twice."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.world import HERE, LoanApp, agent_command, restart_detached, stop_detached
from mmcli.desktop.display import start_xvfb, stop_xvfb
from mmcli.store.recordings import Store
from tests.e2e.conftest import mm
from tests.servers import S3Server, temporal_dev
from tests.store.conftest import seaweed  # noqa: F401 - a fixture

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def temporal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with temporal_dev(tmp_path_factory.mktemp("temporal")) as address:
        yield address


@pytest.fixture(scope="module")
def second_display() -> Iterator[str]:
    process, display = start_xvfb()
    try:
        yield display
    finally:
        stop_xvfb(process)


class Fleet:
    """The recording `loan` in a bucket, and workers started on displays of their own."""

    def __init__(self, tmp: Path, temporal: str, store: str, displays: list[str]) -> None:
        self.tmp = tmp
        self.temporal = temporal
        self.store = store
        self.displays = displays
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.apps: dict[str, LoanApp] = {}

    def env(self, display: str) -> dict[str, str]:
        return {**os.environ, "DISPLAY": display, "MM_HOME": self.store, "COLUMNS": "160"}

    def record(self) -> None:
        workdir = self.tmp / "recording-app"
        restart_detached(workdir)  # on the session's display (DISPLAY is the first one)
        try:
            app = LoanApp(workdir)
            result = mm(
                "record", "loan", "--param", "name=John Smith", "--param", "amount=1200",
                "--observe", "0", "--commit-steps", "2", "--", *agent_command(app),
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
        finally:
            stop_detached(workdir)

    def start_worker(self, worker_id: str, display: str, *extra: str) -> None:
        workdir = self.tmp / f"app-{worker_id}"
        self.apps[worker_id] = LoanApp(workdir)
        log = open(self.tmp / f"{worker_id}.log", "wb")  # noqa: SIM115 - the worker's
        restart = f"{sys.executable} {HERE / 'world.py'} restart {workdir}"
        self.workers[worker_id] = subprocess.Popen(
            [
                sys.executable, "-m", "mmcli", "worker", "loan", "--temporal", self.temporal,
                "--id", worker_id, "--no-agent", "--timeout", "3",
                "--before-each", restart, *extra,
            ],
            env=self.env(display),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()

    def log(self, worker_id: str) -> str:
        return (self.tmp / f"{worker_id}.log").read_text()

    def submit(self, rows: list[tuple[str, str]], batch: str) -> subprocess.CompletedProcess[str]:
        csv = self.tmp / f"{batch}.csv"
        csv.write_text("name,amount\n" + "".join(f"{n},{a}\n" for n, a in rows))
        return mm(
            "batch", "submit", "loan", "--params-file", str(csv), "--temporal", self.temporal,
            "--id", batch,
        )  # fmt: skip

    def status(self, batch: str) -> tuple[int, dict[str, object]]:
        result = mm(
            "batch", "status", batch, "--temporal", self.temporal, "--wait", "--json",
            timeout=150,
        )  # fmt: skip
        return result.returncode, json.loads(result.stdout)

    def filed(self) -> dict[str, list[tuple[str, str]]]:
        """What each worker's app submitted: (name, amount) per record."""
        return {
            w: [(r["name"], str(r["amount"])) for r in app.records()]
            for w, app in self.apps.items()
        }

    def stop(self) -> None:
        for proc in self.workers.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.workers.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for app in self.apps.values():
            stop_detached(app.workdir)


@pytest.fixture(scope="module")
def fleet_store(
    xdisplay: str,
    seaweed: S3Server,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """One bucket prefix for the module's tests, with `loan` recorded there once."""
    url = seaweed.url("fleet-e2e")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in {**seaweed.env(), "MM_HOME": url}.items():
            patch.setenv(key, value)
        Fleet(tmp_path_factory.mktemp("recording"), "", url, []).record()
    yield url


@pytest.fixture
def fleet(
    second_display: str,
    temporal: str,
    fleet_store: str,
    seaweed: S3Server,  # noqa: F811
    xdisplay: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Fleet]:
    for key, value in {**seaweed.env(), "MM_HOME": fleet_store}.items():
        monkeypatch.setenv(key, value)
    fleet = Fleet(tmp_path, temporal, fleet_store, [xdisplay, second_display])
    try:
        yield fleet
    finally:
        fleet.stop()


ROWS = [
    ("Ada Lovelace", "1000"),
    ("Alan Turing", "2500"),
    ("Grace Hopper", "-5"),  # the app refuses it: no confirmation, the row diverges
    ("Edsger Dijkstra", "700"),
    ("Barbara Liskov", "1234"),
    ("Donald Knuth", "4096"),
]


def test_two_workers_run_every_row_of_a_batch_once(fleet: Fleet) -> None:
    fleet.start_worker("w1", fleet.displays[0])
    fleet.start_worker("w2", fleet.displays[1])
    submitted = fleet.submit(ROWS, "b1")
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.strip() == "b1"
    assert "6 rows started" in submitted.stderr

    code, report = fleet.status("b1")
    assert code == 1  # one row diverged: not every row done
    rows = report["rows"]
    assert isinstance(rows, list)
    assert [r["state"] for r in rows] == ["done", "done", "diverged", "done", "done", "done"]
    assert report["counts"] == {
        "done": 5, "healed": 0, "diverged": 1, "failed": 0, "unknown": 0, "pending": 0,
    }  # fmt: skip
    by_worker = {r["row"]: r["worker"] for r in rows}
    assert set(by_worker.values()) == {"w1", "w2"}  # both workers took rows
    # Params as key=value in the CSV's order (name, then amount), in the workers' logs
    # and in the status, though Temporal carries them with their keys sorted.
    logs = fleet.log("w1") + fleet.log("w2")
    assert "(attempt 1): name='Ada Lovelace' amount=1000" in logs, logs
    assert all(list(r["params"]) == ["name", "amount"] for r in rows), rows

    filed = fleet.filed()
    everything = filed["w1"] + filed["w2"]
    expected = [row for row in ROWS if row[1] != "-5"]
    assert sorted(everything) == sorted(expected)  # every row once, none twice
    for worker, records in filed.items():  # each row filed by the worker status names
        for record in records:
            assert by_worker[ROWS.index(record) + 1] == worker

    again = fleet.submit(ROWS, "b1")  # a resubmit starts nothing
    assert again.returncode == 0, again.stderr
    assert "0 rows started, 6 already started" in again.stderr

    objects = Store(fleet.store).objects
    claimed = sorted(int(i.key.rsplit("/", 1)[1]) for i in objects.listing(".mm/claims/b1/"))
    assert claimed == [1, 2, 3, 4, 5, 6]  # the diverged row too: its Submit was claimed
    assert objects.head(".mm/batches/b1.json") is not None

    fleet.stop()
    for worker in ("w1", "w2"):
        assert fleet.workers[worker].returncode == 0, fleet.log(worker)
        assert "stopped after" in fleet.log(worker)


def test_a_row_already_claimed_is_not_acted_on_and_reported_unknown(fleet: Fleet) -> None:
    objects = Store(fleet.store).objects
    ghost = {"worker": "ghost", "at": "2026-01-01T00:00:00+00:00", "batch": "b2", "row": 1}
    objects.put(".mm/claims/b2/1", json.dumps(ghost).encode(), create=True)
    fleet.start_worker("w1", fleet.displays[0])
    assert fleet.submit(ROWS[:2], "b2").returncode == 0

    code, report = fleet.status("b2")
    assert code == 1
    first, second = report["rows"]  # type: ignore[misc]
    assert first["state"] == "unknown" and "claimed by ghost" in first["detail"]
    assert second["state"] == "done" and second["worker"] == "w1"
    assert fleet.filed() == {"w1": [ROWS[1]]}  # row 1 was never acted on


def test_a_worker_killed_mid_row_leaves_its_row_unknown_never_submitted_twice(
    fleet: Fleet,
) -> None:
    fleet.start_worker("w1", fleet.displays[0])
    assert fleet.submit(ROWS[:1], "b3").returncode == 0
    objects = Store(fleet.store).objects
    deadline = time.monotonic() + 90
    while objects.head(".mm/claims/b3/1") is None:  # w1 is about to submit
        assert time.monotonic() < deadline, fleet.log("w1")
        time.sleep(0.05)
    os.killpg(fleet.workers["w1"].pid, signal.SIGKILL)
    fleet.start_worker("w2", fleet.displays[1])  # takes the retry once w1 stops heartbeating
    assert fleet.submit([*ROWS[:1], ROWS[1]], "b3b").returncode == 0

    code, report = fleet.status("b3")
    assert code == 1
    (row,) = report["rows"]  # type: ignore[misc]
    assert row["state"] == "unknown", row
    assert "claimed by w1" in row["detail"]
    code, other = fleet.status("b3b")  # w2 still works: a new batch runs on it
    assert code == 0
    assert [r["state"] for r in other["rows"]] == ["done", "done"]  # type: ignore[attr-defined]
    filed = fleet.filed()
    assert filed["w1"].count(ROWS[0]) <= 1  # submitted at most once, by w1
    assert "claimed by w1" in fleet.log("w2")


def test_a_worker_stopped_mid_row_finishes_it_or_hands_it_over(fleet: Fleet) -> None:
    """Ctrl-C mid-row: the replay stops between two actions and the row, not claimed yet,
    goes to another worker; or (a stop that came before the replay looked) the row is
    finished first. Either way the worker exits 0 and the row is filed once."""
    fleet.start_worker("w1", fleet.displays[0])
    assert fleet.submit(ROWS[:1], "b4").returncode == 0
    deadline = time.monotonic() + 60
    while "step 3/" not in fleet.log("w1"):  # replaying
        assert time.monotonic() < deadline, fleet.log("w1")
        time.sleep(0.02)
    os.killpg(fleet.workers["w1"].pid, signal.SIGTERM)  # as Ctrl-C in its terminal
    assert fleet.workers["w1"].wait(timeout=60) == 0, fleet.log("w1")
    assert "stopped after" in fleet.log("w1")
    fleet.start_worker("w2", fleet.displays[1])

    code, report = fleet.status("b4")
    assert code == 0, report
    (row,) = report["rows"]  # type: ignore[misc]
    assert row["state"] == "done"
    filed = fleet.filed()
    assert filed[row["worker"]] == [ROWS[0]]
    assert sum(len(records) for records in filed.values()) == 1
