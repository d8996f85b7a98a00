"""Per-step check cost: grab + fingerprint + compare at 1920x1080 vs a raw mss grab of the
same screen, interleaved, with the validation benchmark's timing loop.

    python -m benchmarks.perf.check [--rounds 60] [--repeats 3] [--json out.json]

Records the example agent on the example app once (in-process), then times the check of
the recording's first step against the live screen. Each repeat is `--rounds`
interleaved pairs; the figure is the median of the repeats' medians, with their range.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchmarks.perf.common import Figure, Report, Spread, quiet_stderr, run_benchmark, say
from benchmarks.validation.run import timings
from examples.world import LoanApp, agent_command
from mmcli.capture.record import RecordOptions
from mmcli.params import Values
from mmcli.store.recordings import Store
from mmcli.verbs.record import record_agent as record

TARGET_RATIO = 3.0


def run(args: argparse.Namespace, work: Path) -> Report:
    from mmcli.backends.x11 import X11Backend

    backend = X11Backend(os.environ["DISPLAY"])
    store = Store(work / "store")
    app = LoanApp(work / "app")
    raws: list[float] = []
    checks: list[float] = []
    try:
        app.start()
        say("recording the example agent...")
        with quiet_stderr():
            result = record(
                store, backend, "plain", agent_command(app), Values(), RecordOptions(observe=0.5)
            )
        if not result.saved:
            raise SystemExit(f"recording the example agent failed: {result.reason}")
        app.start()
        recording = store.load("plain")
        for repeat in range(args.repeats):
            raw_ms, check_ms = timings(backend, store, recording, rounds=args.rounds)
            raws.append(raw_ms)
            checks.append(check_ms)
            say(f"repeat {repeat + 1}: raw grab {raw_ms:.2f} ms, check {check_ms:.2f} ms")
    finally:
        app.stop()
        backend.close()
    report = Report(
        f"per-step check at {backend.size()[0]}x{backend.size()[1]}, "
        f"{args.repeats} x {args.rounds} interleaved rounds"
    )
    raw, check = Spread.of(raws), Spread.of(checks)
    ratios = Spread.of([c / r for c, r in zip(checks, raws, strict=True)])
    report.add(Figure("raw_grab_ms", "raw mss grab, median", raw.median, "ms", spread=raw))
    report.add(
        Figure(
            "check_ms",
            "mm check (grab + fingerprint + compare), median",
            check.median,
            "ms",
            spread=check,
        )
    )
    report.add(
        Figure("check_over_grab", "check / raw grab", ratios.median, "x", TARGET_RATIO, ratios)
    )
    report.details = {"raw_ms": raws, "check_ms": checks}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="interleaved pairs per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of --rounds")
    return run_benchmark(parser, run)


if __name__ == "__main__":
    raise SystemExit(main())
