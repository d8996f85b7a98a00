"""Per-step cost over VNC against local X11, side by side in one run.

    python -m benchmarks.perf.vnc [--runs 3] [--samples 50] [--server-args="-defer 400"]

One Xvfb with the example loan form, served by x11vnc on 127.0.0.1 (examples/vncserver.py).
Measured on each display: connecting (opening the backend), a grab (a `Frame`, what each
check starts with), a check of the recording's first step (grab + fingerprint + compare),
a click given (the call returning), a click seen (from the call to the first report of
the screen changing: DAMAGE locally, the server's update over VNC), and a whole
`mm replay loan --no-agent` (9 steps, a subprocess, on a freshly started app that must
receive the application). Replays alternate between the two displays within each round.
Then recording: the example agent alone and under `mm record`, acting through pyautogui
on the local display and through its own VNC client (vncdotool) over VNC, where under
`mm record` it connects to mm's endpoint (`MM_VNC_ADDRESS`): the overhead per action.
`--server-args`: more of x11vnc's options, for a server that sends its changes late
(`-defer 400`, `-wait 300`: a VM's console), whose lag replay learns and waits out.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.perf.common import machine_line, mm_command, mm_env, run_timed, say
from examples.vncserver import VncServer
from examples.world import WANTED, LoanApp, agent_command
from mmcli.backends import open_backend
from mmcli.backends.base import Backend
from mmcli.desktop.display import VirtualDisplay
from mmcli.model import Action, ActionKind
from mmcli.params import Values
from mmcli.replay.replayer import Replayer, ReplayOptions
from mmcli.screen.matcher import Policy, compare
from mmcli.store.recordings import Store


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(fn: Callable[[], object], samples: int) -> list[float]:
    out = []
    for _ in range(samples):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def click_seen(backend: Backend, app: LoanApp, samples: int) -> tuple[list[float], list[float]]:
    """Clicks alternating between two fields (the focus ring moves: a repaint each time)."""
    log = backend.changes()
    assert log is not None
    given, seen = [], []
    points = [app.center("Name"), app.center("Email")]
    for i in range(samples):
        x, y = points[i % 2]
        backend.settle(limit=2)
        count = log.count
        started = time.perf_counter()
        backend.perform(Action(ActionKind.CLICK, x=x, y=y))
        given.append(time.perf_counter() - started)
        deadline = started + 2
        while log.count == count and time.perf_counter() < deadline:
            time.sleep(0.0005)
        seen.append(time.perf_counter() - started)
    return given, seen


def step_check(backend: Backend, store: Store) -> Callable[[], object]:
    """A full check of the recording's first step, as replay makes it."""
    recording = store.load("loan")
    step = recording.trunk()[0]
    options = ReplayOptions()
    references = Replayer(store, backend, recording, Values(), options).screens.references(step)

    def check() -> object:
        return compare(
            step.fingerprint,
            backend.grab(),
            Policy.DEFAULT,
            recording.ignore,
            area=recording.area,
            references=references,
        )

    return check


ACTIONS = 9
"""The loan task's actions (3 fields clicked and typed, the product, Submit, OK)."""


