"""Recording a task and judging one scenario against one recording, with the real `mm` in
a subprocess: shared by the benchmark (`run`), the one-shot `try` and the e2e tests."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import numpy as np

from benchmarks.desktop.apps import App
from benchmarks.desktop.desktop import PANEL_HEIGHT, Desktop, Geometry
from benchmarks.desktop.scenarios import Label, Scenario, Setup
from benchmarks.desktop.world import MOVE_BY, World

REPO = Path(__file__).resolve().parent.parent.parent
IDLE_SECONDS = 12.0
ASIDE_MARGIN = 40
"""How far (px) a window put aside over the task stays from the first target."""
ASIDE_INSET = 12
"""How far (px) inside the task window's lower right corner a window put aside stands."""
SESSION_DIALOG = [
    "xmessage",
    "-name",
    "session",
    "-buttons",
    "Continue:0,Sign out:1",
    "Your session expires in 5 minutes.\nSave your work.",
]
"""Another app's dialog (Xaw): it takes the focus where it opens."""
TERMINAL = [
    "xterm",
    "-name",
    "logs",
    "-T",
    "logs",
    "-geometry",
    "48x8",
    "-e",
    "sh",
    "-c",
    "echo '$ tail -f /var/log/syslog'; sleep 600",
]
"""A terminal window another program opens."""
SMALL_DIALOG = ["xmessage", "-name", "session", "-buttons", "OK:0", "Session expires."]
"""Another app's small dialog (Xaw): it takes the focus where it opens."""
SMALL_TERMINAL = ["xterm", "-name", "logs", "-T", "logs", "-geometry", "20x3", "-e", "sleep", "600"]
"""A small terminal window."""


class Outcome(StrEnum):
    CORRECT = "correct"
    FALSE_DIVERGENCE = "false divergence"
    WRONG_ACTION = "wrong action"
    FLAGGED = "flagged"
    """Exit 6: the steps were done and the record is right, but the screen after the last
    one was not the recorded outcome (a person is asked to check): no wrong data, a
    needless alarm where the scenario is harmless."""
    ERROR = "error"


SHORT = {
    Outcome.CORRECT: "ok",
    Outcome.FALSE_DIVERGENCE: "fd",
    Outcome.WRONG_ACTION: "WRONG",
    Outcome.FLAGGED: "flag",
    Outcome.ERROR: "err",
}
"""How the matrices print each outcome."""


def outcome_cell(outcomes: Iterable[Outcome]) -> str:
    """A matrix cell: how many runs ended each way ("n/a" for none)."""
    counts = Counter(outcomes)
    if not counts:
        return "n/a"
    return " ".join(f"{counts[o]}{SHORT[o]}" for o in Outcome if counts[o])


def verified_summary(judgements: Iterable[Judgement]) -> str:
    """How many replays that exited 0 and typed read every typed value back as typed,
    and which did not ("-" for none)."""
    done = [j for j in judgements if j.verified is not None]
    if not done:
        return "-"
    not_read = sorted({f"{j.scenario}" for j in done if not j.verified})
    shown = f" (not verified: {', '.join(not_read)})" if not_read else ""
    return f"{sum(bool(j.verified) for j in done)} of {len(done)}{shown}"


def step_summary(step_ms: Iterable[float | None]) -> str:
    """Replay's own time a step over replays that exited 0: median (min-max) and the
    spread max/min ("-" for none)."""
    times = sorted(t for t in step_ms if t is not None)
    if not times:
        return "-"
    spread = times[-1] / times[0] if times[0] > 0 else float("inf")
    return (
        f"{statistics.median(times):.0f} ms ({times[0]:.0f}-{times[-1]:.0f}), "
        f"{spread:.1f}x over {len(times)} replays"
    )


@dataclass(frozen=True)
class Recorded:
    name: str
    index: int
    window: Geometry
    masked: float
    """Largest fraction of the task window masked at any step (masks' union / window)."""
    world: World = field(default_factory=World)
    focused: bool | None = None
    """Whether the app's window held the input focus when the agent started."""


