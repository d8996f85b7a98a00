"""The spread of one learned branch replayed many times: record the example agent, heal a
popup once, then replay the healed branch `--runs` times from memory (`--no-agent`) on a
freshly started app with the popup, each as a subprocess, and print the times and every
"waiting for the screen" line replay printed.

    python -m benchmarks.perf.spread [--runs 10]

A replay that waits for a screen it never gets (a learned branch whose recorded screens
the app does not show again) shows here as a long run with a waiting line; a steady
branch replays in a narrow band.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from examples.world import WANTED, LoanApp, agent_command
from mmcli.desktop.display import VirtualDisplay


def mm(store: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MM_HOME": str(store)},
    )
    return result, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, VirtualDisplay() as display:
        os.environ["DISPLAY"] = display.display
        store, app = Path(tmp) / "store", LoanApp(Path(tmp) / "app")
        try:
            app.start()
            made, _ = mm(store, "record", "loan", "--observe", "0.5", "--", *agent_command(app))
            if made.returncode != 0:
                sys.exit(f"recording failed: {made.stderr}")
            app.start("--popup-at-start")
            healed, seconds = mm(store, "replay", "loan", "--timeout", "2")
            print(f"heal: exit {healed.returncode}, {seconds:.1f} s")
            times = []
            for i in range(args.runs):
                app.out.unlink(missing_ok=True)
                app.start("--popup-at-start")
                result, seconds = mm(store, "replay", "loan", "--no-agent", "--timeout", "10")
                filed = [{k: str(r[k]) for k in WANTED} for r in app.records()] == [WANTED]
                waits = [line for line in result.stderr.splitlines() if "waiting for" in line]
                times.append(seconds)
                print(
                    f"run {i + 1:>2}: exit {result.returncode}, {seconds:4.1f} s, "
                    f"filed {'once' if filed else 'WRONG'}" + "".join(f"\n    {w}" for w in waits)
                )
        finally:
            app.stop()
    print(
        f"learned branch, {len(times)} replays: min {min(times):.1f} s, median "
        f"{statistics.median(times):.1f} s, max {max(times):.1f} s"
    )


if __name__ == "__main__":
    main()
