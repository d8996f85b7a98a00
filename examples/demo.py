"""The mm demo: record -> replay -> diverge -> self-heal -> replay the healed branch.

Runs the real `mm` command against the example loan form app and its agent, on the
current display, or on a virtual one (Xvfb) when DISPLAY is not set. Recordings go to
.demo/recordings (see them afterwards with `mm --store .demo/recordings ls`). Each command
is printed as it runs, ready to be pasted in a shell at the repository's root with the
virtualenv active (`. .venv/bin/activate`).

    python examples/demo.py
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.world import LoanApp, agent_command
from mmcli.desktop.display import VirtualDisplay

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".demo"
STORE = WORK / "recordings"
console = Console(stderr=True, highlight=False)


class DemoFailed(Exception):
    pass


def _from_root(word: str) -> str:
    """A path inside the repository as it is written from its root; `python` for this
    interpreter (the virtualenv's, once activated); any other word as it is."""
    if word == sys.executable:
        return "python"
    path = Path(word)
    if path.is_absolute() and path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT))
    return word


def command_line(args: list[str]) -> list[str]:
    """The command a user types for `mm ARGS` run from the repository's root."""
    return ["mm", "--store", _from_root(str(STORE)), *(_from_root(a) for a in args)]


def shown(args: list[str]) -> str:
    """`command_line(args)` quoted for a shell, to copy and paste."""
    return shlex.join(command_line(args))


def _runnable(line: list[str]) -> list[str]:
    """`line` as this process runs it: the virtualenv's `mm` (or `python -m mmcli` when no
    `mm` is installed beside this interpreter), and this interpreter for the agent's
    `python`."""
    installed = Path(sys.executable).parent / "mm"
    head = [str(installed)] if installed.exists() else [sys.executable, "-m", "mmcli"]
    rest = line[1:]
    if "--" in rest and rest[rest.index("--") + 1 :][:1] == ["python"]:
        rest[rest.index("--") + 1] = sys.executable
    return head + rest


def announce(line: list[str]) -> None:
    """Print the command about to run on one line (never wrapped: it is pasted whole)."""
    console.print(f"[bold cyan]$ {escape(shlex.join(line))}[/]", soft_wrap=True)


def mm(*args: str) -> subprocess.CompletedProcess[str]:
    line = command_line(list(args))
    announce(line)
    started = time.monotonic()
    result = subprocess.run(
        _runnable(line),
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if result.stdout.strip():
        print(result.stdout.strip())
    console.print(f"[dim]-> exit {result.returncode} in {time.monotonic() - started:.1f}s[/]")
    return result


def agent_runs() -> int:
    """How many times the agent ran: once to record, then once per replay that handed over
    (from the recording's replay history)."""
    history = STORE / ".mm" / "history" / "loan.jsonl"
    if not history.exists():
        return 1
    lines = [json.loads(line) for line in history.read_text().splitlines() if line.strip()]
    return 1 + sum(int(entry.get("agent_runs", 0)) for entry in lines)


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
    agent = agent_command(app, think=0.3)
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
    virtual = None if os.environ.get("DISPLAY") else VirtualDisplay()
    if virtual is not None:
        console.print("no DISPLAY: starting a virtual display (Xvfb 1920x1080)")
    try:
        with virtual or contextlib.nullcontext():
            if virtual is not None:
                os.environ.update(virtual.env())  # for mm, the app and the agent run here
            run()
    except DemoFailed as e:
        console.print(f"[red]demo failed[/]: {e}")
        return 1
    console.print(f"\n[green]demo done[/]; recordings in {STORE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
