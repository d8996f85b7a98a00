"""Replay speed: `mm replay` of a 20-action task vs a blind pyautogui script doing the same
20 actions vs the example agent, each timed as a subprocess on a freshly started app.

    python -m benchmarks.perf.replay [--runs 5] [--json out.json] [--profile]

The task is two loan applications filed in a row (benchmarks/perf/task.py). It is
recorded once with `mm record`; the blind scripts are the recorded actions written out as
plain pyautogui calls at fixed coordinates. Every timed run starts the app afresh and
counts only if the app received exactly the two applications and the last confirmation
was closed. Contenders alternate within each round so that they share the machine's noise.
The fast blind script types a key each 2 ms, the fastest pace replay ever types.

Beside the measured ratio it prints the floor of replay's walk: the waits replay keeps
for safety (`kept_waits`), summed over the recorded steps with nothing else in them, and
what that floor plus replay's measured start-up, load and exit would be against the
blind script: no change to the walk's own work can bring replay under it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.perf.common import (
    Figure,
    Report,
    Spread,
    mm_command,
    mm_env,
    run_benchmark,
    run_timed,
    say,
)
from benchmarks.perf.task import ACTIONS, agent_command, fresh_start, problem
from examples.world import LoanApp
from mmcli.model import ActionKind, Recording
from mmcli.pace import KEY_PAUSE_MIN
from mmcli.replay import look, outcome
from mmcli.store.recordings import Store

NAME = "batch"
TARGET_RATIO = 1.5


@dataclass(frozen=True)
class Blind:
    """A blind pyautogui script: `pause` is pyautogui.PAUSE (after every call), `dialog`
    the extra wait after Submit for the confirmation dialog to open, `interval` the pause
    between two typed keys (0: none, as `pyautogui.write` types by default; replay never
    types faster than a key each `KEY_PAUSE_MIN`, the pace a spreadsheet needs to keep
    every key)."""

    key: str
    label: str
    pause: float
    dialog: float
    interval: float = 0.0


def kept_waits(recording: Recording) -> float:
    """The least time replay's walk of `recording` can take with every wait it keeps and
    nothing else (no grab, no check, no app): before the pointer moves to a new target,
    the screen still for `look.POLL` since the last action (the dialog race); after it
    moved, or after the last action when it did not, still for `look.CHECK_QUIET` before
    the check; the keys at the step's pace; after the last action, the outcome still for
    `outcome.QUIET`."""
    seconds = outcome.QUIET
    pointer: tuple[int, int] | None = None
    for step in recording.trunk():
        action = step.action
        point = action.point
        if point is not None and point != pointer:
            seconds += look.POLL
            pointer = point
        seconds += look.CHECK_QUIET
        if action.kind is ActionKind.TYPE and action.text:
            seconds += (len(action.text) - 1) * action.typing_pause()
    return seconds


def blind_script(recording: Recording, submit: tuple[int, int], blind: Blind) -> str:
    lines = [
        "import time",
        "",
        "import pyautogui",
        "",
        f"pyautogui.PAUSE = {blind.pause!r}",
    ]
    for step in recording.trunk():
        action = step.action.render({})
        if action.kind is ActionKind.CLICK:
            lines.append(f"pyautogui.click({action.x}, {action.y})")
            if (action.x, action.y) == submit and blind.dialog:
                lines.append(f"time.sleep({blind.dialog!r})")
        elif action.kind is ActionKind.TYPE:
            interval = f", interval={blind.interval!r}" if blind.interval else ""
            lines.append(f"pyautogui.write({action.text!r}{interval})")
        else:
            raise ValueError(f"the task has an unexpected action: {action.describe()}")
    return "\n".join(lines) + "\n"


@dataclass
class Contender:
    key: str
    label: str
    command: list[str]
    env: dict[str, str] | None = None
    walls: list[float] = field(default_factory=list)
    inner: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def record_task(app: LoanApp, store: Path, think: float) -> None:
    fresh_start(app)
    result = run_timed(
        mm_command("record", NAME, "--observe", "0.5", "--", *agent_command(app, think)),
        env=mm_env(store),
    )
    why = problem(app)
    if result.returncode != 0 or why:
        raise SystemExit(f"recording the task failed ({why}):\n{result.stderr[-2000:]}")


def time_contenders(app: LoanApp, contenders: list[Contender], runs: int) -> None:
    for round_no in range(runs):
        shift = round_no % len(contenders)
        for c in contenders[shift:] + contenders[:shift]:
            fresh_start(app)
            result = run_timed(c.command, env=c.env)
            why = problem(app)
            if result.returncode != 0:
                why = f"exit {result.returncode}: {result.stderr.strip()[-300:]}"
            if why:
                c.failures.append(why)
                say(f"round {round_no + 1}: {c.key}: FAILED, not counted: {why}")
                continue
            c.walls.append(result.wall)
            if c.key == "replay":
                c.inner.append(float(json.loads(result.stdout)["seconds"]))
            say(f"round {round_no + 1}: {c.key}: {result.wall:.3f} s")


# ---- where replay's time goes ---------------------------------------------------------------


@dataclass
class StepTimes:
    waiting: list[float] = field(default_factory=list)
    acting: list[float] = field(default_factory=list)
    grabs: list[int] = field(default_factory=list)
    totals: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@contextlib.contextmanager
def _timing(times: StepTimes, key: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        times.totals[key] += time.perf_counter() - t0
        times.counts[key] += 1


def _timed(times: StepTimes, key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _timing(times, key):
            return fn(*args, **kwargs)

    return wrapper


class _Clock:
    """Stands in for the `time` module inside mmcli.replay.look to add up its sleeps."""

    def __init__(self, times: StepTimes) -> None:
        self.times = times
        self.monotonic = time.monotonic

    def sleep(self, seconds: float) -> None:
        with _timing(self.times, "sleep (poll and hover waits)"):
            time.sleep(seconds)


def breakdown(app: LoanApp, store_dir: Path) -> dict[str, Any]:
    """One in-process replay with its parts timed: per step, waiting for the screen
    (grab + compare + poll sleeps) and acting; in total, grabs, compares and sleeps."""
    from mmcli.backends.x11 import X11Backend
    from mmcli.params import Values
    from mmcli.replay import look as look_module
    from mmcli.replay.replayer import Replayer
    from mmcli.replay.report import ReplayOptions

    times = StepTimes()
    fresh_start(app)
    t0 = time.perf_counter()
    backend = X11Backend(os.environ["DISPLAY"])
    t1 = time.perf_counter()
    store = Store(store_dir)
    recording = store.load(NAME)
    t2 = time.perf_counter()
    replayer = Replayer(store, backend, recording, Values(), ReplayOptions())
    grab, perform = backend.grab, backend.perform
    grabs = 0

    def counted_grab() -> Any:
        nonlocal grabs
        grabs += 1
        with _timing(times, "grab (mss + Frame)"):
            return grab()

    backend.grab = counted_grab  # type: ignore[method-assign]
    backend.move = _timed(times, "pointer move", backend.move)  # type: ignore[method-assign]
    replayer.judge.first_match = _timed(  # type: ignore[method-assign]
        times, "compare (fingerprint + matcher)", replayer.judge.first_match
    )
    wait = replayer.look.wait_for_match

    def timed_wait(children: Any, depth: int) -> Any:
        nonlocal grabs
        grabs = 0
        started = time.perf_counter()
        try:
            return wait(children, depth)
        finally:
            times.waiting.append(time.perf_counter() - started)
            times.grabs.append(grabs)

    def timed_perform(action: Any) -> None:
        started = time.perf_counter()
        perform(action)
        times.acting.append(time.perf_counter() - started)

    replayer.look.wait_for_match = timed_wait  # type: ignore[method-assign]
    backend.perform = timed_perform  # type: ignore[method-assign]
    saved_time = look_module.time
    look_module.time = _Clock(times)  # type: ignore[assignment]
    try:
        t3 = time.perf_counter()
        report = replayer.run()
        t4 = time.perf_counter()
    finally:
        look_module.time = saved_time
        backend.close()
    why = problem(app)
    steps = [
        {
            "step": i + 1,
            "action": s.action.describe(),
            "wait_ms": round(w * 1000, 1),
            "act_ms": round(a * 1000, 1),
            "grabs": g,
        }
        for i, (s, w, a, g) in enumerate(
            zip(recording.trunk(), times.waiting, times.acting, times.grabs, strict=False)
        )
    ]
    return {
        "outcome": str(report.outcome),
        "verified": why is None,
        "problem": why,
        "backend_open_ms": round((t1 - t0) * 1000, 1),
        "store_load_ms": round((t2 - t1) * 1000, 1),
        "walk_ms": round((t4 - t3) * 1000, 1),
        "wait_ms_total": round(sum(times.waiting) * 1000, 1),
        "act_ms_total": round(sum(times.acting) * 1000, 1),
        "wait_ms_median": round(statistics.median(times.waiting) * 1000, 1),
        "grabs_per_step_median": statistics.median(times.grabs) if times.grabs else 0,
        "parts_ms": {k: round(v * 1000, 1) for k, v in times.totals.items()},
        "parts_calls": dict(times.counts),
        "steps": steps,
    }


def startup_costs(store: Path) -> dict[str, float]:
    """Wall seconds of what every `mm replay` pays before its first step, as subprocesses."""
    py = sys.executable
    probes = {
        "python -c pass": [py, "-c", "pass"],
        "import mmcli.cli.app (typer, rich)": [py, "-c", "import mmcli.cli.app"],
        "import replayer + X11 backend (numpy, PIL, pyautogui, mss)": [
            py,
            "-c",
            "import mmcli.replay.replayer, mmcli.backends.x11",
        ],
        "mm --help": mm_command("--help"),
        "mm ls (one recording)": mm_command("ls"),
    }
    out = {}
    for label, command in probes.items():
        walls = [run_timed(command, env=mm_env(store)).wall for _ in range(3)]
        out[label] = round(statistics.median(walls), 3)
    return out


def profile_replay(app: LoanApp, store: Path, work: Path, top: int = 18) -> dict[str, Any]:
    """cProfile of one `mm replay` subprocess; the top functions by own and cumulative time."""
    fresh_start(app)
    out = work / "replay.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "mmcli"]
    result = run_timed([*command, "replay", NAME, "--no-agent"], env=mm_env(store))
    why = problem(app) if result.returncode == 0 else f"exit {result.returncode}"
    return {"wall": round(result.wall, 3), "problem": why, **profile_tables(out, top)}


def profile_tables(path: Path, top: int) -> dict[str, Any]:
    stats = pstats.Stats(str(path))
    tables: dict[str, Any] = {}
    for key, order, restrict in (
        ("tottime", "tottime", ()),
        ("cumulative", "cumulative", ()),
        ("mmcli_cumulative", "cumulative", ("/mmcli/",)),
    ):
        buf = io.StringIO()
        stats.stream = buf  # type: ignore[attr-defined]
        stats.sort_stats(order).print_stats(*restrict, top)
        tables[key] = _trim_pstats(buf.getvalue())
    return tables


def _trim_pstats(text: str) -> list[str]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
    return [line.rstrip() for line in lines[start:] if line.strip()]


def run(args: argparse.Namespace, work: Path) -> Report:
    store = work / "store"
    app = LoanApp(work / "app")
    report = Report(
        f"replay of a {ACTIONS}-action task (2 loan applications) on the example app, "
        f"Xvfb 1920x1080, {args.runs} runs each"
    )
    try:
        say(f"recording the task (agent think {args.think}s)...")
        record_task(app, store, args.think)
        recording = Store(store).load(NAME)
        assert len(recording.trunk()) == ACTIONS, f"recorded {len(recording.trunk())} steps"
        fresh_start(app)
        submit = app.center("Submit")
        blinds = [
            Blind(
                "blind_min",
                f"blind pyautogui, PAUSE={args.blind_pause:g}, keys {KEY_PAUSE_MIN * 1000:g} ms "
                f"apart, {args.blind_dialog:g}s after Submit",
                args.blind_pause,
                args.blind_dialog,
                KEY_PAUSE_MIN,
            ),
            Blind(
                "blind_default",
                f"blind pyautogui, PAUSE=0.1 (default), {args.blind_dialog:g}s after Submit",
                0.1,
                args.blind_dialog,
            ),
        ]
        contenders = []
        for blind in blinds:
            script = work / f"{blind.key}.py"
            script.write_text(blind_script(recording, submit, blind))
            contenders.append(Contender(blind.key, blind.label, [sys.executable, str(script)]))
        contenders.append(
            Contender(
                "replay",
                "mm replay --no-agent",
                mm_command("replay", NAME, "--no-agent", "--json"),
                mm_env(store),
            )
        )
        if not args.no_agent:
            contenders.append(
                Contender(
                    "agent",
                    f"example agent (think {args.think:g}s)",
                    agent_command(app, args.think),
                )
            )
        time_contenders(app, contenders, args.runs)
        by_key = {c.key: c for c in contenders}
        for c in contenders:
            if c.walls:
                spread = Spread.of(c.walls)
                report.add(Figure(f"{c.key}_s", c.label, spread.median, "s", spread=spread))
            report.details[c.key] = {
                "walls": [round(w, 3) for w in c.walls],
                "failures": c.failures,
            }
        replay = by_key["replay"]
        outside: Spread | None = None
        if replay.inner:
            inner = Spread.of(replay.inner)
            outside = Spread.of([w - i for w, i in zip(replay.walls, replay.inner, strict=True)])
            report.add(
                Figure(
                    "replay_walk_s",
                    "  of which the walk (report.seconds)",
                    inner.median,
                    "s",
                    spread=inner,
                )
            )
            report.add(
                Figure(
                    "replay_outside_s",
                    "  of which startup + load + exit",
                    outside.median,
                    "s",
                    spread=outside,
                )
            )
        for blind in blinds:
            base = by_key[blind.key]
            if base.walls and replay.walls:
                ratios = [r / b for r, b in zip(replay.walls, base.walls, strict=False)]
                ratio = statistics.median(replay.walls) / statistics.median(base.walls)
                bound = TARGET_RATIO if blind.key == "blind_min" else None
                report.add(
                    Figure(
                        f"replay_over_{blind.key}",
                        f"replay / {blind.key}",
                        ratio,
                        "x",
                        bound=bound,
                        note=f"per round {min(ratios):.2f}x-{max(ratios):.2f}x",
                    )
                )
        floor = kept_waits(recording)
        report.add(
            Figure(
                "kept_waits_s",
                "replay's kept waits alone (the walk's floor)",
                floor,
                "s",
                note="POLL before each move, CHECK_QUIET each step, keys, outcome QUIET",
            )
        )
        blind_min = by_key["blind_min"]
        if blind_min.walls and outside is not None:
            report.add(
                Figure(
                    "floor_over_blind_min",
                    "(kept waits + startup, load, exit) / blind_min",
                    (floor + outside.median) / statistics.median(blind_min.walls),
                    "x",
                    note="what replay would take if its walk were its waits alone",
                )
            )
        if "agent" in by_key and by_key["agent"].walls and replay.walls:
            ratio = statistics.median(by_key["agent"].walls) / statistics.median(replay.walls)
            report.add(Figure("agent_over_replay", "agent / replay", ratio, "x"))
        if replay.walls:
            per_step = (statistics.median(replay.inner) if replay.inner else 0) / ACTIONS
            report.add(Figure("replay_step_ms", "replay walk per step", per_step * 1000, "ms"))
        if not args.no_breakdown:
            say("timing the parts of one in-process replay...")
            report.details["breakdown"] = breakdown(app, store)
            report.details["startup"] = startup_costs(store)
        if args.profile:
            say("profiling one `mm replay`...")
            report.details["profile"] = profile_replay(app, store, work)
    finally:
        app.stop()
    return report


def print_details(report: Report) -> None:
    b = report.details.get("breakdown")
    if b:
        print(
            f"\none in-process replay ({b['outcome']}, verified {b['verified']}): "
            f"backend open {b['backend_open_ms']} ms, store load {b['store_load_ms']} ms, "
            f"walk {b['walk_ms']} ms = waiting for screens {b['wait_ms_total']} ms "
            f"+ acting {b['act_ms_total']} ms (+ bookkeeping)"
        )
        print(
            f"waiting per step: median {b['wait_ms_median']} ms, "
            f"median {b['grabs_per_step_median']} grabs per step"
        )
        print("inside the walk:")
        for key, ms in sorted(b["parts_ms"].items(), key=lambda kv: -kv[1]):
            print(f"  {key:<34} {ms:>8.1f} ms  in {b['parts_calls'][key]} calls")
        print(f"  {'step':<5} {'action':<32} {'wait ms':>8} {'act ms':>7} {'grabs':>5}")
        for s in b["steps"]:
            print(
                f"  {s['step']:<5} {s['action'][:32]:<32} {s['wait_ms']:>8} "
                f"{s['act_ms']:>7} {s['grabs']:>5}"
            )
    startup = report.details.get("startup")
    if startup:
        print("startup costs (subprocess wall, median of 3):")
        for label, seconds in startup.items():
            print(f"  {label:<58} {seconds * 1000:>7.0f} ms")
    profile = report.details.get("profile")
    if profile:
        print(
            f"\ncProfile of one `mm replay` ({profile['wall']} s under the profiler), "
            "top by own time:"
        )
        for line in profile["tottime"]:
            print(f"  {line}")
        print("mm's own functions by cumulative time:")
        for line in profile["mmcli_cumulative"]:
            print(f"  {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per contender")
    parser.add_argument("--think", type=float, default=0.3, help="the agent's pause per action")
    parser.add_argument("--blind-pause", type=float, default=0.01, help="PAUSE of the fast script")
    parser.add_argument(
        "--blind-dialog", type=float, default=0.1, help="blind wait after Submit (s)"
    )
    parser.add_argument("--no-agent", action="store_true", help="do not time the agent")
    parser.add_argument("--no-breakdown", action="store_true", help="skip the in-process parts")
    parser.add_argument("--profile", action="store_true", help="cProfile one `mm replay`")
    return run_benchmark(parser, run, print_details)


if __name__ == "__main__":
    raise SystemExit(main())