@dataclass(frozen=True)
class Judgement:
    app: str
    scenario: str
    label: str
    recording: int
    outcome: Outcome
    exit_code: int
    record: str | None
    expected: str
    stderr: str
    seconds: float
    step_ms: float | None = None
    """mm's own time a step (`mm replay --json`: seconds / steps replayed) of a replay that
    exited 0; None otherwise."""
    verified: bool | None = None
    """For a replay that exited 0 and typed: whether every typed value was read back as
    typed (`mm replay --json`'s "verified"); None otherwise."""
    focused: bool | None = None
    """Whether the app's window held the input focus once started, before the scenario's
    setup (a recording whose first screen shows its window unfocused differs from a replay
    that starts focused): None where the harness failed first."""


def mm(store: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmcli", "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "160", "NO_COLOR": "1"},
    )


def step_ms(result: subprocess.CompletedProcess[str]) -> float | None:
    """Replay's own time a step, from its `--json` report, when it exited 0."""
    if result.returncode != 0:
        return None
    try:
        report = json.loads(result.stdout)
        return round(1000 * float(report["seconds"]) / int(report["steps_replayed"]), 1)
    except (ValueError, KeyError, TypeError, ZeroDivisionError):
        return None


def verified(result: subprocess.CompletedProcess[str]) -> bool | None:
    """Whether a replay that exited 0 read every typed value back as typed, from its
    `--json` report; None when it did not exit 0 or its report says nothing."""
    if result.returncode != 0:
        return None
    try:
        value = json.loads(result.stdout).get("verified")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None


def classify(
    label: Label, exit_code: int, record: str | None, expected: str, under_window: bool = False
) -> Outcome:
    """How one replay ended; `under_window`: another window was over the task, so that
    performing the steps (exit 0 or 6) was acting under it, whatever the record."""
    if record is not None and record != expected:
        return Outcome.WRONG_ACTION
    if under_window and exit_code in (0, 6):
        return Outcome.WRONG_ACTION
    if exit_code == 3:
        return Outcome.CORRECT if label is Label.UNSAFE else Outcome.FALSE_DIVERGENCE
    if exit_code == 0:
        # done: right only if the right record was submitted
        return Outcome.CORRECT if record == expected else Outcome.WRONG_ACTION
    if exit_code == 6:
        return Outcome.FLAGGED
    return Outcome.ERROR


def masked_fraction(toml_path: Path, window: Geometry) -> float:
    doc = tomllib.loads(toml_path.read_text())
    worst = 0.0
    for step in doc.get("steps", []):
        masks = step.get("screen", {}).get("masks", [])
        grid = np.zeros((window.h, window.w), dtype=bool)
        for x, y, w, h in masks:
            x0, y0 = max(x - window.x, 0), max(y - window.y, 0)
            x1, y1 = min(x + w - window.x, window.w), min(y + h - window.y, window.h)
            if x1 > x0 and y1 > y0:
                grid[y0:y1, x0:x1] = True
        worst = max(worst, float(grid.mean()))
    return worst


