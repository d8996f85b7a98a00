"""The mm demo: record -> replay -> diverge -> self-heal -> replay the healed branch.

Runs the real `mm` command against the example loan form app and its agent, on the
current display, or on a virtual one (Xvfb) when DISPLAY is not set. Recordings go to
.demo/recordings (see them afterwards with `mm --store .demo/recordings ls`).

    python examples/demo.py [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.world import LoanApp, agent_command
from mmcli.display import VirtualDisplay

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".demo"
STORE = WORK / "recordings"
console = Console(stderr=True, highlight=False)


class DemoFailed(Exception):
    pass


def mm(*args: str) -> subprocess.CompletedProcess[str]:
    shown = " ".join(["mm", *args])
    console.print(f"[bold cyan]$ {shown}[/]")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "--store", str(STORE), *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if result.stdout.strip():
        print(result.stdout.strip())
    console.print(f"[dim]-> exit {result.returncode} in {time.monotonic() - started:.1f}s[/]")
    return result


def expect(result: subprocess.CompletedProcess[str], code: int, what: str) -> None:
    if result.returncode != code:
        raise DemoFailed(f"{what}: expected exit {code}, got {result.returncode}")


def submitted(app: LoanApp) -> str:
    records = app.records()
    if not records:
        return "nothing"
    return ", ".join(f"{r['name']} / {r['amount']} / {r['product']}" for r in records)


def chapter(title: str) -> None:
    console.print()
    console.print(Rule(title, align="left"))


def run() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    app = LoanApp(WORK / "app")
    counter = WORK / "agent-runs"
    agent = agent_command(app, counter=counter, think=0.3)
    agent_runs = lambda: counter.read_text().count("started") if counter.exists() else 0  # noqa: E731
    try:
        chapter("1. Record: the agent enters a loan application, mm watches")
        app.start()
        expect(mm("record", "loan", "--param", "name=John Smith", "--", *agent), 0, "record")
        console.print(f"app received: {submitted(app)}; agent runs so far: {agent_runs()}")

        chapter("2. Replay from memory on a fresh app, no agent")
        app.out.unlink(missing_ok=True)
        app.start()
        expect(mm("replay", "loan", "--param", "name=Jane Doe", "--no-agent"), 0, "replay")
        console.print(f"app received: {submitted(app)}; agent runs so far: {agent_runs()}")

        chapter("3. The app drifts: a maintenance popup at start. No agent allowed")
        app.out.unlink(missing_ok=True)
        app.start("--popup-at-start")
        expect(
            mm("replay", "loan", "--param", "name=Jane Doe", "--no-agent", "--timeout", "3"),
            3,
            "replay on the popup",
        )
        console.print(f"app received: {submitted(app)} (nothing was clicked on the wrong screen)")

        chapter("4. Same screen, agent allowed: it takes over at the diverged step")
        expect(mm("replay", "loan", "--param", "name=Jane Doe", "--timeout", "3"), 0, "heal")
        console.print(f"app received: {submitted(app)}; agent runs so far: {agent_runs()}")

        chapter("5. The popup again: now it is muscle memory too")
        app.out.unlink(missing_ok=True)
        runs_before = agent_runs()
        app.start("--popup-at-start")
        expect(
            mm("replay", "loan", "--param", "name=Ada Lovelace", "--no-agent"),
            0,
            "replay of the healed branch",
        )
        console.print(
            f"app received: {submitted(app)}; agent runs during this replay: "
            f"{agent_runs() - runs_before}"
        )

        chapter("The recording")
        mm("show", "loan")
        mm("ls")
    finally:
        app.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description="record -> replay -> self-heal demo")
    parser.parse_args()
    context = contextlib.nullcontext() if os.environ.get("DISPLAY") else VirtualDisplay()
    if not os.environ.get("DISPLAY"):
        console.print("no DISPLAY: starting a virtual display (Xvfb 1920x1080)")
    try:
        with context:
            run()
    except DemoFailed as e:
        console.print(f"[red]demo failed[/]: {e}")
        return 1
    console.print(f"\n[green]demo done[/]; recordings in {STORE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
