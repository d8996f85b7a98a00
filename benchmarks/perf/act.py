"""What one action costs an agent under `mm record`, per channel: `mm act` and the
recording `xdotool`, against the action alone and against starting Python at all.

    python -m benchmarks.perf.act [--runs 30] [--json out.json]

A recorder (the one `mm record` runs) listens on a fresh Xvfb. Measured, interleaved:
- the action alone: the same `move` sent to the recorder from this process (the screen
  captured, the pointer moved), no process started;
- `mm act move X Y` run the way an agent runs it (the recorder's environment, so the
  pyautogui hook's sitecustomize loads too);
- `xdotool mousemove X Y` through the recording xdotool, and the real xdotool alone;
- `python -c pass`, and the full CLI's `mm act` (typer and rich loaded) for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import sys
import time
from pathlib import Path

from benchmarks.perf.common import Figure, Report, Spread, run_benchmark, run_timed, say

TARGET_MS = 50.0


def _send_move(path: str, x: int) -> float:
    started = time.perf_counter()
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        f = s.makefile("rwb")
        message = {"op": "perform", "action": {"kind": "move", "x": x, "y": 300}}
        f.write(json.dumps(message).encode() + b"\n")
        f.flush()
        assert json.loads(f.readline())["ok"]
    return time.perf_counter() - started


def run(args: argparse.Namespace, work: Path) -> Report:
    from mmcli.backends.x11 import X11Backend
    from mmcli.capture.recorder import Recorder

    backend = X11Backend(os.environ["DISPLAY"])
    samples: dict[str, list[float]] = {
        k: [] for k in ("alone", "act", "cli", "shim", "xdotool", "python")
    }
    real = shutil.which("xdotool")
    with Recorder(backend, learn=False) as recorder:
        env = {**os.environ, **recorder.env()}
        for i in range(args.runs):
            x = 200 + (i % 2) * 100
            samples["alone"].append(_send_move(recorder.channel.socket_path, x))
            act = [sys.executable, "-m", "mmcli", "act", "move", str(x + 1), "300"]
            samples["act"].append(run_timed(act, env).wall)
            cli = [sys.executable, "-c", "from mmcli.cli.app import main; main()"]
            samples["cli"].append(run_timed([*cli, "act", "move", str(x), "301"], env).wall)
            samples["shim"].append(run_timed(["xdotool", "mousemove", str(x), "302"], env).wall)
            if real:
                samples["xdotool"].append(run_timed([real, "mousemove", str(x), "303"]).wall)
            samples["python"].append(run_timed([sys.executable, "-c", "pass"]).wall)
            if i % 10 == 9:
                say(f"{i + 1} rounds")
        steps = len(recorder.captures)
    backend.close()
    ms = {k: Spread.of([v * 1000 for v in vs]) for k, vs in samples.items() if vs}
    report = Report(f"one action under mm record, {args.runs} interleaved rounds ({steps} steps)")
    labels = {
        "python": "python -c pass",
        "alone": "the action alone (capture + move, no process)",
        "act": "mm act move, under the recorder",
        "cli": "mm act move through the full CLI (before)",
        "xdotool": "real xdotool mousemove",
        "shim": "recording xdotool mousemove",
    }
    for key, label in labels.items():
        if key in ms:
            report.add(Figure(f"{key}_ms", label, ms[key].median, "ms", spread=ms[key]))
    act_over = statistics.median(
        a - b for a, b in zip(samples["act"], samples["alone"], strict=True)
    )
    report.add(
        Figure("act_overhead_ms", "mm act on top of the action", act_over * 1000, "ms", TARGET_MS)
    )
    if samples["xdotool"]:
        shim_over = statistics.median(
            s - a - x
            for s, a, x in zip(samples["shim"], samples["alone"], samples["xdotool"], strict=True)
        )
        report.add(
            Figure(
                "shim_overhead_ms",
                "recording xdotool on top of action + real xdotool",
                shim_over * 1000,
                "ms",
                TARGET_MS,
            )
        )
    best = {k: min(vs) * 1000 for k, vs in samples.items() if vs}
    report.add(
        Figure("act_overhead_best_ms", "mm act on top of the action, best of each", best["act"]
               - best["alone"], "ms", TARGET_MS,
               note=f"of which python start-up: {best['python']:.1f} ms (best)")
    )  # fmt: skip
    if samples["xdotool"]:
        report.add(
            Figure("shim_overhead_best_ms", "recording xdotool on top, best of each",
                   best["shim"] - best["alone"] - best["xdotool"], "ms", TARGET_MS)
        )  # fmt: skip
    report.notes.append(
        "On a shared, loaded machine the medians carry the load; the best of each series is "
        "the cost itself."
    )
    report.details = {k: [round(v * 1000, 2) for v in vs] for k, vs in samples.items()}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="interleaved rounds")
    return run_benchmark(parser, run)


if __name__ == "__main__":
    raise SystemExit(main())
