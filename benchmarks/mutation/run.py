"""Mutation testing of the core: does a small mistake in the code fail a fast test?

    nice -n 10 .venv/bin/python -m benchmarks.mutation.run [--only MODULE...] [--json out]
        [--since previous.json]

For each target module (`TARGETS`), every mutant (`mutants.py`) is run against the fast
unit tests that concern the module, in a copy of the repository (the worktree is never
changed). A baseline run with a line tracer first learns which tests execute which lines
of the target; each mutant then runs only the tests that execute its lines (all of the
module's tests for a change to code run at import, such as a constant), stopping at the
first failure. A mutant is *killed* when a test fails (or errors, or times out), and
*survives* when they all pass; a mutant on a line no test executes survives without a
run ("not covered"). With `--since`, the mutants a previous run on the same source killed
count as killed without a run (tests added since only kill more).

Mutants run one at a time, each in a process forked from one that has already imported
the third-party libraries, so a mutant costs about what its tests cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from benchmarks.mutation.mutants import Mutant, mutants_of, mutated_source

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Target:
    path: str
    tests: tuple[str, ...]


U = "tests/unit/"


def _tests(*names: str) -> tuple[str, ...]:
    return tuple(f"{U}test_{name}.py" for name in names)


SCREEN_VALUE_TESTS = _tests(
    "fingerprint",
    "fingerprint_values",
    "matcher",
    "matcher_bounds",
    "matcher_rules",
    "build_steps",
    "integrate",
    "relocate",
)
MATCHER_TESTS = _tests(
    "matcher",
    "matcher_bounds",
    "matcher_rules",
    "matcher_ink",
    "excuses",
    "relocate",
    "build_steps",
    "recorder_channels",
    "integrate",
    "explain",
)
TARGETS = {
    "fingerprint": Target("mmcli/screen/fingerprint.py", SCREEN_VALUE_TESTS),
    "analysis": Target("mmcli/screen/analysis.py", SCREEN_VALUE_TESTS),
    "matcher": Target("mmcli/screen/matcher.py", MATCHER_TESTS),
    "excuses": Target("mmcli/screen/excuses.py", MATCHER_TESTS),
    "carets": Target("mmcli/screen/carets.py", MATCHER_TESTS),
    "steps": Target(
        "mmcli/capture/steps.py",
        _tests("build_steps", "integrate", "matcher_rules", "recorder_channels"),
    ),
    "echoes": Target("mmcli/screen/echoes.py", _tests("build_steps")),
    "integrate": Target(
        "mmcli/capture/integrate.py", _tests("integrate", "integrate_outcomes", "build_steps")
    ),
    "windows": Target(
        "mmcli/screen/windows.py",
        _tests("windows", "window_types", "keyboard_window", "replayer", "relocate"),
    ),
    "judge": Target(
        "mmcli/replay/judge.py",
        _tests("replayer", "relocate", "window_types", "integrate_outcomes", "matcher_bounds"),
    ),
}
PYTEST_ARGS = ["-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider", "--no-header"]
WARM = ("numpy", "PIL.Image", "PIL.ImageDraw", "PIL.ImageFont", "pytest", "typer", "rich")


@dataclass
class Outcome:
    mutant: Mutant
    status: str
    """killed, survived, timeout, not covered."""
    seconds: float = 0.0


@dataclass
class ModuleResult:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(o.status in statuses for o in self.outcomes)

    @property
    def score(self) -> float:
        total = len(self.outcomes)
        return self.count("killed", "timeout") / total if total else 1.0


def _copy_repository() -> Path:
    """The tracked files of the repository, in a temporary directory."""
    work = Path(tempfile.mkdtemp(prefix="mm-mutation-"))
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / name.decode()
        if src.is_file():
            dst = work / name.decode()
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return work


def _in_child(run: Any, timeout: float) -> tuple[int, float]:
    """Run `run()` (which returns an exit code) in a forked child; its code and how long it
    took; -1 if it took longer than `timeout` seconds (it is killed)."""
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        code = 3
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = int(run())
        finally:
            os._exit(code)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), time.monotonic() - started
        if time.monotonic() - started > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -1, time.monotonic() - started
        time.sleep(0.01)


class _LineTracer:
    """Which lines of one file each test executes (and which run outside tests: imports)."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.current = "<import>"
        self.lines: dict[str, set[int]] = {}

    def trace(self, frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code.co_filename != self.filename:
            return None
        self.lines.setdefault(self.current, set()).add(frame.f_lineno)
        return self.local

    def local(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            self.lines.setdefault(self.current, set()).add(frame.f_lineno)
        return self.local

    # pytest hooks
    def pytest_runtest_setup(self, item: Any) -> None:
        self.current = item.nodeid

    def pytest_runtest_teardown(self, item: Any) -> None:
        self.current = "<import>"

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        self.order = [item.nodeid for item in items]


def _coverage(work: Path, target: Target, out: Path) -> int:
    import pytest

    tracer = _LineTracer(str(work / target.path))
    sys.settrace(tracer.trace)
    threading.settrace(tracer.trace)
    code = pytest.main([*PYTEST_ARGS, *target.tests], plugins=[tracer])
    sys.settrace(None)
    imported = str(sys.modules["mmcli"].__file__)
    if not imported.startswith(str(work)):
        raise SystemExit(f"mmcli imported from {imported}, not the copy")
    data = {k: sorted(v) for k, v in tracer.lines.items()}
    out.write_text(json.dumps({"code": int(code), "lines": data, "order": tracer.order}))
    return 0


def _pytest(args: Sequence[str]) -> int:
    import pytest

    return int(pytest.main([*PYTEST_ARGS, *args]))


def run_module(
    work: Path,
    name: str,
    target: Target,
    say: Any,
    killed_before: Sequence[tuple[str, str]] | None = None,
) -> ModuleResult:
    """`killed_before`: the previous run's outcome of each mutant, in order, from a run on
    the same source; with tests only added since, a mutant killed then is killed still."""
    source_path = work / target.path
    original = source_path.read_text()
    mutants = mutants_of(target.path, original)
    if killed_before is not None and [m for m, _ in killed_before] != list(map(str, mutants)):
        raise SystemExit(f"{name}: the previous run has other mutants (was the source changed?)")
    cov_file = work / f".coverage-{name}.json"
    code, baseline = _in_child(lambda: _coverage(work, target, cov_file), 600)
    cov = json.loads(cov_file.read_text())
    if code != 0 or cov["code"] != 0:
        raise SystemExit(f"{name}: the tests fail without any mutant (exit {cov['code']})")
    order: list[str] = cov["order"]
    by_line: dict[int, list[str]] = {}
    for test, lines in cov["lines"].items():
        if test != "<import>":
            for line in lines:
                by_line.setdefault(line, []).append(test)
    at_import = set(cov["lines"].get("<import>", []))
    say(f"{name}: {len(mutants)} mutants, {len(order)} tests (baseline {baseline:.1f}s traced)")
    result = ModuleResult(name)
    try:
        for i, mutant in enumerate(mutants, 1):
            if killed_before is not None and killed_before[i - 1][1] in ("killed", "timeout"):
                result.outcomes.append(Outcome(mutant, killed_before[i - 1][1]))
                continue
            span = range(mutant.line, _end_line(original, mutant) + 1)
            tests = sorted({t for line in span for t in by_line.get(line, [])}, key=order.index)
            if not tests and any(line in at_import for line in span):
                tests = list(target.tests)
            if not tests:
                result.outcomes.append(Outcome(mutant, "not covered"))
                continue
            source_path.write_text(mutated_source(original, mutant))
            code, took = _in_child(lambda t=tests: _pytest(t), max(20.0, 3 * baseline))
            status = "survived" if code == 0 else "timeout" if code == -1 else "killed"
            result.outcomes.append(Outcome(mutant, status, took))
            if status == "survived":
                say(f"  [{i}/{len(mutants)}] survived: {mutant}")
    finally:
        source_path.write_text(original)
    return result


def _end_line(source: str, mutant: Mutant) -> int:
    import ast

    node = list(ast.walk(ast.parse(source)))[mutant.node]
    return getattr(node, "end_lineno", None) or mutant.line


def report(results: list[ModuleResult]) -> str:
    lines = ["", "module        mutants  killed  timeout  survived  not covered  score"]
    for r in results:
        lines.append(
            f"{r.name:<13} {len(r.outcomes):>7}  {r.count('killed'):>6}  {r.count('timeout'):>7}"
            f"  {r.count('survived'):>8}  {r.count('not covered'):>11}  {r.score:6.1%}"
        )
    total = [o for r in results for o in r.outcomes]
    killed = sum(o.status in ("killed", "timeout") for o in total)
    if total:
        lines.append(f"{'all':<13} {len(total):>7}  killed {killed} ({killed / len(total):.1%})")
    for r in results:
        left = [o for o in r.outcomes if o.status in ("survived", "not covered")]
        if left:
            lines.append(f"\nsurvivors in {r.name}:")
            lines.extend(f"  {o.mutant}  [{o.status}]" for o in left)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutation.run")
    parser.add_argument("--only", nargs="+", choices=sorted(TARGETS), help="these modules only")
    parser.add_argument("--json", type=Path, help="write every mutant's outcome here")
    parser.add_argument(
        "--since",
        type=Path,
        help="a previous run's --json, on the same source: run only the mutants it left alive",
    )
    args = parser.parse_args(argv)
    before: dict[str, list[tuple[str, str]]] = {}
    if args.since:
        for entry in json.loads(args.since.read_text()):
            before.setdefault(entry["module"], []).append((entry["mutant"], entry["status"]))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up the copy
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.dont_write_bytecode = True
    work = _copy_repository()
    say = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    try:
        os.chdir(work)
        sys.path.insert(0, str(work))
        for module in WARM:  # imported once here, inherited by every forked run
            __import__(module)
        assert not any(m == "mmcli" or m.startswith("mmcli.") for m in sys.modules)
        results = [
            run_module(work, name, TARGETS[name], say, before.get(name) if args.since else None)
            for name in args.only or TARGETS
        ]
    finally:
        os.chdir(ROOT)
        shutil.rmtree(work, ignore_errors=True)
    print(report(results))
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "module": r.name,
                        "mutant": str(o.mutant),
                        "status": o.status,
                        "seconds": round(o.seconds, 2),
                    }
                    for r in results
                    for o in r.outcomes
                ],
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
