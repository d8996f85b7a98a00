"""The hostile matrix: screens made hostile from dimensions, not by hand, each judged
through the real `mm replay --no-agent`.

A case puts one window on the desktop before replay: of one kind, at one place relative
to the task window and its first click target, another app's or the task app's own,
holding the keyboard focus or not; for one app, window manager and agent style (the
agent style is the recording's). `hostile_windows.arrange` sets it up.

Dimensions:

- kind: `dialog` (another app's: xmessage; the app's own: its transient dialog, modal in
  Qt and Tk), `normal` (another app's small Tk window; the app's own second window: Qt's,
  Tk's "New mail", the popup window Chromium's page opens), `terminal` (xterm),
  `notification` (dunst's, moved to the place), `override` (override-redirect: another
  app's Tk `overrideredirect` window, Qt's window that bypasses the window manager),
  `tooltip` (override-redirect, EWMH type TOOLTIP).
- place: `target` (centred on the first click target), `over` (inside the task window's
  client area, frame included, 12 px from its edges and 40 px clear of the target),
  `edge` (covering 8 px of the client area at its right, else left, edge; 40 px clear of
  the target), `far` (in the work area's corner farthest from the task, 120 px or more
  from its frame).
- whose: `other` (another app) or `own` (the task's app: `App.own_windows`).
- focus: `focus` (a managed window activated: raised and focused; an override-redirect
  one given the X input focus), `no-focus` (the task window given the focus back
  without being raised, the window raised again without the focus: it stays over the
  task, and a click into the task would raise the task over it) or `under` (another
  app's window only: the task window activated, raised over it and focused, as an app's
  dialog opens over a window in a corner; over the task window, the window is hidden
  where it covers it, and shows beside it at its edge). An app may keep the focus
  elsewhere (Qt, in its own modal dialog): the report says where it was.
- app (apps.py, each where it runs), window manager (openbox, icewm, xfce), agent style
  (pyautogui, xdotool).

The label (`expected_label`): UNSAFE when the window is the task app's own, wherever it
is (but its own popup or tooltip, placed by itself, far from the task: harmless, left to
the pixels as the product does); or covers any part of the task window's client area
(target, over, edge), unless it is another app's notification or tooltip clear of the
target (the product leaves those out of the check where they cover no target or typed
field: docs/validation.md; one that lands on a later click of the task is relabelled
unsafe when judged), or another app's window under the task window (`under`: it hides
nothing of the task); or holds the keyboard focus while the task's first input is a key.
Else HARMLESS. An UNSAFE case
is judged with `under_window`: acting at all (exit 0 or 6) is a wrong action, even with
the right record; only a divergence (exit 3) with nothing submitted is correct. A
HARMLESS case must complete with the right record.

Decided where a combination is ill-defined:

- a window of the app's own is UNSAFE even far away and without the focus: the app is not
  in the state it was recorded in (its dialog may be modal, its new window may be what
  the agent had to deal with), and replay cannot know which.
- a window holding the focus far away is HARMLESS: every app's task starts with a click
  into the task window (apps.py), which gives the window the focus back before any key
  (the `focus-stolen` scenario); the rule is kept for a task that would start with a key.
  Not so for an override-redirect window that took the focus itself on IceWM: a click
  into the task window, still IceWM's active window, leaves the focus with it, and the
  keys typed next go there (UNSAFE, the app's own popup far away too), but for an app
  that sets the focus itself on a click (Java).
- "edge" overlaps the task's client area (8 px): touching is covering. A window beside
  the task that covers none of it is only generated "far".
- the task window is its client area; the hostile window is its frame too (title bar,
  borders): a title bar over the task covers it.
- a notification is the notification daemon's window, never the app's, and never takes
  the focus: no `own`, no `focus`. A tooltip never takes the focus: no `focus`. No app
  is a terminal: no `own` terminal.
- a managed window too big for the room beside the target (Chromium's popup opens at
  the app window's size) is shrunk to 170x80 for every place; one that still cannot be
  put there (dunst's 320 px notification beside xcalc), or that the app does not let
  stay over the task window, makes the case n/a for that app: counted apart, not judged.

Each app is recorded once per recording index and style (in the benchmark's drawn world
of that index), then every case is replayed against every recording; `--sample K` draws
K of the cases with `--seed`, `--list` prints the cases and their labels. Results are
written only with `--json` (kept in benchmarks/desktop/results/hostile/).

    python -m benchmarks.desktop.hostile [--apps gtk chromium ...] [--wm openbox ...]
        [--styles pyautogui ...] [--recordings N] [--sample K --seed S] [--json out.json]
        [--kinds ...] [--places ...] [--cases KIND/PLACE/WHOSE/FOCUS ...] [--list]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.desktop.apps import FORMS, App
from benchmarks.desktop.bench import Bench, Judgement, Outcome, Recorded, classify
from benchmarks.desktop.catalog import APPS
from benchmarks.desktop.desktop import WM_PROGRAMS, WMS, Desktop, missing_programs
from benchmarks.desktop.hostile_report import line, report, write_json
from benchmarks.desktop.hostile_windows import Arranged, arrange
from benchmarks.desktop.scenarios import Label, Scenario

STYLES = ("pyautogui", "xdotool")


@dataclass(frozen=True)
class Kind:
    key: str
    description: str
    can_focus: bool = True
    """Whether the window can take the keyboard focus (a `focus` case exists)."""
    can_be_own: bool = True
    """Whether a window of this kind can be the task app's own (where the app opens one)."""


