"""The real-desktop matrix over many runs: merges the `--json` files of
`benchmarks.desktop.run` (one desktop, one agent style, some recordings each) and prints,
per desktop and agent style, the app x scenario matrix, then the totals over everything.

A full matrix (10 recordings x 3 desktops x 8 apps x 2 agent styles) takes more than a
day on 2 cores, so it is run in slices (`run --first I --recordings N --json F`) and
merged here. A run of the same (desktop, style, app, scenario, recording) in a later file
replaces the earlier one; a file that does not say its desktop (written before the file
kept it) is named as `FILE=DESKTOP/STYLE`.

    python -m benchmarks.desktop.matrix benchmarks/desktop/results/*.json
    python -m benchmarks.desktop.matrix old.json=openbox+tint2/pyautogui new.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks.desktop.bench import SHORT, Outcome, outcome_cell, step_summary
from benchmarks.desktop.scenarios import SCENARIOS

TARGET_RECORDINGS = 10
"""Recordings per task, desktop and agent style that make the full matrix."""


@dataclass(frozen=True)
class Run:
    desktop: str
    style: str
    app: str
    scenario: str
    label: str
    recording: int
    outcome: Outcome
    commit: str
    detail: str
    step_ms: float | None


def load(paths: list[tuple[Path, str | None]]) -> dict[tuple[str, str, str, str, int], Run]:
    """Every run of the files, later files replacing earlier runs of the same key.
    `paths`: each file with the "desktop/style" it was run on when the file does not say."""
    runs: dict[tuple[str, str, str, str, int], Run] = {}
    for path, named in paths:
        data = json.loads(path.read_text())
        desktop, style = data.get("desktop"), data.get("style")
        if named is not None:
            desktop, style = named.split("/", 1)
        if desktop is None or style is None:
            raise SystemExit(f"{path}: the file does not say its desktop: name it with --as")
        for r in data["runs"]:
            run = Run(
                desktop,
                style,
                r["app"],
                r["scenario"],
                r["label"],
                r["recording"],
                Outcome(r["outcome"]),
                data.get("commit", "?"),
                reason(r.get("stderr") or ""),
                r.get("step_ms"),
            )
            runs[(desktop, style, run.app, run.scenario, run.recording)] = run
    return runs


def reason(stderr: str) -> str:
    """The line of mm's stderr that says why a run ended as it did: where it diverged or
    what differed, else its last line."""
    lines = stderr.strip().splitlines()
    said = [line for line in lines if line.startswith(("diverged at", "outcome differs"))]
    return (said or lines or [""])[-1][:200]


def matrix(runs: list[Run]) -> str:
    apps = sorted({r.app for r in runs})
    keys = [s.key for s in SCENARIOS if any(r.scenario == s.key for r in runs)]
    labels = {r.scenario: r.label for r in runs}
    width = max(12, *(len(a) + 2 for a in apps))
    lines = [f"{'scenario':<20}{'label':<10}" + "".join(f"{a:>{width}}" for a in apps)]
    for key in keys:
        row = f"{key:<20}{labels[key]:<10}"
        for app in apps:
            items = [r.outcome for r in runs if r.app == app and r.scenario == key]
            row += f"{outcome_cell(items):>{width}}"
        lines.append(row)
    recordings = {a: len({r.recording for r in runs if r.app == a}) for a in apps}
    lines.append(
        f"{'recordings':<30}"
        + "".join(f"{f'{n}/{TARGET_RECORDINGS}':>{width}}" for n in recordings.values())
    )
    return "\n".join(lines)


def totals(runs: list[Run]) -> list[str]:
    lines = []
    for label in ("harmless", "unsafe"):
        items = [r for r in runs if r.label == label]
        counts = Counter(r.outcome for r in items)
        line = f"{label} ({len(items)} runs): " + ", ".join(f"{o} {counts[o]}" for o in Outcome)
        if label == "harmless" and items:
            share = counts[Outcome.FALSE_DIVERGENCE] / len(items)
            line += f"; false divergences {share:.1%} (target <= 2 %)"
        lines.append(line)
    return lines


def step_times(runs: list[Run]) -> list[str]:
    """Replay's own time a step per app that has one (`bench.step_summary`)."""
    apps = sorted({r.app for r in runs if r.step_ms is not None})
    return [f"  {a:<9}{step_summary(r.step_ms for r in runs if r.app == a)}" for a in apps]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE[=DESKTOP/STYLE]",
        help="--json files of benchmarks.desktop.run; =DESKTOP/STYLE names the desktop and "
        "agent style of a file that does not say them",
    )
    args = parser.parse_args()
    paths: list[tuple[Path, str | None]] = []
    for arg in args.files:
        path, _, named = arg.partition("=")
        paths.append((Path(path), named or None))
    runs = load(paths)
    groups: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs.values():
        groups[(run.desktop, run.style)].append(run)
    for (desktop, style), items in sorted(groups.items()):
        commits = ", ".join(sorted({r.commit for r in items}))
        print(f"\n## {desktop}, {style} agent (commits {commits})\n")
        print(matrix(items))
        print()
        print("\n".join(totals(items)))
        print("replay's own time a step (replays that exited 0): median (min-max), max/min")
        print("\n".join(step_times(items)))
    everything = list(runs.values())
    print(f"\n## all: {len(groups)} desktop x style, {len(everything)} runs\n")
    print("\n".join(totals(everything)))
    odd = [r for r in everything if r.outcome not in (Outcome.CORRECT,)]
    if odd:
        print("\nnot ok:")
        for r in sorted(odd, key=lambda r: (r.outcome, r.desktop, r.style, r.app, r.scenario)):
            print(
                f"  {SHORT[r.outcome]:<6}{r.desktop} {r.style} {r.app} {r.scenario} "
                f"#{r.recording}: {r.detail}"
            )
    return 1 if any(r.outcome is Outcome.WRONG_ACTION for r in everything) else 0


if __name__ == "__main__":
    raise SystemExit(main())
