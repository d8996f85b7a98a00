"""A batch over a fleet, end to end: the real Temporal dev server and a real SeaweedFS on
127.0.0.1, N workers (`mm worker`), each on its own Xvfb with its own example app, over
one bucket; a batch of rows of which some start with a popup (the agent heals them, on
several workers at once); one worker SIGKILLed mid-row once (and started again).

Prints rows lost, rows submitted twice, heals kept, and rows per minute against one
machine alone (`mm replay --params-file` on one display, same rows' pattern, a copy of the
same recording).

    .venv/bin/python -m benchmarks.fleet.run [--workers 4] [--rows 100] [--baseline-rows 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from examples.world import AGENT, HERE, WANTED, stop_detached
from mmcli.desktop.display import start_xvfb, stop_xvfb
from mmcli.store.recordings import Store
from tests.servers import S3Server, seaweedfs, temporal_dev

REPO = Path(__file__).resolve().parents[2]
POPUP_EVERY = 7
"""Rows 1..N (N workers) and every 7th row start with a popup: the first step diverges.
The first popups run on several workers at once, each healed by the agent before any
branch is saved; later ones replay a learned branch from memory. Temporal does not hand
rows out in order: which rows heal depends on the run."""


def rows(count: int, at_once: int) -> list[dict[str, str]]:
    out = []
    for i in range(1, count + 1):
        popup = i <= at_once or i % POPUP_EVERY == 0
        name = f"Popup Person {i:03d}" if popup else f"Person {i:03d}"
        out.append({"name": name, "amount": str(100 + i)})
    return out


def write_csv(path: Path, batch: list[dict[str, str]]) -> None:
    path.write_text("name,amount\n" + "".join(f"{r['name']},{r['amount']}\n" for r in batch))


def restart_script(folder: Path, app_dir: Path) -> Path:
    """The worker's `--before-each`: restart its app, with a popup for a "Popup" row."""
    script = folder / f"restart-{app_dir.name}.sh"
    world = f"{sys.executable} {HERE / 'world.py'} restart {app_dir}"
    script.write_text(
        "#!/bin/sh\n"
        f'case "$MM_PARAM_NAME" in Popup*) exec {world} --popup-at-start;; '
        f"*) exec {world};; esac\n"
    )
    script.chmod(0o755)
    return script


def agent(app_dir: Path) -> str:
    """The example agent reading this worker's app (its layout file), the row's values."""
    args = [sys.executable, str(AGENT), "--layout", str(app_dir / "layout.json")]
    args += ["--think", "0.05", "--email", WANTED["email"], "--product", WANTED["product"]]
    args += ["--name", "{{name}}", "--amount", "{{amount}}"]
    return subprocess.list2cmdline(args)