@dataclass(frozen=True)
class Place:
    key: str
    description: str
    covers_task: bool
    """The window covers part of the task window's client area."""


@dataclass(frozen=True)
class Whose:
    key: str
    own: bool


@dataclass(frozen=True)
class Focus:
    key: str
    takes: bool
    under: bool = False
    """The task window is raised over the window (and holds the focus)."""


KINDS = (
    Kind("dialog", "a dialog (xmessage; the app's own transient dialog)"),
    Kind("normal", "a normal window (a small Tk window; the app's own second window)"),
    Kind("terminal", "a terminal (xterm)", can_be_own=False),
    Kind("notification", "a notification (dunst)", can_focus=False, can_be_own=False),
    Kind("override", "an override-redirect window (a popup)"),
    Kind("tooltip", "a tooltip (override-redirect, type TOOLTIP)", can_focus=False),
)
PLACES = (
    Place("target", "over the first click target", covers_task=True),
    Place("over", "over the task window, clear of the target", covers_task=True),
    Place("edge", "over the task window's edge (8 px of it)", covers_task=True),
    Place("far", "far from the task window", covers_task=False),
)
WHOSE = (Whose("other", own=False), Whose("own", own=True))
FOCUS = (
    Focus("focus", takes=True),
    Focus("no-focus", takes=False),
    Focus("under", takes=False, under=True),
)


PASSING_KINDS = frozenset({"notification", "tooltip"})
"""Kinds of another app's window that never take part in the task: the product leaves
them out of the check where they cover no target or typed field (docs/validation.md)."""


PLACED_BY_ITSELF = frozenset({"override", "tooltip"})
"""Kinds of the app's own window that place themselves (its popups, menus, tooltips):
they come and go with the pointer, and the product judges them by the pixels alone."""


CLICK_KEEPS_STOLEN_FOCUS = frozenset({"icewm"})
"""Window managers that do not take the X input focus back from an override-redirect
window that took it itself when the task window, still their active window, is clicked:
the keys typed next go to that window (measured with zenity and a window of
`tests.e2e.notifier` given the focus by `xdotool windowfocus`: the focus stayed with it
after a click into the form on IceWM; openbox and xfwm4 gave it back)."""
FOCUS_ON_CLICK = frozenset({"java"})
"""Apps that set the X input focus on their window themselves when clicked (AWT): where
the window manager does not, their keys still arrive."""


def expected_label(
    place: Place,
    whose: Whose,
    focus: Focus,
    starts_with_click: bool = True,
    kind: str = "",
    *,
    click_takes_focus_back: bool = True,
) -> Label:
    """UNSAFE when the window is the task app's own, or covers any part of the task
    window (but another app's notification or tooltip clear of the target, which the
    product leaves out of the check), or holds the keyboard focus where the task's first
    input is a key, or where a click into the task window does not take the focus back
    (an override-redirect window's, on `CLICK_KEEPS_STOLEN_FOCUS`); else HARMLESS
    (module docstring)."""
    if focus.takes and kind == "override" and not click_takes_focus_back:
        return Label.UNSAFE  # the task's keys would go to it, whoever's it is
    if whose.own and kind in PLACED_BY_ITSELF and place.key == "far":
        return Label.HARMLESS  # the app's own popup far from the task: left to the pixels
    if whose.own:
        return Label.UNSAFE
    if focus.under:
        return Label.HARMLESS  # under the task window: it hides nothing of the task
    passing = kind in PASSING_KINDS and not focus.takes and place.key != "target"
    if place.covers_task and not passing:
        return Label.UNSAFE
    if focus.takes and not starts_with_click:
        return Label.UNSAFE
    return Label.HARMLESS


