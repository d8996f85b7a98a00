"""mm at the speed of the app: the five figures of "replay at the speed of the app", side by
side in one run on one machine.

    python -m benchmarks.perf.speed [--runs 5] [--count 10000] [--json out.json]

1. `mm replay --no-agent` of the 20-action task vs a blind pyautogui script at a 10 ms
   pace (`PAUSE=0.01`, 0.1 s after Submit) that types a key each 2 ms (`KEY_PAUSE_MIN`:
   with no pause a spreadsheet drops keys, and replay never types faster), alternating,
   each on a freshly started app; the same script typing with no pause is timed beside.
2. Replay's walk per step (the report's seconds / steps) of a 10-step recording (one
   application) and of a 1,000-step one (the same application filed 100 times in a row:
   the recording of an agent that did so, built from the 10-step one).
3. `mm --help` and `mm ls` (empty store) vs `python -c pass`, interleaved.
4. Recording overhead per action: the batch agent (think 0.02 s, 20 actions) alone and
   under `mm record --observe 0`, alternating.
5. The first `mm ls --json` over `--count` copies of the recorded task (thumbnails
   hard-linked) with no listing index, as after copying a store in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from dataclasses import replace
from pathlib import Path

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
from benchmarks.perf.replay import Blind, blind_script, record_task
from benchmarks.perf.task import ACTIONS, agent_command, fresh_start, problem
from examples.world import LoanApp
from mmcli.model import Recording
from mmcli.pace import KEY_PAUSE_MIN
from mmcli.store.recordings import Store

NAME = "batch"
SHORT = "one"
LONG = "long"
COPIES = 100
"""The 1,000-step recording is the 10-step application this many times in a row."""
TARGETS = {"replay_over_blind": 1.5, "long_over_short": 1.2, "record_ms": 20.0, "ls_s": 5.0}


def median_of(values: list[float]) -> Spread:
    return Spread.of(values) if values else Spread(float("nan"), 0, 0, 0)


# ---- 1. replay vs a blind script -------------------------------------------------------------


def replay_vs_blind(app: LoanApp, store: Path, work: Path, runs: int) -> dict[str, list[float]]:
    recording = Store(store).load(NAME)
    fresh_start(app)
    contenders = {"replay": mm_command("replay", NAME, "--no-agent", "--json")}
    for key, interval in (("blind", KEY_PAUSE_MIN), ("blind_nokey", 0.0)):
        script = work / f"{key}.py"
        blind = Blind(key, "", 0.01, 0.1, interval)
        script.write_text(blind_script(recording, app.center("Submit"), blind))
        contenders[key] = [sys.executable, str(script)]
    walls: dict[str, list[float]] = {k: [] for k in contenders}
    for round_no in range(runs):
        order = list(contenders) if round_no % 2 == 0 else list(reversed(contenders))
        for key in order:
            fresh_start(app)
            result = run_timed(contenders[key], env=mm_env(store))
            why = problem(app) if result.returncode == 0 else f"exit {result.returncode}"
            if why:
                say(f"round {round_no + 1}: {key}: FAILED, not counted: {why}")
                continue
            walls[key].append(result.wall)
            say(f"round {round_no + 1}: {key}: {result.wall:.3f} s")
    return walls


# ---- 2. per-step replay time vs the recording's length ------------------------------------


def build_long(store: Path) -> int:
    """The 10-step recording repeated `COPIES` times, each copy following the last."""
    s = Store(store)
    one = s.load(SHORT)
    trunk = one.trunk()
    steps = []
    previous: int | None = None
    for copy in range(COPIES):
        for i, step in enumerate(trunk):
            new_id = copy * len(trunk) + i
            steps.append(replace(step, id=new_id, parent=previous))
            previous = new_id
    thumbs = {p.name: p.read_bytes() for p in s.thumbs.folder(SHORT).iterdir()}
    long = Recording(
        LONG,
        steps,
        one.created,
        command=list(one.command),
        params=list(one.params),
        ignore=list(one.ignore),
        volatile=list(one.volatile),
        area=one.area,
    )
    s.save(long, thumbs)
    return len(steps)


def walk_per_step(app: LoanApp, store: Path, name: str, steps: int, applications: int) -> float:
    fresh_start(app)
    result = run_timed(
        mm_command("replay", name, "--no-agent", "--json", "--timeout", "20"),
        env=mm_env(store),
        timeout=3600,
    )
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    filed = len(app.records())
    if result.returncode != 0 or report.get("steps_replayed") != steps or filed != applications:
        raise SystemExit(
            f"replay of {name} failed (exit {result.returncode}, filed {filed}): "
            f"{result.stderr[-1500:]}"
        )
    per_step = float(report["seconds"]) / steps
    say(f"replay of {name}: {steps} steps, {per_step * 1000:.1f} ms per step")
    return per_step


# ---- 3. start-up -------------------------------------------------------------------------------


def startup(store: Path, runs: int) -> dict[str, list[float]]:
    empty = store.parent / "empty-store"
    empty.mkdir(exist_ok=True)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "mm --help": mm_command("--help"),
        "mm ls (empty store)": mm_command("ls"),
    }
    walls: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(runs):
        for key, command in commands.items():
            result = run_timed(command, env=mm_env(empty))
            if result.returncode != 0:
                raise SystemExit(f"{key} failed: {result.stderr[-500:]}")
            walls[key].append(result.wall)
    return walls


# ---- 4. recording overhead -------------------------------------------------------------------


def recording_overhead(app: LoanApp, store: Path, runs: int) -> dict[str, list[float]]:
    agent = agent_command(app, 0.02)
    contenders = {
        "alone": agent,
        "recorded": mm_command("record", "overhead", "--observe", "0", "--overwrite", "--", *agent),
    }
    walls: dict[str, list[float]] = {k: [] for k in contenders}
    for round_no in range(runs):
        order = list(contenders) if round_no % 2 == 0 else list(reversed(contenders))
        for key in order:
            fresh_start(app)
            result = run_timed(contenders[key], env=mm_env(store))
            why = problem(app) if result.returncode == 0 else f"exit {result.returncode}"
            if why:
                say(f"round {round_no + 1}: agent {key}: FAILED, not counted: {why}")
                continue
            walls[key].append(result.wall)
            say(f"round {round_no + 1}: agent {key}: {result.wall:.3f} s")
    return walls


# ---- 5. first listing of a copied-in store --------------------------------------------------


def first_listing(store: Path, work: Path, count: int, runs: int) -> list[float]:
    big = work / "big-store"
    text = (store / f"{NAME}.toml").read_text()
    thumbs = sorted((store / NAME).iterdir())
    say(f"filling a store with {count} copies of the task...")
    big.mkdir()
    for i in range(count):
        name = f"task-{i:05d}"
        (big / f"{name}.toml").write_text(text.replace(f'name = "{NAME}"', f'name = "{name}"', 1))
        (big / name).mkdir()
        for thumb in thumbs:
            os.link(thumb, big / name / thumb.name)
    walls = []
    for i in range(runs):
        Store(big).index_path().unlink(missing_ok=True)
        result = run_timed(mm_command("ls", "--json"), env=mm_env(big), timeout=3600)
        rows = json.loads(result.stdout) if result.returncode == 0 else []
        broken = [r for r in rows if r.get("error") or r.get("steps") != ACTIONS]
        if len(rows) != count or broken:
            raise SystemExit(f"mm ls listed {len(rows)}, {len(broken)} wrong: {result.stderr}")
        walls.append(result.wall)
        say(f"first mm ls --json of {count}, {i + 1}/{runs}: {result.wall:.2f} s")
    shutil.rmtree(big)
    return walls


# ---- the report ------------------------------------------------------------------------------


def run(args: argparse.Namespace, work: Path) -> Report:
    store = work / "store"
    app = LoanApp(work / "app")
    report = Report(f"mm at the speed of the app, Xvfb 1920x1080, {args.runs} runs each")
    try:
        say("recording the 20-action task and the 10-action one...")
        record_task(app, store, args.think)
        fresh_start(app)
        one = run_timed(
            mm_command(
                "record", SHORT, "--observe", "0.5", "--", *agent_command(app, args.think, 1)
            ),
            env=mm_env(store),
        )
        if one.returncode != 0 or problem(app, 1):
            raise SystemExit(f"recording {SHORT} failed: {one.stderr[-1500:]}")
        long_steps = build_long(store)

        walls = replay_vs_blind(app, store, work, args.runs)
        replay, blind = median_of(walls["replay"]), median_of(walls["blind"])
        nokey = median_of(walls["blind_nokey"])
        report.add(
            Figure(
                "blind_s",
                "blind pyautogui script, 10 ms pace, keys 2 ms apart",
                blind.median,
                "s",
                spread=blind,
            )
        )
        report.add(
            Figure(
                "blind_nokey_s",
                "the same, keys with no pause (drops keys in Calc)",
                nokey.median,
                "s",
                spread=nokey,
            )
        )
        report.add(Figure("replay_s", "mm replay --no-agent", replay.median, "s", spread=replay))
        report.add(
            Figure(
                "replay_over_blind",
                "1. replay / blind script (20 actions)",
                replay.median / blind.median,
                "x",
                bound=TARGETS["replay_over_blind"],
                note="per round "
                + ", ".join(
                    f"{r / b:.2f}" for r, b in zip(walls["replay"], walls["blind"], strict=False)
                ),
            )
        )

        short = [walk_per_step(app, store, SHORT, 10, 1) for _ in range(args.runs)]
        long = [walk_per_step(app, store, LONG, long_steps, COPIES) for _ in range(args.long_runs)]
        s_short, s_long = median_of(short), median_of(long)
        report.add(
            Figure(
                "short_step_ms",
                "replay walk per step, 10 steps",
                s_short.median * 1000,
                "ms",
                spread=Spread(
                    s_short.median * 1000, s_short.low * 1000, s_short.high * 1000, s_short.runs
                ),
            )
        )
        report.add(
            Figure(
                "long_step_ms",
                f"replay walk per step, {long_steps} steps",
                s_long.median * 1000,
                "ms",
                spread=Spread(
                    s_long.median * 1000, s_long.low * 1000, s_long.high * 1000, s_long.runs
                ),
            )
        )
        report.add(
            Figure(
                "long_over_short",
                f"2. per step, {long_steps} / 10 steps",
                s_long.median / s_short.median,
                "x",
                bound=TARGETS["long_over_short"],
            )
        )

        starts = startup(store, args.start_runs)
        base = statistics.median(starts["python -c pass"])
        for key, values in starts.items():
            spread = median_of(values)
            report.add(
                Figure(
                    f"start_{key}",
                    f"3. {key}" if key != "python -c pass" else key,
                    spread.median,
                    "s",
                    spread=spread,
                    note=""
                    if key == "python -c pass"
                    else f"{spread.median - base:.3f} s over python -c pass",
                )
            )

        overhead = recording_overhead(app, store, args.runs)
        alone, recorded = median_of(overhead["alone"]), median_of(overhead["recorded"])
        report.add(
            Figure("agent_alone_s", "agent alone, 20 actions", alone.median, "s", spread=alone)
        )
        report.add(
            Figure(
                "agent_recorded_s", "agent under mm record", recorded.median, "s", spread=recorded
            )
        )
        report.add(
            Figure(
                "record_ms",
                "4. recording overhead per action",
                (recorded.median - alone.median) / ACTIONS * 1000,
                "ms",
                bound=TARGETS["record_ms"],
            )
        )
    finally:
        app.stop()
    if args.count:
        listing = median_of(first_listing(store, work, args.count, args.ls_runs))
        report.add(
            Figure(
                "ls_s",
                f"5. first mm ls --json, {args.count} recordings",
                listing.median,
                "s",
                bound=TARGETS["ls_s"],
                spread=listing,
            )
        )
    report.notes.append(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of the short contenders")
    parser.add_argument("--long-runs", type=int, default=1, help="replays of the 1,000 steps")
    parser.add_argument("--start-runs", type=int, default=15, help="runs of each start-up")
    parser.add_argument("--ls-runs", type=int, default=2, help="first listings (index removed)")
    parser.add_argument("--count", type=int, default=10_000, help="recordings to list (0: skip)")
    parser.add_argument("--think", type=float, default=0.1, help="the recorded agent's pause")
    return run_benchmark(parser, run)


if __name__ == "__main__":
    raise SystemExit(main())