def mm(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmcli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


@contextlib.contextmanager
def displays(count: int) -> Iterator[list[str]]:
    started = [start_xvfb() for _ in range(count)]
    try:
        yield [name for _, name in started]
    finally:
        for process, _ in started:
            stop_xvfb(process)


def filed(app_dir: Path) -> list[tuple[str, str]]:
    out = app_dir / "submitted.jsonl"
    if not out.exists():
        return []
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return [(r["name"], str(r["amount"])) for r in records]


class Fleet:
    def __init__(self, tmp: Path, env: dict[str, str], temporal: str, shown: list[str]) -> None:
        self.tmp = tmp
        self.env = env
        self.temporal = temporal
        self.displays = shown
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.app_dirs: list[Path] = []

    def start(self, worker_id: str, index: int) -> None:
        app_dir = self.tmp / f"app-{index}"
        if app_dir not in self.app_dirs:
            self.app_dirs.append(app_dir)
        log = open(self.tmp / f"{worker_id}.log", "wb")  # noqa: SIM115 - the worker's
        self.procs[worker_id] = subprocess.Popen(
            [
                sys.executable, "-m", "mmcli", "worker", "loan", "--temporal", self.temporal,
                "--id", worker_id, "--timeout", "5",
                "--agent", agent(app_dir),
                "--before-each", str(restart_script(self.tmp, app_dir)),
            ],
            env={**self.env, "DISPLAY": self.displays[index]},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=REPO,
        )  # fmt: skip
        log.close()

    def kill_mid_row(self, objects: Any, batch: str, worker_id: str, after: int) -> dict[str, Any]:
        """Once `after` rows are claimed, SIGKILL `worker_id` as it claims its next row;
        start it again (a new id) on the same display."""
        seen: set[str] = set()
        killed: dict[str, Any] = {}
        while True:
            keys = {i.key for i in objects.listing(f".mm/claims/{batch}/")}
            fresh = keys - seen
            seen |= keys
            if len(keys) >= after:
                for key in sorted(fresh):
                    claim = json.loads(objects.get(key).data)
                    if claim.get("worker") == worker_id:
                        os.killpg(self.procs[worker_id].pid, signal.SIGKILL)
                        killed = {"worker": worker_id, "row": claim["row"], "at": time.time()}
                        index = int(worker_id.removeprefix("w"))
                        self.start(f"w{index}b", index)
                        return killed
            time.sleep(0.02)

    def stop(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        for app_dir in self.app_dirs:
            stop_detached(app_dir)


def record(tmp: Path, env: dict[str, str], display: str) -> None:
    app_dir = tmp / "recording-app"
    env = {**env, "DISPLAY": display}
    subprocess.run(
        [sys.executable, str(HERE / "world.py"), "restart", str(app_dir)], env=env, check=True
    )
    try:
        command = [
            sys.executable, str(AGENT), "--layout", str(app_dir / "layout.json"),
            "--think", "0.05", *(a for k, v in WANTED.items() for a in (f"--{k}", v)),
        ]  # fmt: skip
        done = mm(
            "record", "loan", "--param", f"name={WANTED['name']}",
            "--param", f"amount={WANTED['amount']}", "--observe", "0", "--commit-steps", "2",
            "--", *command, env=env,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"recording failed: {done.stderr[-2000:]}")
    finally:
        stop_detached(app_dir)


def baseline(tmp: Path, env: dict[str, str], display: str, batch: list[dict[str, str]]) -> float:
    """Rows per minute of one machine alone: `mm replay --params-file` on one display."""
    app_dir = tmp / "app-alone"
    csv = tmp / "alone.csv"
    write_csv(csv, batch)
    began = time.monotonic()
    done = mm(
        "replay", "loan", "--params-file", str(csv), "--timeout", "5", "--agent", agent(app_dir),
        "--before-each", str(restart_script(tmp, app_dir)), "--json",
        env={**env, "DISPLAY": display}, timeout=3600,
    )  # fmt: skip
    seconds = time.monotonic() - began
    stop_detached(app_dir)
    outcomes = [r["outcome"] for r in json.loads(done.stdout)] if done.stdout else []
    print(f"one machine alone: {len(batch)} rows in {seconds:.0f} s; outcomes {outcomes}")
    return len(batch) / seconds * 60


def run(workers: int, count: int, baseline_rows: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="mm-fleet-bench-"))
    batch = rows(count, workers)
    with seaweedfs(tmp / "seaweedfs") as s3, temporal_dev(tmp / "temporal") as temporal:
        return _run(tmp, s3, temporal, workers, batch, baseline_rows)


def _run(
    tmp: Path, s3: S3Server, temporal: str, workers: int, batch: list[dict[str, str]], base: int
) -> dict[str, Any]:
    fleet_url, alone_url = s3.url("fleet"), s3.url("alone")
    os.environ.update(s3.env())  # this process reads the claims too
    env = {**os.environ, **s3.env(), "MM_HOME": fleet_url, "COLUMNS": "200"}
    with displays(workers + 1) as shown:
        record(tmp, env, shown[0])
        archive = tmp / "loan.tar.gz"
        assert mm("export", "loan", str(archive), env=env).returncode == 0
        alone_env = {**env, "MM_HOME": alone_url}
        assert mm("import", str(archive), env=alone_env).returncode == 0
        alone_rpm = baseline(tmp, alone_env, shown[workers], batch[:base]) if base else 0.0

        fleet = Fleet(tmp, env, temporal, shown[:workers])
        for i in range(workers):
            fleet.start(f"w{i}", i)
        objects = Store(fleet_url).objects
        killed: dict[str, Any] = {}
        killer = threading.Thread(
            target=lambda: killed.update(
                fleet.kill_mid_row(objects, "bench", "w1", count_kill(batch))
            ),
            daemon=True,
        )
        csv = tmp / "rows.csv"
        write_csv(csv, batch)
        began = time.monotonic()
        killer.start()
        submitted = mm(
            "batch", "submit", "loan", "--params-file", str(csv), "--temporal", temporal,
            "--id", "bench", env=env,
        )  # fmt: skip
        if submitted.returncode != 0:
            raise SystemExit(f"submit failed: {submitted.stderr}")
        status = mm(
            "batch", "status", "bench", "--temporal", temporal, "--wait", "--json",
            env=env, timeout=7200,
        )  # fmt: skip
        seconds = time.monotonic() - began
        fleet.stop()
        report = json.loads(status.stdout)
        every = [row for d in fleet.app_dirs for row in filed(d)]
        listed = json.loads(mm("ls", "--json", env=env).stdout)
        branches = next(r["branches"] for r in listed if r["name"] == "loan")

    wanted = [(r["name"], r["amount"]) for r in batch]
    twice = sorted({row for row in every if every.count(row) > 1})
    states = {r["row"]: r for r in report["rows"]}
    lost = [
        i
        for i, row in enumerate(wanted, start=1)
        if (states[i]["state"] in ("done", "healed") and row not in every)
        or states[i]["state"] == "pending"
    ]
    healed = [r for r in report["rows"] if r["state"] == "healed"]
    healers = sorted({r["worker"] for r in healed})
    figures = {
        "workers": workers,
        "rows": len(batch),
        "counts": report["counts"],
        "rows_lost": len(lost),
        "rows_submitted_twice": len(twice),
        "killed": killed,
        "killed_row_state": states.get(killed.get("row", -1), {}).get("state"),
        "killed_row_filed": every.count(wanted[killed["row"] - 1]) if killed else None,
        "healed_rows": len(healed),
        "healed_on_workers": healers,
        "branches_after": branches,
        "seconds": round(seconds, 1),
        "rows_per_minute": round(len(batch) / seconds * 60, 2),
        "one_machine_rows_per_minute": round(alone_rpm, 2),
        "folder": str(tmp),
    }
    return figures


def count_kill(batch: list[dict[str, str]]) -> int:
    return max(2, len(batch) // 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--baseline-rows", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    a = parser.parse_args()
    figures = run(a.workers, a.rows, a.baseline_rows)
    print(json.dumps(figures, indent=2))
    if a.json:
        a.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
