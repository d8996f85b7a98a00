"""What opening the X11 backend costs a fresh `mm` process: the imports, its connections
to the display named, and one pointer move, timed in a process of its own, this checkout
against another (`--against DIR`: a `git worktree` of an earlier commit), the two
alternating round by round on one Xvfb so that they share the machine's noise.

    python -m benchmarks.perf.backend_open --against /tmp/old-wt [--rounds 15]

Every `mm record`, `mm replay` and `mm act` under a recorder's full CLI opens it once.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.perf.common import REPO
from mmcli.desktop.display import start_xvfb, stop_xvfb

PROBE = """
import time
t = time.perf_counter()
from mmcli.backends import open_backend
backend = open_backend()
backend.move(10, 10)
print((time.perf_counter() - t) * 1000)
backend.close()
"""


def timed(checkout: Path, display: str) -> float:
    """Milliseconds to open the backend with `checkout`'s mm, in a new process."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=checkout,
        env={"DISPLAY": display, "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return float(done.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", type=Path, required=True, help="another checkout of mm")
    p.add_argument("--rounds", type=int, default=15)
    a = p.parse_args(argv)
    process, display = start_xvfb(1280, 800)
    try:
        times: dict[Path, list[float]] = {REPO: [], a.against: []}
        for _ in range(a.rounds):
            for checkout in times:
                times[checkout].append(timed(checkout, display))
    finally:
        stop_xvfb(process)
    this, other = (statistics.median(times[c]) for c in (REPO, a.against))
    print(f"opening the X11 backend, median of {a.rounds} fresh processes each:")
    print(f"  this checkout ({REPO}): {this:.0f} ms")
    print(f"  {a.against}: {other:.0f} ms")
    print(f"  ratio: {this / other:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
