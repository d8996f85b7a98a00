"""Screen validation on a real desktop with third-party apps: every scenario judged against
every recording through the real `mm replay --no-agent`.

Starts a desktop (Xvfb + openbox + tint2 with a seconds clock + dunst + wallpaper; or IceWM,
or Xfce, at their distribution's defaults), records each app's task N times (the agent's
timing differs per recording) and replays every applicable scenario
(benchmarks/desktop/scenarios.py) against every recording. Prints the
matrix app x scenario -> correct / false divergence / wrong action (counted over
recordings) and the masked fraction of each recording's task window.

    python -m benchmarks.desktop.run [--apps gtk qt chromium firefox ...] [--scenarios ...]
        [--recordings N] [--first I] [--wm openbox|icewm|xfce] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.desktop.bench import (
    Bench,
    Judgement,
    Outcome,
    Recorded,
    outcome_cell,
    step_summary,
    verified_summary,
)
from benchmarks.desktop.catalog import APPS
from benchmarks.desktop.desktop import WM_PROGRAMS, WMS, Desktop, missing_programs
from benchmarks.desktop.scenarios import SCENARIOS, Scenario
from examples.vncserver import VncServer


def run_app(
    desktop: Desktop,
    key: str,
    work: Path,
    scenarios: list[Scenario],
    recordings: range,
    timeout: float,
    style: str,
    display: str | None = None,
    vary: bool = True,
    shots: Path | None = None,
) -> tuple[list[Recorded], list[Judgement]]:
    app = APPS[key](desktop, work / key)
    bench = Bench(
        desktop,
        app,
        work / "store",
        timeout=timeout,
        style=style,
        display=display,
        vary=vary,
        shots=shots,
    )
    judgements: list[Judgement] = []
    try:
        recorded = []
        for i in recordings:
            try:
                recorded.append(bench.record(i))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"{key}: recording {i} failed twice, left out: {e}", file=sys.stderr)
        for r in recorded:
            print(
                f"{key}: recorded {r.name} ({r.world.describe()}), "
                f"{r.masked:.1%} of the window masked",
                file=sys.stderr,
            )
        for scenario in scenarios:
            if not scenario.applies_to(app):
                continue
            for r in recorded:
                j = bench.judge(scenario, r)
                judgements.append(j)
                print(
                    f"{key:<9}{scenario.key:<20}#{r.index} {j.outcome:<17} exit {j.exit_code} "
                    f"record {j.record!r} ({j.seconds}s)",
                    file=sys.stderr,
                )
    finally:
        app.close()
    return recorded, judgements


def matrix(apps: list[str], scenarios: list[Scenario], judgements: list[Judgement]) -> str:
    width = 14
    lines = [f"{'scenario':<20}{'label':<10}" + "".join(f"{a:>{width}}" for a in apps)]
    for s in scenarios:
        row = f"{s.key:<20}{s.label!s:<10}"
        for a in apps:
            items = [j for j in judgements if j.app == a and j.scenario == s.key]
            row += f"{outcome_cell(j.outcome for j in items):>{width}}"
        lines.append(row)
    return "\n".join(lines)


def totals(judgements: list[Judgement]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for label in ("harmless", "unsafe"):
        items = [j for j in judgements if j.label == label]
        out[label] = {str(o): sum(1 for j in items if j.outcome is o) for o in Outcome}
        out[label]["runs"] = len(items)
    return out


def desktop_name(wm: str, panel: str, vnc: bool) -> str:
    """The desktop a run was on, as `benchmarks.desktop.matrix` groups runs: openbox with
    tint2's default panel is "openbox+tint2", with ours "openbox+tint2(ours)"."""
    name = {"openbox": "openbox+tint2", "icewm": "icewm", "xfce": "xfce"}[wm]
    if wm == "openbox" and panel == "ours":
        name += "(ours)"
    return name + (" over vnc" if vnc else "")


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--apps",
        nargs="*",
        choices=sorted(APPS),
        default=list(APPS),
        help="the apps to drive (default: all): gtk (zenity), qt, chromium and firefox (on "
        "the same page), xaw (xcalc), tk, wine (notepad), calc (LibreOffice Calc), java "
        "(Swing), writer (LibreOffice Writer), gimp, gimp-fill (a drag, then a key at once); "
        "firefox, java, writer and the gimp tasks need "
        "benchmarks/desktop/setup",
    )
    parser.add_argument("--scenarios", nargs="*", help="only these scenario keys")
    parser.add_argument("--recordings", type=int, default=10, help="recordings per task")
    parser.add_argument(
        "--first",
        type=int,
        default=0,
        help="index of the first recording (its timing seed): a run split in two, "
        "--recordings 5 then --recordings 5 --first 5, covers the same 10 recordings",
    )
    parser.add_argument("--timeout", type=float, default=4.0, help="mm replay --timeout")
    parser.add_argument("--style", default="pyautogui", help="agent style (pyautogui, xdotool)")
    parser.add_argument(
        "--panel",
        choices=("ours", "default"),
        default="ours",
        help="tint2's configuration: ours, or the distribution's default",
    )
    parser.add_argument(
        "--wm",
        choices=WMS,
        default="openbox",
        help="the window manager: openbox with tint2, icewm with its own taskbar, or xfce "
        "(xfwm4 and xfce4-panel)",
    )
    parser.add_argument(
        "--vnc",
        action="store_true",
        help="replay over VNC (x11vnc serving the desktop, --display vnc://...); the agent "
        "is recorded on the X display",
    )
    parser.add_argument(
        "--fixed-world",
        action="store_true",
        help="every recording with the window at the same place and the default themes "
        "(else each draws its window position, window-manager theme and GTK theme)",
    )
    parser.add_argument("--json", type=Path, help="also write every run to this file")
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the store, the apps' files and a screenshot of every replay that did not "
        "end correctly (shots/) in this directory",
    )
    args = parser.parse_args()
    missing = missing_programs(
        *WM_PROGRAMS[args.wm], *(p for key in args.apps for p in APPS[key].programs)
    )
    if missing:
        print(
            f"missing programs: {', '.join(missing)} (scripts/setup, benchmarks/desktop/setup)",
            file=sys.stderr,
        )
        return 1
    scenarios = [s for s in SCENARIOS if not args.scenarios or s.key in args.scenarios]
    started = time.monotonic()
    recorded: dict[str, list[Recorded]] = {}
    judgements: list[Judgement] = []
    with (
        tempfile.TemporaryDirectory(prefix="mm-desktop-") as tmp,
        Desktop(Path(tmp) / "desktop", panel_config=args.panel, wm=args.wm) as desktop,
        contextlib.ExitStack() as stack,
    ):
        display = None
        if args.vnc:
            display = stack.enter_context(VncServer(desktop.display)).address
        work = args.keep or Path(tmp)
        for key in args.apps:
            recorded[key], found = run_app(
                desktop,
                key,
                work,
                scenarios,
                range(args.first, args.first + args.recordings),
                args.timeout,
                args.style,
                display,
                vary=not args.fixed_world,
                shots=work / "shots" if args.keep else None,
            )
            judgements += found
            if args.json:  # after each app, so that an interrupted run keeps its figures
                write_json(args.json, args, started, recorded, judgements)
    minutes = (time.monotonic() - started) / 60
    print(
        f"\nreal desktop ({args.wm}){' replayed over VNC' if args.vnc else ''}, "
        f"{args.recordings} "
        f"recordings per task (from #{args.first}), "
        f"commit {git_commit()}, "
        f"{minutes:.1f} min"
    )
    print(
        "ok = correct, fd = false divergence, WRONG = wrong action (a wrong record or none), "
        "flag = exit 6 (right record, outcome not as recorded), err = mm error\n"
    )
    print(matrix(args.apps, scenarios, judgements))
    print("\nmasked fraction of the task window (largest at any step), per recording:")
    for key, items in recorded.items():
        print(f"  {key:<9}" + " ".join(f"{r.masked:.0%}" for r in items))
    for label, counts in totals(judgements).items():
        print(f"{label}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print("\ntyped values read back as typed (replays that exited 0 and typed):")
    for key in args.apps:
        print(f"  {key:<9}{verified_summary(j for j in judgements if j.app == key)}")
    print("\nreplay's own time a step (replays that exited 0): median (min-max), max/min")
    for key in args.apps:
        print(f"  {key:<9}{step_summary(j.step_ms for j in judgements if j.app == key)}")
    if args.json:
        write_json(args.json, args, started, recorded, judgements)
    return 0


def write_json(
    path: Path,
    args: argparse.Namespace,
    started: float,
    recorded: dict[str, list[Recorded]],
    judgements: list[Judgement],
) -> None:
    """Every run with the desktop it ran on, for `benchmarks.desktop.matrix` to merge."""
    out = {
        "commit": git_commit(),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "desktop": desktop_name(args.wm, args.panel, args.vnc),
        "style": args.style,
        "fixed_world": args.fixed_world,
        "first": args.first,
        "recordings": args.recordings,
        "minutes": round((time.monotonic() - started) / 60, 1),
        "totals": totals(judgements),
        "masked": {k: [r.masked for r in v] for k, v in recorded.items()},
        "worlds": {k: [asdict(r.world) for r in v] for k, v in recorded.items()},
        "focused_when_recorded": {k: [r.focused for r in v] for k, v in recorded.items()},
        "runs": [{**asdict(j), "stderr": j.stderr[-1500:]} for j in judgements],
    }
    path.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
