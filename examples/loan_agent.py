"""A slow-but-smart computer-use agent that files one loan application in loan_form.py.

It perceives the screen only through the layout file the app publishes (its
"accessibility tree") and acts only through pyautogui, so the mm recorder sees
every action; or, with `--input vnc`, through a VNC client library (vncdotool) connected
to `MM_VNC_ADDRESS` with the password in `MM_VNC_PASSWORD`, as an agent driving a
remote desktop does (under `mm record --display vnc://...` that is mm's endpoint). It
decides from what is on screen each time, which makes it resumable: a half-filled form,
a Notice dialog or an already open confirmation are all handled.

    python examples/loan_agent.py --layout /tmp/layout.json --name John \\
        --email john@example.com --amount 1200 --product Auto [--urgent]

Exit codes: 0 done, 3 the task cannot be done on this screen, 1 other error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

EXIT_DONE, EXIT_ERROR, EXIT_CANNOT = 0, 1, 3
LAYOUT_TIMEOUT = 10.0  # seconds to wait for the app to publish its layout
CONFIRM_TIMEOUT = 10.0  # seconds to wait for "Application saved" after Submit
SETTLE = 0.15  # an observation must be this much younger than the last action
ANSWER_TIMEOUT = 2.0  # before an action is done again, seconds for the app to take the last
MAX_TRIES = 3  # attempts per target before concluding the screen will not cooperate
MAX_ACTIONS = 60
CONFIRMATION_TEXT = "Application saved"
FIELD_NAMES = ("Name", "Email", "Amount")

Widget = dict[str, Any]
Window = dict[str, Any]
Layout = dict[str, Any]


class Stop(Exception):
    """Ends the run with an exit code and a message for stderr."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Goal:
    name: str
    email: str
    amount: str
    product: str
    urgent: bool


@dataclass(frozen=True)
class Act:
    """One pyautogui action: kind is click, triple_click, write, press or done."""

    kind: str
    why: str
    x: int = 0
    y: int = 0
    text: str = ""
    target: str = ""


def log(message: str) -> None:
    print(f"agent: {message}", file=sys.stderr, flush=True)


# ----- goal -------------------------------------------------------------------


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def resolve_goal(args: argparse.Namespace, env: dict[str, str]) -> Goal:
    """Merge arguments with MM_PARAM_* variables; the environment wins so mm can re-run
    a recording with other values."""

    def pick(key: str, default: str | None) -> str | None:
        return env.get(f"MM_PARAM_{key.upper()}", default)

    values = {k: pick(k, getattr(args, k)) for k in ("name", "email", "amount", "product")}
    missing = [k for k in ("name", "amount", "product") if not values[k]]
    if missing:
        raise Stop(EXIT_ERROR, "missing parameter(s): " + ", ".join(missing))
    urgent_env = env.get("MM_PARAM_URGENT")
    try:
        urgent = parse_bool(urgent_env) if urgent_env is not None else bool(args.urgent)
    except ValueError as e:
        raise Stop(EXIT_ERROR, str(e)) from None
    return Goal(
        name=values["name"] or "",
        email=values["email"] or "",
        amount=values["amount"] or "",
        product=values["product"] or "",
        urgent=urgent,
    )


# ----- perception ---------------------------------------------------------------


def read_layout(path: Path) -> Layout | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "windows" in data else None


