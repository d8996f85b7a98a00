"""Recording overhead: the example agent under `mm record` vs the same agent alone, side by
side in one run, as (record wall - agent wall) / actions.

    python -m benchmarks.perf.record [--runs 5] [--think 0.02] [--json out.json]

The agent is examples/loan_batch_agent.py with a low think time, so its own time is mostly
actions and waiting for the app. It files one application (10 actions) and two (20
actions), alone and under `mm record --observe 0 --overwrite`, in alternating order, each
on a freshly started app; a run counts only if the app received the applications. The
difference between the 10- and 20-action overheads separates the per-action cost from
the fixed cost (mm's start-up, opening the display, saving).

The agent waits after each action for a layout the app publishes every 200 ms, so part
of a slower action disappears into that wait. The same 20 actions as a blind pyautogui
script (no waiting on the app) show the overhead without that slack, and one more
recording is made in-process with the recorder's parts timed: how long the agent is
blocked before each action.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.perf.common import (
    Figure,
    Report,
    Spread,
    mm_command,
    mm_env,
    quiet_stderr,
    run_benchmark,
    run_timed,
    say,
)
from benchmarks.perf.replay import NAME, Blind, blind_script, record_task
from benchmarks.perf.task import agent_command, fresh_start, problem
from examples.world import LoanApp
from mmcli.store.recordings import Store

TARGET_MS = 20.0
PER_APPLICATION = 10
BLIND_PAUSE = 0.01
BLIND_DIALOG = 0.1


@dataclass
class Contender:
    key: str
    label: str
    agent: list[str]
    applications: int
    recorded: bool
    walls: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def command(self) -> list[str]:
        if not self.recorded:
            return self.agent
        return mm_command("record", self.key, "--observe", "0", "--overwrite", "--", *self.agent)


def time_contenders(app: LoanApp, store: Path, contenders: list[Contender], runs: int) -> None:
    for round_no in range(runs):
        order = contenders if round_no % 2 == 0 else list(reversed(contenders))
        for c in order:
            fresh_start(app)
            result = run_timed(c.command(), env=mm_env(store))
            why = problem(app, c.applications)
            if result.returncode != 0:
                why = f"exit {result.returncode}: {result.stderr.strip()[-300:]}"
            if why:
                c.failures.append(why)
                say(f"round {round_no + 1}: {c.key}: FAILED, not counted: {why}")
                continue
            c.walls.append(result.wall)
            say(f"round {round_no + 1}: {c.key}: {result.wall:.3f} s")


def blind_command(app: LoanApp, store: Path, work: Path, think: float) -> list[str]:
    """The task's 20 recorded actions as a blind pyautogui script (see replay.py)."""
    record_task(app, store, think)
    fresh_start(app)
    blind = Blind("blind", "blind", BLIND_PAUSE, BLIND_DIALOG)
    script = work / "blind.py"
    script.write_text(blind_script(Store(store).load(NAME), app.center("Submit"), blind))
    return [sys.executable, str(script)]


# ---- where the recorder's time goes ---------------------------------------------------------