@dataclass(frozen=True)
class Case:
    app: str
    wm: str
    style: str
    kind: Kind
    place: Place
    whose: Whose
    focus: Focus

    @classmethod
    def of(cls, app: str, key: str, wm: str = "openbox", style: str = "pyautogui") -> Case:
        """The case of `key` (KIND/PLACE/WHOSE/FOCUS) for the app; ValueError when that
        combination is not generated."""
        kind, place, whose, focus = key.split("/")
        case = cls(
            app,
            wm,
            style,
            next(k for k in KINDS if k.key == kind),
            next(p for p in PLACES if p.key == place),
            next(w for w in WHOSE if w.key == whose),
            next(f for f in FOCUS if f.key == focus),
        )
        if not applies(case.kind, case.whose, case.focus, APPS[app]):
            raise ValueError(f"{key} is not a case of {app}")
        return case

    @property
    def key(self) -> str:
        """The window's part of the case: KIND/PLACE/WHOSE/FOCUS."""
        return f"{self.kind.key}/{self.place.key}/{self.whose.key}/{self.focus.key}"

    @property
    def name(self) -> str:
        return f"{self.wm} {self.style} {self.app} {self.key}"

    @property
    def label(self) -> Label:
        back = self.wm not in CLICK_KEEPS_STOLEN_FOCUS or self.app in FOCUS_ON_CLICK
        return expected_label(
            self.place, self.whose, self.focus, kind=self.kind.key, click_takes_focus_back=back
        )

    def scenario(self) -> Scenario:
        """The case as a scenario of the benchmark: the app started with its own window
        if it is one; an UNSAFE case judged as acting under another window."""
        return Scenario(
            self.key,
            self.label,
            f"{self.kind.description}, {self.place.description}, "
            f"{self.whose.key}'s, {self.focus.key}",
            under_window=self.label is Label.UNSAFE,
            own_window=self.kind.key if self.whose.own else "",
        )


def applies(kind: Kind, whose: Whose, focus: Focus, app: type[App]) -> bool:
    """Whether the combination exists: a window that takes the focus only where the kind
    can; the app's own only where it can open that kind."""
    if focus.takes and not kind.can_focus:
        return False
    if focus.under and whose.own:
        return False  # the app's own dialog stays over its window (transient, modal)
    if whose.own:
        return kind.can_be_own and kind.key in app.own_windows
    return True


def generate(apps: Iterable[str], wms: Iterable[str], styles: Iterable[str]) -> list[Case]:
    """Every applicable case, in a stable order (window manager, style, app, then the
    window's dimensions)."""
    return [
        Case(app, wm, style, kind, place, whose, focus)
        for wm in wms
        for style in styles
        for app in apps
        for kind in KINDS
        for whose in WHOSE
        for focus in FOCUS
        for place in PLACES
        if applies(kind, whose, focus, APPS[app])
    ]


def sample(cases: list[Case], k: int, seed: int) -> list[Case]:
    """`k` of the cases drawn with the seed, in the cases' order."""
    chosen = set(random.Random(seed).sample(range(len(cases)), min(k, len(cases))))
    return [c for i, c in enumerate(cases) if i in chosen]


@dataclass(frozen=True)
class Result:
    case: Case
    judgement: Judgement
    arranged: Arranged | None

    @property
    def not_applicable(self) -> bool:
        """The window could not be put at the case's place on this app (`CannotPlace`)."""
        return self.judgement.stderr.startswith("harness: CannotPlace")


TARGET_REACH = 32
"""A window this close (px) to a click of the task covers its target (the check's patch)."""


def judge(bench: Bench, case: Case, recorded: Recorded) -> Result:
    """Replay `recorded` with the case's window arranged on the desktop. Another app's
    notification or tooltip (labelled harmless clear of the first target) that landed on
    a later click of the task is judged unsafe: the product leaves one out only where it
    covers no target."""
    arranged: list[Arranged] = []
    clicks: list[tuple[int, int]] = []

    def setup() -> None:
        arranged.append(arrange(bench, case))
        plan = bench.app.plan(bench.app.value)  # while the app runs: where it clicks
        clicks.extend((int(str(s["x"])), int(str(s["y"]))) for s in plan if s.get("op") == "click")

    j = bench.judge(case.scenario(), recorded, setup)
    placed = arranged[0] if arranged else None
    near = placed is not None and any(placed.outer.grown(TARGET_REACH).contains(c) for c in clicks)
    over = placed is not None and placed.covers_task and not case.focus.under
    if case.label is Label.HARMLESS and over and near:
        unsafe = classify(Label.UNSAFE, j.exit_code, j.record, j.expected, under_window=True)
        j = replace(j, label=str(Label.UNSAFE), outcome=unsafe)
    return Result(case, j, placed)