class Bench:
    """One app on one desktop, with a store of recordings of its task."""

    def __init__(
        self,
        desktop: Desktop,
        app: App,
        store: Path,
        timeout: float = 4.0,
        style: str = "pyautogui",
        display: str | None = None,
        vary: bool = False,
        shots: Path | None = None,
        think: tuple[float, float] | None = None,
    ) -> None:
        self.desktop = desktop
        self.app = app
        self.store = store
        self.timeout = timeout
        self.style = style
        self.display = display
        """Where replays drive the desktop (`vnc://...`: over VNC); None: its X display."""
        self.vary = vary
        """Each recording in a world drawn from its index (`World.drawn`); else the fixed one."""
        self.shots = shots
        """Where the screen a replay left is saved when it did not end correctly; None: not."""
        self.think = think
        """How long the agent thinks between actions (s, from-to); None: the agent's own."""

    def enter(self, index: int) -> World:
        """Put the desktop and the app in recording `index`'s world."""
        world = World.drawn(index, self.desktop.wm) if self.vary else World()
        self.desktop.set_theme(world.wm_theme)
        self.app.world = world
        return world

    def record(self, index: int, attempts: int = 2) -> Recorded:
        """Record the task (retried once: a recording that failed is not what is measured)."""
        for attempt in range(attempts):
            try:
                return self._record(index)
            except (RuntimeError, subprocess.TimeoutExpired):
                self.app.stop()
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _record(self, index: int) -> Recorded:
        name = f"{self.app.key}-{index}"
        world = self.enter(index)
        self.app.start()
        focused = self.app.has_focus()
        plan = self.app.work / f"plan-{index}.json"
        plan.write_text(json.dumps(self.app.plan(self.app.value)))
        window = self.app.geometry()
        agent = [
            sys.executable,
            "-m",
            "benchmarks.desktop.agent",
            str(plan),
            "--style",
            self.style,
            "--seed",
            str(index),
            *(["--think", *map(str, self.think)] if self.think else []),
        ]
        result = mm(
            self.store,
            "record",
            name,
            "--overwrite",
            "--param",
            f"name={self.app.value}",
            "--observe",
            "1.0",
            "--",
            *agent,
        )
        got = self.app.result(result.returncode)
        self.app.stop()
        if result.returncode != 0 or got != self.app.expected(self.app.value):
            raise RuntimeError(
                f"recording {name} failed (exit {result.returncode}, record {got!r}):\n"
                f"{result.stderr[-2000:]}"
            )
        masked = masked_fraction(self.store / f"{name}.toml", window)
        return Recorded(name, index, window, masked, world, focused)

    def judge(
        self, scenario: Scenario, recorded: Recorded, arrange: Callable[[], None] | None = None
    ) -> Judgement:
        """Replay `recorded` on the scenario; a harness failure is an ERROR, not a crash.
        `arrange`: called after the scenario's setup, before replay (the hostile matrix
        puts its window on the desktop there)."""
        try:
            return self._judge(scenario, recorded, arrange)
        except Exception as e:  # the benchmark goes on; the run shows what broke
            self.app.stop()
            self.desktop.clear_notifications()
            return Judgement(
                self.app.key,
                scenario.key,
                str(scenario.label),
                recorded.index,
                Outcome.ERROR,
                -1,
                None,
                "",
                f"harness: {type(e).__name__}: {e}",
                0.0,
            )

    def _judge(
        self, scenario: Scenario, recorded: Recorded, arrange: Callable[[], None] | None
    ) -> Judgement:
        app = self.app
        started = time.monotonic()
        self.enter(recorded.index)
        app.start(scenario.variant(app, recorded.index))
        focused = app.has_focus()
        try:
            for setup in scenario.setup:
                self.apply(setup)
            if arrange is not None:
                arrange()
            value = app.other_value if scenario.other_value else app.value
            args = [
                "replay",
                recorded.name,
                "--no-agent",
                "--param",
                f"name={value}",
                "--timeout",
                str(self.timeout),
                "--json",
            ]
            if scenario.relocate:
                args.append("--relocate")
            if self.display is not None:
                args += ["--display", self.display]
            result = mm(self.store, *args)
            record = app.result(result.returncode)
            expected = app.expected(value)
            outcome = classify(
                scenario.label, result.returncode, record, expected, scenario.under_window
            )
            if self.shots is not None and outcome is not Outcome.CORRECT:
                key = scenario.key.replace("/", "-")  # the hostile matrix's keys have slashes
                self.shot(f"{app.key}-{key}-{recorded.index}-{outcome.replace(' ', '-')}")
        finally:
            app.stop()
            self.desktop.clear_notifications()
        return Judgement(
            app.key,
            scenario.key,
            str(scenario.label),
            recorded.index,
            outcome,
            result.returncode,
            record,
            expected,
            result.stderr,
            round(time.monotonic() - started, 1),
            step_ms(result),
            verified(result),
            focused,
        )

    def shot(self, stem: str) -> None:
        """Save the whole screen as `shots/STEM.png` (what a wrong or flagged replay left)."""
        import mss
        import mss.tools

        assert self.shots is not None
        self.shots.mkdir(parents=True, exist_ok=True)
        with mss.mss(display=self.desktop.display) as grabber:
            image = grabber.grab(grabber.monitors[0])
            mss.tools.to_png(image.rgb, image.size, output=str(self.shots / f"{stem}.png"))

    # ----- perturbations from outside the app ----------------------------------------

    def apply(self, setup: Setup) -> None:
        d, app = self.desktop, self.app
        width, height = d.size
        if setup is Setup.POINTER_FAR:
            d.pointer(width - 200, height - 200)
        elif setup is Setup.IDLE:
            time.sleep(IDLE_SECONDS)
        elif setup is Setup.CLOCK:
            time.sleep(1.2)
        elif setup is Setup.NOTIFY:
            d.notify("New mail", "3 unread messages from Alice")
        elif setup is Setup.FOCUS_STOLEN:
            self.spawn_clear(["xmessage", "-name", "backup", "Backup finished."], "^backup$")
        elif setup is Setup.MODAL_DIALOG:
            g = app.geometry()
            self.spawn_window(SESSION_DIALOG, "^session$", (g.x + 40, g.y + 30))
        elif setup is Setup.DIALOG_ASIDE:
            self.spawn_aside(SMALL_DIALOG, "^session$")
        elif setup is Setup.WINDOW_IN_FRONT_ASIDE:
            self.spawn_aside(SMALL_TERMINAL, "^logs$")
        elif setup is Setup.WINDOW_IN_FRONT:
            g = app.geometry()
            self.spawn_window(TERMINAL, "^logs$", (g.x + 60, g.y + 20))
        elif setup is Setup.MOVED:
            d.move(app.wid, app.home[0] + MOVE_BY, app.home[1])
            d.settle()

    def spawn_window(self, argv: list[str], name: str, at: tuple[int, int]) -> int:
        """Start another program's window at `at`; it takes the focus (openbox)."""
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.app.extra.append(proc)
        wid = self.desktop.wait_window(name, by="classname", timeout=30)
        self.desktop.move(wid, *at)
        self.desktop.activate(wid)
        self.desktop.settle()
        return wid

    def spawn_clear(self, argv: list[str], name: str) -> None:
        """Start another program's window in the screen corner farthest from the task
        window, clear of it and of its frame (it takes the focus). Put at a fixed place
        before, it covered a corner of a task window the drawn world had put low and
        right (Calc at 231,122, 760x480): no longer the harmless case it is meant to be."""
        wid = self.spawn_window(argv, name, (0, 0))
        own = self.desktop.geometry(wid)
        g = self.app.geometry()
        width, height = self.desktop.size
        margin = 20
        right = g.x + g.w // 2 < width // 2
        below = g.y + g.h // 2 < height // 2
        x = width - own.w - margin if right else margin
        y = height - PANEL_HEIGHT - own.h - margin if below else margin
        self.desktop.move(wid, x, y)
        self.desktop.activate(wid)
        self.desktop.settle()

    def spawn_aside(self, argv: list[str], name: str) -> None:
        """Start another program's small window over a lower corner of the task window,
        inside it and clear of the first target (it takes the focus): raising the task
        window would hide it whole."""
        g = self.app.geometry()
        first = self.app.first_field()
        wid = self.spawn_window(argv, name, (g.x + g.w // 2, g.y + g.h // 2))
        own = self.desktop.geometry(wid)
        y = g.y + g.h - own.h - ASIDE_INSET
        right = g.x + g.w - own.w - ASIDE_INSET
        clear = first[0] + ASIDE_MARGIN <= right or first[1] + ASIDE_MARGIN <= y
        x = right if clear else g.x + ASIDE_INSET
        self.desktop.move(wid, x, y)
        self.desktop.activate(wid)
        self.desktop.settle()