@dataclass
class Parts:
    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def wrap(self, key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[key].append(time.perf_counter() - t0)

        return wrapper

    def summary(self) -> dict[str, dict[str, float]]:
        return {
            key: {
                "calls": len(values),
                "total_ms": round(sum(values) * 1000, 1),
                "median_ms": round(statistics.median(values) * 1000, 2),
            }
            for key, values in self.seconds.items()
        }


@contextlib.contextmanager
def instrumented(parts: Parts) -> Iterator[None]:
    from mmcli.capture import integrate as integrate_module
    from mmcli.capture import record as record_module
    from mmcli.capture import recorder as recorder_module
    from mmcli.store.recordings import Store

    targets = [
        (recorder_module.Recorder, "capture", "capture (agent blocked)"),
        (recorder_module, "settle", "  settle (a still screen)"),
        (recorder_module, "approach", "  approach (pointer move)"),
        (recorder_module, "patch_of", "  target patch"),
        (recorder_module, "_png", "thumbnail PNG (worker thread)"),
        (recorder_module.Recorder, "capture_final", "final screen after exit"),
        (record_module, "run_agent", "agent process (spawn to exit)"),
        (integrate_module, "build_steps", "build steps (fingerprints)"),
        (Store, "save", "save (TOML + thumbnails, fsync)"),
    ]
    with contextlib.ExitStack() as stack:
        for owner, attr, key in targets:
            stack.enter_context(
                mock.patch.object(owner, attr, parts.wrap(key, getattr(owner, attr)))
            )
        yield


def breakdown(app: LoanApp, store_dir: Path, think: float) -> dict[str, Any]:
    from mmcli.backends.x11 import X11Backend
    from mmcli.capture.record import RecordOptions
    from mmcli.params import Values
    from mmcli.store.recordings import Store
    from mmcli.verbs.record import record_agent as record

    parts = Parts()
    fresh_start(app)
    backend = X11Backend(os.environ["DISPLAY"])
    try:
        with instrumented(parts), quiet_stderr():
            t0 = time.perf_counter()
            result = record(
                Store(store_dir),
                backend,
                "inprocess",
                agent_command(app, think),
                Values(),
                RecordOptions(observe=0),
                overwrite=True,
            )
            total = time.perf_counter() - t0
    finally:
        backend.close()
    return {
        "saved": result.saved,
        "steps": result.steps,
        "problem": problem(app),
        "record_ms": round(total * 1000, 1),
        "parts": parts.summary(),
    }


def run(args: argparse.Namespace, work: Path) -> Report:
    store = work / "store"
    app = LoanApp(work / "app")
    report = Report(
        f"recording overhead: loan batch agent (think {args.think:g}s) and a blind script, "
        f"alone vs under `mm record --observe 0`, Xvfb 1920x1080, {args.runs} runs each"
    )
    try:
        say("recording the task once to write the blind script...")
        blind = blind_command(app, store, work, args.think)
        agent10, agent20 = (agent_command(app, args.think, n) for n in (1, 2))
        contenders = [
            Contender("alone10", "agent alone, 10 actions", agent10, 1, False),
            Contender("rec10", "mm record agent, 10 actions", agent10, 1, True),
            Contender("alone20", "agent alone, 20 actions", agent20, 2, False),
            Contender("rec20", "mm record agent, 20 actions", agent20, 2, True),
            Contender("blind20", "blind script alone, 20 actions", blind, 2, False),
            Contender("recblind20", "mm record blind script, 20 actions", blind, 2, True),
        ]
        time_contenders(app, store, contenders, args.runs)
        summarize(report, {c.key: c for c in contenders})
        if not args.no_breakdown:
            say("timing the parts of one in-process recording...")
            report.details["breakdown"] = breakdown(app, work / "store-inprocess", args.think)
            capture = report.details["breakdown"]["parts"].get("capture (agent blocked)")
            if capture:
                report.add(
                    Figure(
                        "blocked_per_action_ms",
                        "agent blocked per action (in-process, median)",
                        capture["median_ms"],
                        "ms",
                        note="the recorder's capture before each action: pointer, settle, patch",
                    )
                )
    finally:
        app.stop()
    return report


def summarize(report: Report, by: dict[str, Contender]) -> None:
    for c in by.values():
        report.details[c.key] = {"walls": [round(w, 3) for w in c.walls], "failures": c.failures}
        if c.walls:
            s = Spread.of(c.walls)
            report.add(Figure(f"{c.key}_s", c.label, s.median, "s", spread=s))
    if not all(c.walls for c in by.values()):
        report.notes.append("some contender has no successful run: no overhead figures")
        return
    med = {k: statistics.median(c.walls) for k, c in by.items()}

    def per_round(rec: str, alone: str, actions: int) -> str:
        pairs = zip(by[rec].walls, by[alone].walls, strict=False)
        rounds = [(r - a) / actions * 1000 for r, a in pairs]
        return f"per round {min(rounds):.0f}-{max(rounds):.0f} ms"

    over10 = med["rec10"] - med["alone10"]
    over20 = med["rec20"] - med["alone20"]
    report.add(
        Figure(
            "overhead_per_action_ms",
            "agent: (record - alone) / actions, 20 actions",
            over20 / 20 * 1000,
            "ms",
            bound=TARGET_MS,
            note=per_round("rec20", "alone20", 20),
        )
    )
    report.add(
        Figure(
            "overhead10_per_action_ms",
            "agent: (record - alone) / actions, 10 actions",
            over10 / 10 * 1000,
            "ms",
            note=per_round("rec10", "alone10", 10),
        )
    )
    marginal = (over20 - over10) / PER_APPLICATION
    report.add(
        Figure(
            "marginal_per_action_ms",
            "agent: marginal cost per action (20 vs 10)",
            marginal * 1000,
            "ms",
        )
    )
    report.add(
        Figure(
            "fixed_s",
            "agent: fixed cost per recording",
            over10 - PER_APPLICATION * marginal,
            "s",
            note="mm start-up, display, final screen, build and save; "
            "the default --observe 1 adds 1 s more",
        )
    )
    blind_over = med["recblind20"] - med["blind20"]
    report.add(
        Figure(
            "blind_overhead_per_action_ms",
            "blind script: (record - alone) / actions",
            blind_over / 20 * 1000,
            "ms",
            bound=TARGET_MS,
            note=per_round("recblind20", "blind20", 20),
        )
    )


def print_details(report: Report) -> None:
    b = report.details.get("breakdown")
    if not b:
        return
    print(
        f"\none in-process recording of 20 actions (saved {b['saved']}, "
        f"{b['steps']} steps, problem {b['problem']}): {b['record_ms']} ms"
    )
    print(f"  {'part':<36} {'calls':>5} {'total ms':>9} {'median ms':>10}")
    for key, p in b["parts"].items():
        print(f"  {key:<36} {p['calls']:>5} {p['total_ms']:>9} {p['median_ms']:>10}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per contender")
    parser.add_argument("--think", type=float, default=0.02, help="the agent's pause per action")
    parser.add_argument("--no-breakdown", action="store_true", help="skip the in-process parts")
    return run_benchmark(parser, run, print_details)


if __name__ == "__main__":
    raise SystemExit(main())
