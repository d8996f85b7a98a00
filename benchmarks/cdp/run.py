"""Web tasks driven through DevTools, with seeded variation: what `mm replay` does on each
screen, against what the agent costs.

    python -m benchmarks.cdp.run [--reps 3] [--seed 0] [--json out.json]

The example web form (`examples/web_form.py`) in a headless Chromium from Debian; the
Playwright agent (`examples/web_agent.py`) is recorded once through `MM_CDP_URL`. Then
each case is replayed `--no-agent` with a name drawn from the seed, in a drawn order, on a
fresh page:

- harmless: the page as recorded; a notice at the top right, away from the form;
- unsafe: a DOM dialog over the form; the page's own `alert()` once Name has the focus;
  a red "Service unavailable" line under Save; Save disabled; City already holding a
  value (typing Paris would save "LyonParis").

A harmless case is correct when replay exits 0 and the server received the drawn name
and Paris; an unsafe one when replay stops (exit 3 or 6) and the server received
nothing. A wrong action: the server received anything on an unsafe screen, or a wrong
value. Then the heal: on the DOM dialog with the agent allowed (it closes the dialog),
and the same screen replayed from memory, no agent run.

Printed: each case's outcome and seconds, the totals, and seconds per step of a replay
from memory against the agent's own run (the agent alone, no mm, on the same page).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from examples.web_form import Browser, FormServer

ROOT = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, str(ROOT / "examples" / "web_agent.py")]
STEPS = 5
CASES: dict[str, tuple[str, dict[str, object]]] = {
    "plain": ("harmless", {}),
    "banner": ("harmless", {"banner": True}),
    "dom-dialog": ("unsafe", {"modal": True}),
    "alert": ("unsafe", {"alert": True}),
    "error-line": ("unsafe", {"error": True}),
    "save-disabled": ("unsafe", {"disabled": True}),
    "prefilled": ("unsafe", {"prefill": "Lyon"}),
}
NAMES = ["Grace", "Lin", "Kay", "Ada Lovelace", "José", "Noor", "Zoë"]


@dataclass
class Run:
    case: str
    label: str
    name: str
    exit_code: int
    outcome: str
    seconds: float
    reason: str


def mm(store: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MM_DISPLAY")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "--store", str(store), *args],
        capture_output=True, text=True, env=env, timeout=300, cwd=ROOT,
    )  # fmt: skip
    return result, time.monotonic() - started


class Page:
    def __init__(self, work: Path, **flags: object) -> None:
        self.out = work / f"submitted-{time.monotonic_ns()}.jsonl"
        self.server = FormServer(self.out, **flags)  # type: ignore[arg-type]
        self.browser = Browser(self.server.url)

    def records(self) -> list[dict[str, str]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines()]

    def close(self) -> None:
        self.browser.close()
        self.server.close()


def judge(label: str, code: int, got: list[dict[str, str]], name: str) -> str:
    if label == "harmless":
        if code == 0 and got == [{"name": name, "city": "Paris"}]:
            return "correct"
        return (
            "wrong action"
            if got and got != [{"name": name, "city": "Paris"}]
            else "false divergence"
        )
    if got:
        return "wrong action"
    return "correct" if code in (3, 6) else "error"


def reason_of(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith(("diverged at", "outcome differs", "mm: error")):
            return line[:160]
    return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3, help="replays of each case")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path)
    a = p.parse_args(argv)
    rng = random.Random(a.seed)
    work = Path(tempfile.mkdtemp(prefix="mm-bench-cdp-"))
    store = work / "store"

    page = Page(work)
    agent_times = []
    try:
        result, seconds = mm(store, "record", "web", "--display", page.browser.address,
                             "--param", "name=Ada", "--", *AGENT)  # fmt: skip
        if result.returncode != 0:
            print(result.stderr, file=sys.stderr)
            return 1
        print(f"recorded through MM_CDP_URL in {seconds:.1f}s (the agent under mm)")
    finally:
        page.close()
    for _ in range(3):  # the agent alone, no mm, on a fresh page
        page = Page(work)
        try:
            started = time.monotonic()
            subprocess.run([*AGENT, "--cdp", f"http://127.0.0.1:{page.browser.port}"],
                           check=True, capture_output=True, timeout=120)  # fmt: skip
            agent_times.append(time.monotonic() - started)
        finally:
            page.close()

    order = [case for case in CASES for _ in range(a.reps)]
    rng.shuffle(order)
    runs: list[Run] = []
    for case in order:
        label, flags = CASES[case]
        name = rng.choice(NAMES)
        page = Page(work, **flags)
        try:
            result, seconds = mm(store, "replay", "web", "--display", page.browser.address,
                                 "--param", f"name={name}", "--no-agent",
                                 "--timeout", "3")  # fmt: skip
            outcome = judge(label, result.returncode, page.records(), name)
        finally:
            page.close()
        runs.append(Run(case, label, name, result.returncode, outcome, seconds,
                        reason_of(result.stderr)))  # fmt: skip
        print(f"{case:14} {label:9} exit {result.returncode}  {outcome:16} {seconds:5.1f}s  "
              f"{runs[-1].reason[:90]}")  # fmt: skip

    page = Page(work, modal=True)
    try:
        heal, heal_s = mm(store, "replay", "web", "--display", page.browser.address,
                          "--param", "name=Noor", "--timeout", "2")  # fmt: skip
        healed = heal.returncode == 0 and page.records() == [{"name": "Noor", "city": "Paris"}]
    finally:
        page.close()
    page = Page(work, modal=True)
    try:
        memory, memory_s = mm(store, "replay", "web", "--display", page.browser.address,
                              "--param", "name=Kay", "--no-agent", "--trust-new",
                              "--timeout", "3")  # fmt: skip
        remembered = memory.returncode == 0 and page.records() == [{"name": "Kay", "city": "Paris"}]
    finally:
        page.close()

    print()
    for label in ("harmless", "unsafe"):
        mine = [r for r in runs if r.label == label]
        counts = {o: sum(r.outcome == o for r in mine) for o in
                  ("correct", "false divergence", "wrong action", "error")}  # fmt: skip
        print(
            f"{label:9} {len(mine):3} replays: " + ", ".join(f"{v} {k}" for k, v in counts.items())
        )
    plain = [r.seconds for r in runs if r.outcome == "correct" and r.label == "harmless"]
    agent = statistics.median(agent_times)
    replay = statistics.median(plain) if plain else float("nan")
    print(
        f"heal on the DOM dialog: {'learned' if healed else 'FAILED'} ({heal_s:.1f}s); "
        f"then from memory, no agent: {'done' if remembered else 'FAILED'} ({memory_s:.1f}s)"
    )
    print(f"seconds per step: replay from memory {replay / STEPS:.2f} (whole run {replay:.1f}s, "
          f"mm's start included), the agent alone {agent / STEPS:.2f} ({agent:.1f}s); "
          f"ratio {agent / replay:.1f}x")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps({
            "seed": a.seed, "reps": a.reps, "runs": [asdict(r) for r in runs],
            "heal": healed, "from_memory": remembered, "agent_seconds": agent_times,
        }, indent=1))  # fmt: skip
    wrong = sum(r.outcome == "wrong action" for r in runs)
    return 1 if wrong or not healed or not remembered else 0


if __name__ == "__main__":
    sys.exit(main())
