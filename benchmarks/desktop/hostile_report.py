"""The hostile matrix's report (`hostile.py`): a line a replay, a table of outcomes per
dimension value, mm's reason for each replay that did not end correctly, and the JSON
file of every run."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.desktop.bench import Outcome
from benchmarks.desktop.run import git_commit

if TYPE_CHECKING:
    from benchmarks.desktop.hostile import Case, Result


def line(result: Result) -> str:
    j = result.judgement
    outcome = "n/a" if result.not_applicable else str(j.outcome)
    return (
        f"{result.case.name:<60} {result.case.label!s:<9}#{j.recording} {outcome:<17}"
        f"exit {j.exit_code} record {j.record!r} ({j.seconds}s)"
    )


COLUMNS = {
    Outcome.WRONG_ACTION: "wrong",
    Outcome.FALSE_DIVERGENCE: "false div",
    Outcome.FLAGGED: "flagged",
    Outcome.CORRECT: "correct",
    Outcome.ERROR: "error",
}
"""The table's columns: outcomes, as headed."""
DIMENSIONS: dict[str, Callable[[Case], str]] = {
    "label": lambda c: str(c.label),
    "kind": lambda c: c.kind.key,
    "place": lambda c: c.place.key,
    "whose": lambda c: c.whose.key,
    "focus": lambda c: c.focus.key,
    "app": lambda c: c.app,
    "wm": lambda c: c.wm,
    "style": lambda c: c.style,
}
"""How the table reads each dimension's value off a case."""


def table(results: list[Result]) -> str:
    """Per dimension value: runs judged, then wrong actions, false divergences, flagged,
    correct and errors; n/a (the window could not be placed) apart."""
    head = f"{'dimension':<11}{'value':<14}{'runs':>6}" + "".join(
        f"{h:>11}" for h in COLUMNS.values()
    )
    lines = [head + f"{'n/a':>6}"]
    for name, value_of in DIMENSIONS.items():
        for value in dict.fromkeys(value_of(r.case) for r in results):
            lines.append(_row(name, value, [r for r in results if value_of(r.case) == value]))
    lines.append(_row("total", "", results))
    return "\n".join(lines)


def _row(name: str, value: str, items: list[Result]) -> str:
    judged = [r for r in items if not r.not_applicable]
    counts = Counter(r.judgement.outcome for r in judged)
    return (
        f"{name:<11}{value:<14}{len(judged):>6}"
        + "".join(f"{counts[o]:>11}" for o in COLUMNS)
        + f"{len(items) - len(judged):>6}"
    )


def explain(stderr: str) -> str:
    """The line of mm's stderr that says why a replay ended as it did: where it diverged
    or what differed; for a replay that acted, the first window it left out of its check;
    else its last line."""
    lines = stderr.strip().splitlines()
    said = [line for line in lines if line.startswith(("diverged at", "outcome differs"))]
    left_out = [line for line in lines if "left out" in line]
    return (said[-1:] or left_out[:1] or lines[-1:] or [""])[0][:400]


def write_json(path: Path, args: argparse.Namespace, started: float, results: list[Result]) -> None:
    out = {
        "commit": git_commit(),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "minutes": round((time.monotonic() - started) / 60, 1),
        "args": {k: v for k, v in vars(args).items() if k not in ("json", "keep")},
        "runs": [
            {
                "app": r.case.app,
                "wm": r.case.wm,
                "style": r.case.style,
                "kind": r.case.kind.key,
                "place": r.case.place.key,
                "whose": r.case.whose.key,
                "focus": r.case.focus.key,
                "label": str(r.case.label),
                "recording": r.judgement.recording,
                "outcome": "n/a" if r.not_applicable else str(r.judgement.outcome),
                "exit_code": r.judgement.exit_code,
                "record": r.judgement.record,
                "expected": r.judgement.expected,
                "seconds": r.judgement.seconds,
                "arranged": asdict(r.arranged) if r.arranged else None,
                "stderr": r.judgement.stderr[-1500:],
            }
            for r in results
        ],
    }
    path.write_text(json.dumps(out, indent=2) + "\n")


def report(results: list[Result], args: argparse.Namespace, started: float) -> None:
    minutes = (time.monotonic() - started) / 60
    print(
        f"\nhostile matrix: {len(results)} replays, {args.recordings} recording(s) per task, "
        f"commit {git_commit()}, {minutes:.1f} min\n"
    )
    print(table(results))
    astray = [
        r
        for r in results
        if r.arranged is not None
        and not (r.arranged.focused if r.case.focus.takes else r.arranged.task_focused)
    ]
    if astray:
        print("\nthe focus was not where the case says (the app kept it elsewhere):")
        for r in astray:
            a = r.arranged
            assert a is not None
            where = "the window" if a.focused else "the task" if a.task_focused else "elsewhere"
            print(f"  {r.case.name}: in {where}")
    not_applicable = [r for r in results if r.not_applicable]
    if not_applicable:
        print("\nn/a (the window could not be put there):")
        for r in not_applicable:
            print(f"  {r.case.name}: {r.judgement.stderr.removeprefix('harness: ')}")
    odd = [
        r for r in results if not r.not_applicable and r.judgement.outcome is not Outcome.CORRECT
    ]
    if odd:
        print("\nnot correct (mm's reason):")
        for r in sorted(odd, key=lambda r: (r.judgement.outcome, r.case.name)):
            print(
                f"  {r.judgement.outcome!s:<17}{r.case.name} ({r.case.label}) "
                f"#{r.judgement.recording}: exit {r.judgement.exit_code}, "
                f"record {r.judgement.record!r}: {explain(r.judgement.stderr)}"
            )
