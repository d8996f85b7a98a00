"""Shared pieces of the performance benchmarks: timed subprocesses with their peak memory,
figures with targets, the printed table and the JSON file."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Timed:
    """One finished subprocess: wall seconds, exit code, peak resident memory, output."""

    wall: float
    returncode: int
    maxrss_mb: float
    stdout: str
    stderr: str


def run_timed(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600.0,
) -> Timed:
    """Run `command` to completion; wall time from spawn to exit, ru_maxrss of that child."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=err,
            env=None if env is None else dict(env),
            cwd=cwd or REPO,
        )
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Timed(
            wall,
            process.returncode,
            usage.ru_maxrss / 1024,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


def mm_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mmcli", *args]


def mm_env(store: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "MM_HOME": str(store), "COLUMNS": "120", **extra}


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    runs: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(statistics.median(values), min(values), max(values), len(values))

    def text(self, digits: int = 2) -> str:
        if self.runs == 1:
            return f"{self.median:.{digits}f}"
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}-{self.high:.{digits}f})"


@dataclass
class Figure:
    """One printed line: a measured value and, if it has one, its target (value <= bound)."""

    key: str
    label: str
    value: float
    unit: str
    bound: float | None = None
    spread: Spread | None = None
    note: str = ""

    @property
    def status(self) -> str:
        if self.bound is None:
            return ""
        return "ok" if self.value <= self.bound else "MISSED"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "value": round(self.value, 4),
            "unit": self.unit,
        }
        if self.spread is not None:
            out["spread"] = {k: round(v, 4) for k, v in asdict(self.spread).items()}
        if self.bound is not None:
            out["target_max"] = self.bound
            out["status"] = self.status
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Report:
    title: str
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, figure: Figure) -> Figure:
        self.figures.append(figure)
        return figure

    def print(self) -> None:
        print(f"\n{self.title}")
        print(f"machine: {machine_line()}")
        width = max([len(f.label) for f in self.figures] + [10])
        print(f"{'':<{width}}  {'value':>24}  {'target':>10}  status")
        for f in self.figures:
            shown = f"{f.spread.text() if f.spread else f'{f.value:.2f}'} {f.unit}"
            target = f"<= {f.bound:g}" if f.bound is not None else ""
            print(f"{f.label:<{width}}  {shown:>24}  {target:>10}  {f.status}")
            if f.note:
                print(f"{'':<{width}}    {f.note}")
        for note in self.notes:
            print(note)

    def as_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "machine": machine(),
            "figures": {f.key: f.as_json() for f in self.figures},
            "details": self.details,
            "notes": self.notes,
        }

    def write_json(self, path: Path | None) -> None:
        if path is not None:
            path.write_text(json.dumps(self.as_json(), indent=2, default=str) + "\n")


def revision() -> str:
    """The checked-out commit, with `+changes` when mmcli/ has uncommitted edits."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "mmcli"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return (head or "unknown") + ("+changes" if dirty else "")


def machine() -> dict[str, Any]:
    return {
        "revision": revision(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def machine_line() -> str:
    m = machine()
    load = " ".join(f"{x:.2f}" for x in m["load_average"])
    return f"{m['cpus']} cores, Python {m['python']}, load average {load}, mm at {m['revision']}"


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence a child process's stderr (the agent's progress) at the descriptor level."""
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def compiled() -> None:
    """Compile mm's modules (and the examples') where their cached bytecode is missing or
    older than the source, as an installed mm has them: with PYTHONDONTWRITEBYTECODE set,
    a checkout edited since its last compile would recompile the changed modules at every
    start of every `mm` timed, which no installed copy does."""
    import compileall

    root = Path(__file__).resolve().parents[2]
    for package in ("mmcli", "examples", "benchmarks"):
        compileall.compile_dir(root / package, quiet=1)


def run_benchmark(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace, Path], Report],
    details: Callable[[Report], None] | None = None,
    *,
    display: bool = True,
) -> int:
    """A benchmark's `main`: parse its arguments (plus `--json`), run it in a temporary
    directory on a fresh Xvfb (`display=False`: it starts its own), print the report and
    its details, and write the figures to the `--json` file if one was given. mm's
    modules are compiled first (`compiled`)."""
    from mmcli.desktop.display import VirtualDisplay

    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    compiled()
    screen = VirtualDisplay() if display else contextlib.nullcontext()
    saved = os.environ.get("DISPLAY")
    with tempfile.TemporaryDirectory(prefix="mm-perf-") as tmp, screen as virtual:
        if virtual is not None:  # what the benchmark starts and asks runs on it
            os.environ["DISPLAY"] = virtual.display
        try:
            report = run(args, Path(tmp))
        finally:
            if saved is None:
                os.environ.pop("DISPLAY", None)
            else:
                os.environ["DISPLAY"] = saved
    report.print()
    if details is not None:
        details(report)
    report.write_json(args.json)
    return 0