def observe(path: Path, not_before: float, timeout: float = LAYOUT_TIMEOUT) -> Layout:
    """The latest layout published after not_before, so an action's effect is visible."""
    deadline = time.monotonic() + timeout
    while True:
        layout = read_layout(path)
        # Layouts without a timestamp fall back to the file's modification time.
        stamp = 0.0
        if layout is not None:
            stamp = float(layout.get("time") or _mtime(path))
        if layout is not None and stamp >= not_before:
            return layout
        if time.monotonic() > deadline:
            raise Stop(EXIT_ERROR, f"no fresh layout in {path} after {timeout:.0f}s")
        time.sleep(0.05)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def center(w: Widget) -> tuple[int, int]:
    return int(w["x"] + w["w"] // 2), int(w["y"] + w["h"] // 2)


def widgets(window: Window) -> list[Widget]:
    found: list[Widget] = window.get("widgets", [])
    return found


def find(window: Window, role: str, label: str) -> Widget | None:
    for w in widgets(window):
        if w.get("role") == role and str(w.get("label", "")).lower() == label.lower():
            return w
    return None


def all_text(window: Window) -> str:
    return " ".join(str(w.get("text", "")) for w in widgets(window))


def top_modal(layout: Layout) -> Window | None:
    windows: list[Window] = layout["windows"]
    modals = [w for w in windows if w.get("modal")]
    return modals[-1] if modals else None


def form_window(layout: Layout) -> Window | None:
    windows: list[Window] = layout["windows"]
    for win in windows:
        if find(win, "entry", "Name"):
            return win
    return None


def error_text(form: Window) -> str:
    for w in widgets(form):
        if w.get("id") == "error" or (w.get("role") == "label" and "error" in str(w.get("id"))):
            return str(w.get("text", ""))
    return ""


# ----- decision -------------------------------------------------------------------


def decide_modal(modal: Window) -> Act:
    ok = find(modal, "button", "OK") or next(
        (w for w in widgets(modal) if w.get("role") == "button"), None
    )
    if ok is None:
        raise Stop(EXIT_CANNOT, f"dialog {modal.get('title')!r} has no button to dismiss it")
    if CONFIRMATION_TEXT.lower() in all_text(modal).lower():
        return Act("click", "closing the confirmation", *center(ok), target="confirm_ok")
    return Act(
        "click", f"dismissing dialog {modal.get('title')!r}", *center(ok), target="dialog_ok"
    )


def decide_field(form: Window, label: str, wanted: str) -> Act | None:
    entry = find(form, "entry", label)
    if entry is None:
        raise Stop(EXIT_CANNOT, f"the form has no {label} field")
    if entry.get("text", "") == wanted:
        return None
    if entry.get("state") == "disabled":
        raise Stop(EXIT_CANNOT, f"the {label} field is disabled")
    # Triple-click selects the old text so typing replaces it (Ctrl+A only moves
    # to the line start in a Tk Entry).
    kind = "triple_click" if entry.get("text") else "click"
    return Act(kind, f"focusing {label}", *center(entry), text=wanted, target=label)


def decide_form(form: Window, goal: Goal, done: frozenset[str] = frozenset()) -> Act:
    for label in FIELD_NAMES:
        if label in done:
            continue
        act = decide_field(form, label, getattr(goal, label.lower()))
        if act:
            return act
    urgent = find(form, "checkbox", "Urgent")
    if urgent is None:
        raise Stop(EXIT_CANNOT, "the form has no Urgent checkbox")
    if bool(urgent.get("checked")) != goal.urgent:
        return Act("click", "toggling Urgent", *center(urgent), target="Urgent")
    radio = find(form, "radio", goal.product)
    if radio is None:
        raise Stop(EXIT_CANNOT, f"the form offers no product {goal.product!r}")
    if not radio.get("checked"):
        return Act(
            "click", f"choosing product {radio['label']}", *center(radio), target=radio["label"]
        )
    submit = find(form, "button", "Submit")
    if submit is None:
        raise Stop(EXIT_CANNOT, "the form has no Submit button")
    if submit.get("state") == "disabled":
        raise Stop(EXIT_CANNOT, "the Submit button is disabled")
    return Act("click", "clicking Submit", *center(submit), target="Submit")


def decide(layout: Layout, goal: Goal, done: frozenset[str] = frozenset()) -> Act:
    """The next action for what is on screen now; pure, so it can be tested offline.
    `done`: fields taken as filled whatever they show."""
    modal = top_modal(layout)
    if modal is not None:
        return decide_modal(modal)
    form = form_window(layout)
    if form is None:
        if any(w.get("role") == "entry" for win in layout["windows"] for w in widgets(win)):
            raise Stop(EXIT_CANNOT, "this is not the loan form (no Name field)")
        raise Stop(EXIT_CANNOT, "no form on screen")
    return decide_form(form, goal, done)


# ----- action -----------------------------------------------------------------------


class VncGui:
    """The few pyautogui calls the agent makes, given through a VNC client instead."""

    KEYS: ClassVar[dict[str, str]] = {"backspace": "bsp", "enter": "enter", "esc": "esc"}

    def __init__(self) -> None:
        from vncdotool import api  # imported late: only this input mode needs it

        address = os.environ.get("MM_VNC_ADDRESS")
        if not address:
            raise Stop(EXIT_ERROR, "--input vnc needs MM_VNC_ADDRESS (HOST:PORT)")
        host, _, port = address.rpartition(":")
        self.client = api.connect(f"{host}::{port}", password=os.environ.get("MM_VNC_PASSWORD"))

    def click(self, x: int, y: int, clicks: int = 1) -> None:
        self.client.mouseMove(x, y)
        for _ in range(clicks):
            self.client.mousePress(1)

    def tripleClick(self, x: int, y: int) -> None:
        self.click(x, y, 3)

    def press(self, key: str) -> None:
        self.client.keyPress(self.KEYS.get(key, key))

    def write(self, text: str) -> None:
        for char in text:
            self.client.keyPress(char)
            time.sleep(0.012)

    def close(self) -> None:
        self.client.disconnect()


class Agent:
    def __init__(
        self,
        layout_path: Path,
        goal: Goal,
        think: float,
        typing: str = "whole",
        gui: object | None = None,
        blind: bool = False,
    ) -> None:
        if gui is None:
            import pyautogui  # imported late: it needs a display at import time

            pyautogui.FAILSAFE = True  # slamming the pointer into a corner aborts the run
            pyautogui.PAUSE = 0.05
            gui = pyautogui
        self.gui: Any = gui
        self.path = layout_path
        self.goal = goal
        self.think = think
        self.typing = typing
        self.last_action = 0.0
        self.sent_at = 0.0
        """When the last action's input was sent (wall clock)."""
        self.tries: Counter[str] = Counter()
        self.actions = 0
        self.blind = blind
        """Fill each field once, from scratch, whatever it shows (`--blind`)."""
        self.filled: set[str] = set()

    def look(self, answered: bool = False) -> Layout:
        """The app's layout drawn after the last action settled; with `answered`, one
        drawn after the app took the last action's input, if one comes in
        `ANSWER_TIMEOUT` (an input the app never gets, as on another app's window, gives
        the layout as it is then)."""
        if not self.last_action:
            return observe(self.path, 0.0)
        layout = observe(self.path, self.last_action + SETTLE)
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while answered and not self.answered(layout) and time.monotonic() < deadline:
            time.sleep(0.05)
            layout = observe(self.path, self.last_action + SETTLE)
        return layout

    def answered(self, layout: Layout) -> bool:
        """Whether `layout` was drawn after the app took the last action's input (a
        layout that does not say is taken as such)."""
        return float(layout.get("input", self.sent_at)) >= self.sent_at

    def perform(self, act: Act) -> None:
        self.tries[act.target + act.kind] += 1
        if self.tries[act.target + act.kind] > MAX_TRIES:
            raise Stop(EXIT_CANNOT, f"{act.why} keeps having no effect")
        self.actions += 1
        if self.actions > MAX_ACTIONS:
            raise Stop(EXIT_ERROR, "too many actions without finishing")
        log(act.why)
        time.sleep(self.think)
        self.sent_at = time.time()
        if act.kind == "click":
            self.gui.click(act.x, act.y)
        elif act.kind == "triple_click":
            self.gui.tripleClick(act.x, act.y)
        elif act.kind == "write":
            self.write(act.text)
        elif act.kind == "press":
            self.gui.press(act.text)
        self.last_action = time.time()

    def write(self, text: str) -> None:
        """Type `text` in one call, in two halves, or one key press per character."""
        if self.typing == "pieces":
            half = len(text) // 2
            self.gui.write(text[:half])
            self.gui.write(text[half:])
        elif self.typing == "keys":
            for char in text:
                self.gui.press(char)
        else:
            self.gui.write(text)

    def fill(self, act: Act) -> None:
        """Focus a field, then type into it once the screen shows nothing got in the way."""
        self.perform(act)
        layout = self.look()
        form = form_window(layout)
        if top_modal(layout) is not None or form is None:
            return  # something popped up; the main loop deals with it first
        entry = find(form, "entry", act.target)
        if entry is None or center(entry) != (act.x, act.y):
            return  # the field moved; aim again
        if act.text:
            self.perform(Act("write", f"typing {act.target}", text=act.text, target=act.target))
        elif entry.get("text"):
            self.perform(Act("press", f"erasing {act.target}", text="backspace", target=act.target))

    def submit(self, act: Act, layout: Layout) -> None:
        form = form_window(layout)
        before = error_text(form) if form else ""
        self.perform(act)
        deadline = time.monotonic() + CONFIRM_TIMEOUT
        while time.monotonic() < deadline:
            layout = self.look()
            if top_modal(layout) is not None:
                return
            form = form_window(layout)
            now = error_text(form) if form else ""
            if now and now != before:
                raise Stop(EXIT_CANNOT, f"the form rejected the input: {now}")
            time.sleep(0.1)
        raise Stop(EXIT_CANNOT, "no confirmation after Submit")

    def confirm(self, act: Act) -> None:
        self.perform(act)
        deadline = time.monotonic() + CONFIRM_TIMEOUT
        while time.monotonic() < deadline:
            modal = top_modal(self.look())
            if modal is None or CONFIRMATION_TEXT.lower() not in all_text(modal).lower():
                raise Stop(EXIT_DONE, "application submitted")
            time.sleep(0.1)
        # Still open: let the main loop click OK again (bounded by MAX_TRIES).

    def blindly(self, layout: Layout) -> Act | None:
        """With `--blind`: a click into the next field not filled yet in this run, to
        type its value after whatever it holds."""
        form = form_window(layout)
        if not self.blind or form is None or top_modal(layout) is not None:
            return None
        for label in FIELD_NAMES:
            entry = find(form, "entry", label)
            if label not in self.filled and entry is not None:
                wanted = getattr(self.goal, label.lower())
                return Act("click", f"focusing {label}", *center(entry), text=wanted, target=label)
        return None

    def run(self) -> None:
        while True:
            layout = self.look()
            blind = self.blindly(layout)
            if blind is not None:
                self.fill(blind)
                self.filled.add(blind.target)
                continue
            act = decide(layout, self.goal, frozenset(self.filled))
            if self.tries[act.target + act.kind] and not self.answered(layout):
                # About to do again what the app may not have taken yet (a click held by
                # a slow display): look once more at a layout drawn after it did.
                layout = self.look(answered=True)
                act = decide(layout, self.goal, frozenset(self.filled))
            if act.target == "confirm_ok":
                self.confirm(act)
            elif act.target == "Submit":
                self.submit(act, layout)
            elif act.target in FIELD_NAMES:
                self.fill(act)
            else:
                self.perform(act)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Fill and submit the Acme Loan Intake form.")
    p.add_argument("--layout", type=Path, required=True, help="layout JSON the app publishes")
    p.add_argument("--name")
    p.add_argument("--email")
    p.add_argument("--amount")
    p.add_argument("--product", help="Personal, Auto or Home")
    p.add_argument("--urgent", action="store_true")
    p.add_argument(
        "--args-only",
        action="store_true",
        help="take the values from the arguments alone, ignoring MM_PARAM_* (as many "
        "agents do: mm then passes a replay's values in the arguments)",
    )
    p.add_argument("--think", type=float, default=0.3, help="pause before each action (s)")
    p.add_argument(
        "--typing",
        choices=("whole", "pieces", "keys"),
        default="whole",
        help="type each value in one call, in two halves, or one key press per character",
    )
    p.add_argument(
        "--blind",
        action="store_true",
        help="fill each field once from scratch whatever it shows, and never look at it "
        "again (as an agent that ignores MM_RESUME_STEP and the screen's state: a value "
        "already there is typed again, and stays doubled)",
    )
    p.add_argument(
        "--input",
        choices=("pyautogui", "vnc"),
        default="pyautogui",
        help="act through pyautogui on $DISPLAY, or through a VNC client on $MM_VNC_ADDRESS",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        goal = resolve_goal(args, {} if args.args_only else dict(os.environ))
        gui = VncGui() if args.input == "vnc" else None
        try:
            Agent(args.layout, goal, max(0.0, args.think), args.typing, gui, args.blind).run()
        finally:
            if gui is not None:
                gui.close()
    except Stop as stop:
        log(str(stop))
        return stop.code
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main())