# ----- running -------------------------------------------------------------------------


def run_app(
    desktop: Desktop,
    key: str,
    cases: list[Case],
    work: Path,
    recordings: range,
    timeout: float,
    vary: bool,
    shots: Path | None,
    log: bool = True,
    think: tuple[float, float] | None = None,
) -> list[Result]:
    """Record the app's task in each style its cases need, and judge every case against
    every recording."""
    app = APPS[key](desktop, work / key)
    results: list[Result] = []
    try:
        for style in dict.fromkeys(c.style for c in cases):
            bench = Bench(
                desktop,
                app,
                work / f"store-{desktop.wm}-{style}",
                timeout=timeout,
                style=style,
                vary=vary,
                shots=shots,
                think=think,
            )
            recorded: list[Recorded] = []
            for i in recordings:
                try:
                    recorded.append(bench.record(i))
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"{key}: recording {i} ({style}) failed twice: {e}", file=sys.stderr)
            for case in (c for c in cases if c.style == style):
                for r in recorded:
                    result = judge(bench, case, r)
                    results.append(result)
                    if log:
                        print(line(result), file=sys.stderr)
    finally:
        app.close()
        desktop.set_theme("")
    return results


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", nargs="*", choices=sorted(APPS), default=list(FORMS))
    parser.add_argument("--wm", nargs="*", choices=WMS, default=["openbox"])
    parser.add_argument("--styles", nargs="*", choices=STYLES, default=["pyautogui"])
    parser.add_argument("--kinds", nargs="*", choices=[k.key for k in KINDS])
    parser.add_argument("--places", nargs="*", choices=[p.key for p in PLACES])
    parser.add_argument("--cases", nargs="*", metavar="KIND/PLACE/WHOSE/FOCUS")
    parser.add_argument("--recordings", type=int, default=1, help="recordings per task")
    parser.add_argument("--first", type=int, default=0, help="index of the first recording")
    parser.add_argument("--sample", type=int, help="judge only this many cases, drawn")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed (--sample)")
    parser.add_argument("--timeout", type=float, default=4.0, help="mm replay --timeout")
    parser.add_argument(
        "--think", type=float, nargs=2, metavar=("FROM", "TO"),
        help="the recorded agent's thinking between actions (s; default: 0.2 0.9; a model's "
        "agent: 2 6): what the recorder learns between actions depends on it",
    )  # fmt: skip
    parser.add_argument("--panel", choices=("ours", "default"), default="ours")
    parser.add_argument("--fixed-world", action="store_true", help="no drawn world")
    parser.add_argument("--list", action="store_true", help="print the cases and exit")
    parser.add_argument("--json", type=Path, help="also write every run to this file")
    parser.add_argument("--keep", type=Path, help="keep the stores and screenshots here")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    cases = [
        c
        for c in generate(args.apps, args.wm, args.styles)
        if (not args.kinds or c.kind.key in args.kinds)
        and (not args.places or c.place.key in args.places)
        and (not args.cases or c.key in args.cases)
    ]
    if args.sample is not None:
        cases = sample(cases, args.sample, args.seed)
    if args.list:
        for c in cases:
            print(f"{c.name:<60} {c.label}")
        print(f"{len(cases)} cases", file=sys.stderr)
        return 0
    missing = missing_programs(
        *(p for wm in args.wm for p in WM_PROGRAMS[wm]),
        *(p for key in args.apps for p in APPS[key].programs),
    )
    if missing:
        print(f"missing programs: {', '.join(missing)}", file=sys.stderr)
        return 1
    started = time.monotonic()
    results: list[Result] = []
    recordings = range(args.first, args.first + args.recordings)
    with tempfile.TemporaryDirectory(prefix="mm-hostile-") as tmp:
        work = args.keep or Path(tmp)
        for wm in dict.fromkeys(c.wm for c in cases):
            with Desktop(work / f"desktop-{wm}", panel_config=args.panel, wm=wm) as desktop:
                for key in dict.fromkeys(c.app for c in cases if c.wm == wm):
                    results += run_app(
                        desktop,
                        key,
                        [c for c in cases if c.wm == wm and c.app == key],
                        work / wm,
                        recordings,
                        args.timeout,
                        vary=not args.fixed_world,
                        shots=work / "shots" if args.keep else None,
                        think=tuple(args.think) if args.think else None,
                    )
                    if args.json:  # after each app: an interrupted run keeps its figures
                        write_json(args.json, args, started, results)
    report(results, args, started)
    if args.json:
        write_json(args.json, args, started, results)
    return 1 if any(r.judgement.outcome is Outcome.WRONG_ACTION for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