def recording_overhead(
    app: LoanApp, server: VncServer, work: Path, runs: int
) -> dict[str, dict[str, str]]:
    """The agent alone and under `mm record`, alternating, on each display; the median
    of `runs` each, and the overhead per action."""
    port = server.address.rsplit(":", 1)[1]
    ways = {
        "local X11": ([], "pyautogui", {}),
        "VNC": (["--display", server.address], "vnc", {"MM_VNC_ADDRESS": f"127.0.0.1:{port}"}),
    }
    walls: dict[tuple[str, str], list[float]] = {}
    for round_ in range(runs):
        for label, (display, via, bare_env) in ways.items():
            agent = agent_command(app, via=via)
            for how in ("alone", "recorded"):
                app.out.unlink(missing_ok=True)
                app.start()
                store = work / f"rec-{label[:3]}-{round_}"
                command = agent
                if how == "recorded":
                    command = mm_command("record", "loan", "--observe", "0", *display, "--", *agent)
                done = run_timed(command, env=mm_env(store, **bare_env))
                received = [{k: str(r[k]) for k in WANTED} for r in app.records()]
                if done.returncode != 0 or received != [WANTED]:
                    sys.exit(f"{label} agent {how} failed: {done.stderr[-800:]}")
                walls.setdefault((label, how), []).append(done.wall)
    out: dict[str, dict[str, str]] = {}
    for label in ways:
        alone = statistics.median(walls[(label, "alone")])
        recorded = statistics.median(walls[(label, "recorded")])
        out[label] = {
            "the agent alone, 9 actions": f"{alone:.2f} s",
            "the agent under `mm record`": f"{recorded:.2f} s",
            "recording overhead per action": f"{(recorded - alone) / ACTIONS * 1000:.0f} ms",
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="whole replays per display")
    parser.add_argument("--samples", type=int, default=50, help="grabs, checks and clicks")
    parser.add_argument(
        "--server-args",
        default="",
        metavar="ARGS",
        help="more of x11vnc's options, one string (a slow server: --server-args='-defer 400')",
    )
    args = parser.parse_args()
    server_args = args.server_args.split()
    work = Path(tempfile.mkdtemp(prefix="mm-bench-vnc-"))
    store_dir = work / "store"
    rows: dict[str, dict[str, str]] = {}
    with VirtualDisplay() as xdisplay, VncServer(xdisplay.display, extra=server_args) as server:
        os.environ["DISPLAY"] = xdisplay.display  # the app, the agent and mm run there
        app = LoanApp(work / "app")
        try:
            app.start()
            say("recording the loan task on the local display")
            recorded = run_timed(
                mm_command("record", "loan", "--observe", "0.5", "--", *agent_command(app)),
                env=mm_env(store_dir),
            )
            if recorded.returncode != 0:
                sys.exit(f"recording failed: {recorded.stderr[-500:]}")
            store = Store(store_dir)
            for label, display in (("local X11", None), ("VNC", server.address)):
                app.out.unlink(missing_ok=True)
                app.start()
                started = time.perf_counter()
                backend = open_backend(display)
                connect = time.perf_counter() - started
                with backend:
                    backend.settle(limit=2)
                    grabs = timed(backend.grab, args.samples)
                    checks = timed(step_check(backend, store), args.samples)
                    given, seen = click_seen(backend, app, args.samples)
                rows[label] = {
                    "open the display": f"{connect * 1000:.0f} ms",
                    "grab (a Frame)": f"{median_ms(grabs):.1f} ms",
                    "check of step 1 (grab + fingerprint + compare)": f"{median_ms(checks):.1f} ms",
                    "click given": f"{median_ms(given):.2f} ms",
                    "click seen (first change reported)": f"{median_ms(seen):.0f} ms",
                }
            walls: dict[str, list[float]] = {"local X11": [], "VNC": []}
            for _ in range(args.runs):
                for label, extra in (("local X11", []), ("VNC", ["--display", server.address])):
                    app.out.unlink(missing_ok=True)
                    app.start()
                    done = run_timed(
                        mm_command("replay", "loan", "--no-agent", *extra), env=mm_env(store_dir)
                    )
                    received = [{k: str(r[k]) for k in WANTED} for r in app.records()]
                    if done.returncode != 0 or received != [WANTED]:
                        sys.exit(f"{label} replay failed: {done.stderr[-800:]}")
                    walls[label].append(done.wall)
            for label, values in walls.items():
                rows[label]["whole replay, 9 steps (subprocess)"] = (
                    f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"
                )
            for label, figures in recording_overhead(app, server, work, args.runs).items():
                rows[label].update(figures)
        finally:
            app.stop()
    print(machine_line())
    print(f"medians of {args.samples} samples; replays: median (range) of {args.runs}")
    print()
    served = " ".join(["x11vnc on 127.0.0.1", *server_args])
    print(f"| | local X11 | VNC ({served}) |")
    print("|---|---|---|")
    for key in rows["local X11"]:
        print(f"| {key} | {rows['local X11'][key]} | {rows['VNC'][key]} |")


if __name__ == "__main__":
    main()
