"""Record one app's task once and replay one scenario, printing mm's stderr: a quick check
of a matcher change on a real desktop.

    python -m benchmarks.desktop.try gtk prefilled-same [--seed N] [--style xdotool] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from benchmarks.desktop.bench import Bench
from benchmarks.desktop.catalog import APPS
from benchmarks.desktop.desktop import WMS, Desktop
from benchmarks.desktop.scenarios import BY_KEY


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("app", choices=sorted(APPS))
    parser.add_argument("scenario", choices=sorted(BY_KEY))
    parser.add_argument("--seed", type=int, default=0, help="the recording's index (timing)")
    parser.add_argument("--timeout", type=float, default=4.0, help="mm replay --timeout")
    parser.add_argument(
        "--panel", choices=("ours", "default"), default="ours", help="tint2's configuration"
    )
    parser.add_argument("--wm", choices=WMS, default="openbox", help="the window manager")
    parser.add_argument(
        "--fixed-world", action="store_true", help="the window at HOME, the default themes"
    )
    parser.add_argument("--style", default="pyautogui", help="agent style (pyautogui, xdotool)")
    parser.add_argument(
        "--think", type=float, nargs=2, metavar=("FROM", "TO"),
        help="the agent's thinking between actions (s; default: 0.2 0.9)",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, help="keep the store and logs in this directory")
    args = parser.parse_args()
    scenario = BY_KEY[args.scenario]
    with tempfile.TemporaryDirectory(prefix="mm-desktop-") as tmp:
        work = args.keep or Path(tmp)
        with Desktop(work / "desktop", panel_config=args.panel, wm=args.wm) as desktop:
            app = APPS[args.app](desktop, work / args.app)
            if not scenario.applies_to(app):
                print(f"{args.scenario} cannot be shown by {args.app}", file=sys.stderr)
                return 2
            bench = Bench(
                desktop,
                app,
                work / "store",
                timeout=args.timeout,
                style=args.style,
                vary=not args.fixed_world,
                think=tuple(args.think) if args.think else None,
            )
            try:
                recorded = bench.record(args.seed)
                print(
                    f"recorded {recorded.name} ({recorded.world.describe()}): "
                    f"{recorded.masked:.1%} of the window masked at most",
                    file=sys.stderr,
                )
                j = bench.judge(scenario, recorded)
            finally:
                app.close()
    print(j.stderr, file=sys.stderr)
    print(
        f"{j.app} {j.scenario} ({j.label}): exit {j.exit_code}, record {j.record!r} "
        f"(expected {j.expected!r}) -> {j.outcome}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
