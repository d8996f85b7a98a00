"""Acme Loan Intake: a small "legacy" Tk data-entry app used as the example world for mm.

Run it on an X display (Xvfb works) and drive it with pyautogui:

    python examples/loan_form.py --out /tmp/loans.jsonl --layout /tmp/layout.json

Flags such as --popup-at-start or --position perturb the screen the way real
desktop apps drift between runs, so recordings can be replayed against them.
With --layout the app publishes its widget tree (like an accessibility bus
would) so an agent can perceive the screen without OCR.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import tkinter as tk
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from tkinter import font as tkfont
from typing import Any

WIDTH, HEIGHT = 560, 420
BACKGROUND = "#d9d9d9"
ERROR_COLOR = "#c00000"
ECHO_FONT = ("Courier", 12, "bold")
"""`--echo`: the status line shows a typed value again, unlike the entry's font."""
PUBLISH_INTERVAL_MS = 200
FIELDS = ("name", "email", "amount")
COUNT_WIDTH = 190
"""The width of the status bar's count cell (`--count`)."""
PRODUCTS = ("Personal", "Auto", "Home")

# Widget places inside the window. Both form variants share them so that a
# blind replay of one form lands on the other form's widgets.
LABEL_X, ENTRY_X, ENTRY_WIDTH = 30, 130, 300
ROW_Y = (70, 110, 150)
URGENT_Y, PRODUCT_Y = 192, 230
RADIO_X = (130, 235, 320)
SUBMIT_X, SUBMIT_Y = 130, 280
HOVER = "#303030"
"""A button's hover colour with `--late-hover`."""
ERROR_Y = 335
GAUGE_DELAY_MS = 1500
"""`--gauge` shows the app's work this long after its last input (jEdit's memory gauge
repaints on a 2 s timer)."""


@dataclass
class Options:
    out: Path
    layout: Path | None = None
    ready_file: Path | None = None
    position: tuple[int, int] = (100, 100)
    dialog_at: tuple[int, int] | None = None
    """Where dialogs open on the screen (None: over the form)."""
    popup_at_start: bool = False
    error_label: bool = False
    clock: bool = False
    minute_clock: float | None = None
    """An H:MM AM/PM clock in the status bar, this many seconds off now (None: none)."""
    gauge: int | None = None
    """An activity gauge in the status bar starting at this value (None: none)."""
    prefill: dict[str, str] = field(default_factory=dict)
    disable_submit: bool = False
    submit_offset: tuple[int, int] = (0, 0)
    variant: str = "loan"
    notice_elsewhere: bool = False
    focus: str | None = None
    refocus: str | None = None
    echo: str | None = None
    count: str | None = None
    """The status bar counts this field's words and characters as it is typed."""
    title_echo: bool = False
    """After Submit, the window's title names the applicant (as an editor's names its
    file): drawn by the window manager, outside the app's own pixels."""
    fail_upload: bool = False
    slow_submit: float = 0.0
    pointer_readout: bool = False
    """As an image editor: the pointer's place in the window at the status bar's right
    end, shown as it enters the window and as it moves; a ruler along the top marks its x
    as it moves only."""
    connecting: float = 0.0
    """A "Connecting" box over the form at start that closes itself this many seconds
    after the window is drawn (0: none)."""
    late_hover: int = 0
    """Milliseconds after the pointer enters a button before its hover effect is drawn
    (0: at once, as Tk draws it)."""
    draft_notice: bool = False
    """A small "Draft saved" window over the form once the name is typed and left."""


def _pair(text: str) -> tuple[int, int]:
    try:
        a, b = text.split(",")
        return int(a), int(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X,Y integers, got {text!r}") from None


def _prefill(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    key = key.strip().lower()
    if not sep or key not in (*FIELDS, "product"):
        raise argparse.ArgumentTypeError(
            f"expected FIELD=VALUE with FIELD in {(*FIELDS, 'product')}"
        )
    return key, value


def parse_args(argv: list[str] | None = None) -> Options:
    p = argparse.ArgumentParser(description="Acme Loan Intake (example app for mm)")
    p.add_argument("--out", type=Path, required=True, help="JSON-lines file receiving records")
    p.add_argument("--layout", type=Path, help="publish the widget tree to this JSON file")
    p.add_argument("--ready-file", type=Path, help="touch this file once the window is drawn")
    p.add_argument("--position", type=_pair, default=(100, 100), metavar="X,Y")
    p.add_argument(
        "--dialog-at",
        type=_pair,
        metavar="X,Y",
        help="open dialogs at this screen position, not over the form (as a window manager "
        "that keeps a large dialog on the screen places it: apart from a moved form)",
    )
    p.add_argument("--popup-at-start", action="store_true", help="modal Notice open at start")
    p.add_argument("--error-label", action="store_true", help="red warning shown at start")
    p.add_argument("--clock", action="store_true", help="ticking HH:MM:SS clock, top right")
    p.add_argument(
        "--minute-clock",
        type=float,
        default=None,
        metavar="SHIFT",
        help="an H:MM AM/PM clock at the status bar's right end, as an editor's, that ticks "
        "once a minute, showing the time SHIFT seconds from now (0: now)",
    )
    p.add_argument(
        "--gauge",
        type=int,
        default=None,
        metavar="START",
        help="a memory gauge at the status bar's right end, as an editor's (\"START/388Mb\"), "
        "that moves only while the app works: each button or key press adds to it, shown "
        f"{GAUGE_DELAY_MS} ms after the last",
    )
    p.add_argument(
        "--prefill",
        type=_prefill,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="prefill name, email, amount or product (repeatable)",
    )
    p.add_argument("--disable-submit", action="store_true", help="Submit shown disabled")
    p.add_argument("--submit-offset", type=_pair, default=(0, 0), metavar="DX,DY")
    p.add_argument(
        "--variant",
        choices=("loan", "other"),
        default="loan",
        help="'other' shows the account-closure form instead",
    )
    p.add_argument(
        "--notice-elsewhere",
        action="store_true",
        help="non-modal 'New mail' window at the bottom right of the screen",
    )
    p.add_argument("--focus", choices=FIELDS, help="field holding keyboard focus at start")
    p.add_argument(
        "--refocus",
        choices=FIELDS,
        help="after the first click into another field, move the focus to this one",
    )
    p.add_argument(
        "--echo",
        choices=FIELDS,
        help="after Submit, the status line shows this field's value, in a large bold font",
    )
    p.add_argument(
        "--count",
        choices=FIELDS,
        help="the status bar counts this field's words and characters as it is typed, in a "
        "cell of its own (as an editor's status bar does)",
    )
    p.add_argument(
        "--title-echo",
        action="store_true",
        help="after Submit, the window title names the applicant",
    )
    p.add_argument(
        "--fail-upload",
        action="store_true",
        help="the upload after the confirmation fails: nothing is saved, the status line says so",
    )
    p.add_argument(
        "--slow-submit",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="Submit answers this long after the click (a server's round trip): the status "
        "line and the confirmation come then",
    )
    p.add_argument(
        "--pointer-readout",
        action="store_true",
        help="as an image editor: the pointer's place in the window at the status bar's "
        "right end, shown as it enters the window and as it moves; a ruler along the top "
        "marks its x as it moves only",
    )
    p.add_argument(
        "--connecting",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="a 'Connecting' box over the form at start, where dialogs open, that closes "
        "itself SECONDS after the window is drawn (the ready file is touched with it up)",
    )
    p.add_argument(
        "--draft-notice",
        action="store_true",
        help="a small 'Draft saved' window opens over the form once the name is typed and "
        "the focus leaves it",
    )
    p.add_argument(
        "--late-hover",
        type=int,
        default=0,
        metavar="MS",
        help="draw a button's hover effect (dark) MS ms after the pointer enters it, as a "
        "browser draws it on its next frame",
    )
    a = p.parse_args(argv)
    return Options(
        out=a.out,
        layout=a.layout,
        ready_file=a.ready_file,
        position=a.position,
        dialog_at=a.dialog_at,
        popup_at_start=a.popup_at_start,
        error_label=a.error_label,
        clock=a.clock,
        minute_clock=a.minute_clock,
        gauge=a.gauge,
        prefill=dict(a.prefill),
        disable_submit=a.disable_submit,
        submit_offset=a.submit_offset,
        variant=a.variant,
        notice_elsewhere=a.notice_elsewhere,
        focus=a.focus,
        refocus=a.refocus,
        echo=a.echo,
        title_echo=a.title_echo,
        count=a.count,
        fail_upload=a.fail_upload,
        late_hover=a.late_hover,
        draft_notice=a.draft_notice,
        slow_submit=a.slow_submit,
        connecting=a.connecting,
        pointer_readout=a.pointer_readout,
    )


def append_record(path: Path, record: dict[str, Any]) -> None:
    # Open, write and close per record so readers see it while the app keeps running.
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def parse_amount(text: str) -> int | float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if not value > 0 or value == float("inf"):
        return None
    return int(value) if value.is_integer() and "." not in text else value


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class LoanFormApp:
    def __init__(self, root: tk.Tk, opts: Options) -> None:
        self.root = root
        self.opts = opts
        # Every widget published in the layout: role, accessible label and stable id.
        self.described: dict[tk.Widget, tuple[str, str, str]] = {}
        self.dialogs: list[tk.Toplevel] = []
        self.closers: dict[tk.Toplevel, Callable[[], None]] = {}
        """How each dialog closes, as its OK button closes it."""
        self.publish_pending = False
        self.last_input = 0.0
        """When the app last took a button or key press (wall clock), published with the
        layout: an agent tells a layout drawn before its click reached the app by it."""
        for sequence in ("<ButtonPress>", "<KeyPress>"):
            root.bind_all(sequence, self._took_input, add="+")
        self._build_window()
        if opts.variant == "other":
            self._build_closure_form()
        else:
            self._build_loan_form()
        self._build_status()

    # ----- construction -------------------------------------------------

    def _build_window(self) -> None:
        x, y = self.opts.position
        self.root.title("Acme Loan Intake")
        self.root.geometry(f"{WIDTH}x{HEIGHT}+{x}+{y}")
        self.root.resizable(False, False)
        self.root.configure(background=BACKGROUND)
        base = tkfont.nametofont("TkDefaultFont").actual()
        self.heading_font = tkfont.Font(family=base["family"], size=14, weight="bold")

    def _label(self, parent: tk.Misc, text: str, x: int, y: int, ident: str, **kw: Any) -> tk.Label:
        w = tk.Label(parent, text=text, background=BACKGROUND, **kw)
        w.place(x=x, y=y)
        self.described[w] = ("label", text, ident)
        return w

    def _entry_row(self, label: str, row: int) -> tk.StringVar:
        y = ROW_Y[row]
        self._label(self.root, label, LABEL_X, y + 2, f"{label.lower()}_label")
        var = tk.StringVar(self.root)
        entry = tk.Entry(self.root, textvariable=var, background="white")
        entry.place(x=ENTRY_X, y=y, width=ENTRY_WIDTH)
        self.described[entry] = ("entry", label, label.lower())
        var.trace_add("write", lambda *_: self.schedule_publish())
        self.entries[label.lower()] = entry
        return var

    def _submit_button(self, text: str, command: Any) -> tk.Button:
        dx, dy = self.opts.submit_offset
        button = tk.Button(self.root, text=text, command=command, width=12)
        button.place(x=SUBMIT_X + dx, y=SUBMIT_Y + dy)
        if self.opts.disable_submit:
            button.configure(state="disabled")
        if self.opts.late_hover:
            self._hover_late(button, self.opts.late_hover)
        self.described[button] = ("button", text, "submit")
        return button

    def _hover_late(self, button: tk.Button, ms: int) -> None:
        normal = {
            "background": button.cget("background"),
            "activebackground": button.cget("background"),
            "activeforeground": button.cget("foreground"),
        }
        hovered = {"background": HOVER, "activebackground": HOVER, "activeforeground": "white"}
        button.configure(**normal)
        pending: list[str] = []

        def enter(_: object) -> None:
            pending.append(button.after(ms, lambda: button.configure(**hovered)))

        def leave(_: object) -> None:
            while pending:
                button.after_cancel(pending.pop())
            button.configure(**normal)

        # Without Tk's own button bindings, which redraw it at once as the pointer enters
        # (a browser draws nothing before its next frame); a click still presses it.
        button.bindtags((str(button), str(button.winfo_toplevel()), "all"))
        button.bind("<Enter>", enter)
        button.bind("<Leave>", leave)
        button.bind("<ButtonRelease-1>", lambda _: button.invoke())

    def _build_loan_form(self) -> None:
        self._label(self.root, "Acme Loan Intake", 20, 16, "heading", font=self.heading_font)
        self.entries: dict[str, tk.Entry] = {}
        self.vars = {f: self._entry_row(f.capitalize(), i) for i, f in enumerate(FIELDS)}
        for f, value in self.opts.prefill.items():
            if f in self.vars:
                self.vars[f].set(value)
        self.urgent = tk.BooleanVar(self.root, value=False)
        check = tk.Checkbutton(
            self.root,
            text="Urgent",
            variable=self.urgent,
            background=BACKGROUND,
            highlightbackground=BACKGROUND,
        )
        check.place(x=ENTRY_X - 4, y=URGENT_Y)
        self.described[check] = ("checkbox", "Urgent", "urgent")
        self.product = tk.StringVar(self.root, value=self.opts.prefill.get("product", ""))
        self._label(self.root, "Product", LABEL_X, PRODUCT_Y + 2, "product_label")
        for x, name in zip(RADIO_X, PRODUCTS, strict=True):
            # tristatevalue defaults to "", which would draw "no product yet" as a
            # half-set indicator on every radio.
            radio = tk.Radiobutton(
                self.root,
                text=name,
                value=name,
                variable=self.product,
                tristatevalue="-",
                background=BACKGROUND,
                highlightbackground=BACKGROUND,
            )
            radio.place(x=x - 4, y=PRODUCT_Y)
            self.described[radio] = ("radio", name, f"product_{name.lower()}")
        for var in (self.urgent, self.product):
            var.trace_add("write", lambda *_: self.schedule_publish())
        self.submit = self._submit_button("Submit", self.on_submit)

    def _build_closure_form(self) -> None:
        self._label(self.root, "Acme Account Closure", 20, 16, "heading", font=self.heading_font)
        self.entries = {}
        self.vars = {
            f: self._entry_row(f.capitalize(), i) for i, f in enumerate(("account", "reason"))
        }
        self.submit = self._submit_button("Close account", self.on_close_account)

    def _build_status(self) -> None:
        self.error = tk.Label(self.root, text="", foreground=ERROR_COLOR, background=BACKGROUND)
        self.error.place(x=LABEL_X, y=ERROR_Y)
        self.described[self.error] = ("label", "", "error")
        if self.opts.error_label:
            self.error.configure(text="Warning: server unreachable")
        self.status = tk.Label(
            self.root,
            text="Ready",
            anchor="w",
            relief="sunken",
            borderwidth=1,
            background=BACKGROUND,
        )
        counted = self.opts.count if self.opts.count in self.vars else None
        width = WIDTH - 8 - (COUNT_WIDTH + 4 if counted else 0)
        self.status.place(x=4, y=HEIGHT - 26, width=width, height=22)
        self.described[self.status] = ("label", "", "status")
        if counted is not None:
            counter = tk.Label(self.root, anchor="w", relief="sunken", borderwidth=1,
                               background=BACKGROUND)  # fmt: skip
            counter.place(x=WIDTH - 4 - COUNT_WIDTH, y=HEIGHT - 26, width=COUNT_WIDTH, height=22)
            self.described[counter] = ("label", "", "count")
            var = self.vars[counted]

            def recount(*_: object) -> None:
                text = var.get()
                counter.configure(text=f"{len(text.split())} words, {len(text)} characters")

            var.trace_add("write", recount)
            recount()
        if self.opts.minute_clock is not None:
            self.minute = tk.Label(self.root, text="", background=BACKGROUND)
            self.minute.place(x=WIDTH - 10, y=HEIGHT - 24, anchor="ne")
            self.described[self.minute] = ("label", "", "minute-clock")
            self._tick_minute()
        if self.opts.gauge is not None:
            self._build_gauge(self.opts.gauge)
        if self.opts.pointer_readout:
            self._build_readout()
        if self.opts.clock:
            self.clock = tk.Label(self.root, text="", background=BACKGROUND)
            self.clock.place(x=WIDTH - 16, y=20, anchor="ne")
            self.described[self.clock] = ("label", "", "clock")
            self._tick()

    def _build_gauge(self, start: int) -> None:
        """`--gauge`: jEdit's memory gauge, as it behaves: still while the app is idle."""
        gauge = tk.Label(self.root, text=f"{start}/388Mb", background=BACKGROUND)
        gauge.place(x=WIDTH - 10, y=HEIGHT - 24, anchor="ne")
        self.described[gauge] = ("label", "", "gauge")
        used = [start]
        pending: list[str] = []

        def show() -> None:
            pending.clear()
            gauge.configure(text=f"{used[0]}/388Mb")

        def worked(_event: tk.Event) -> None:
            used[0] += 2
            for job in pending:
                self.root.after_cancel(job)
            pending[:] = [self.root.after(GAUGE_DELAY_MS, show)]

        for sequence in ("<ButtonPress>", "<KeyPress>"):
            self.root.bind_all(sequence, worked, add="+")

    def _build_readout(self) -> None:
        """`--pointer-readout`: GIMP's status bar readout and rulers, as they behave."""
        readout = tk.Label(self.root, text="", background=BACKGROUND)
        readout.place(x=WIDTH - 10, y=HEIGHT - 24, anchor="ne")
        self.described[readout] = ("label", "", "pointer-readout")
        ruler = tk.Canvas(self.root, width=WIDTH, height=8, background="white",
                          highlightthickness=0)  # fmt: skip
        ruler.place(x=0, y=0)
        mark = ruler.create_line(0, 0, 0, 8, fill="black", width=2)

        def place(event: tk.Event) -> tuple[int, int]:
            return event.x_root - self.root.winfo_rootx(), event.y_root - self.root.winfo_rooty()

        def entered(event: tk.Event) -> None:
            x, y = place(event)
            readout.configure(text=f"{x}, {y}")

        def moved(event: tk.Event) -> None:
            x, y = place(event)
            readout.configure(text=f"{x}, {y}")
            ruler.coords(mark, x, 0, x, 8)

        self.root.bind("<Enter>", entered, add="+")
        self.root.bind("<Motion>", moved, add="+")

    def _tick(self) -> None:
        # One reading of the precise clock for both the text and the next tick: strftime
        # alone reads the kernel's coarse seconds, which lag by up to a timer tick, so
        # just after a second it can show the second before (and the clock skip one).
        now = time.time()
        self.clock.configure(text=time.strftime("%H:%M:%S", time.localtime(now)))
        self.schedule_publish()
        # Re-arm on the next wall-clock second so the display never lags behind.
        delay = 1000 - int(now * 1000) % 1000
        self.root.after(delay + 5, self._tick)

    def _tick_minute(self) -> None:
        shown = time.localtime(time.time() + self.opts.minute_clock)
        text = time.strftime("%I:%M %p", shown).lstrip("0")
        if self.minute.cget("text") != text:
            self.minute.configure(text=text)
            self.schedule_publish()
        self.root.after(500, self._tick_minute)

    # ----- dialogs ------------------------------------------------------

    def open_dialog(
        self, title: str, message: str, on_ok: Any, width: int = 320, height: int = 130
    ) -> tk.Toplevel:
        """A modal message box; without a window manager it must place itself."""
        self.root.update_idletasks()
        x = self.root.winfo_rootx() + (WIDTH - width) // 2
        y = self.root.winfo_rooty() + (HEIGHT - height) // 2
        if self.opts.dialog_at is not None:
            x, y = self.opts.dialog_at
        top = tk.Toplevel(self.root, borderwidth=2, relief="raised")
        top.title(title)
        top.geometry(f"{width}x{height}+{x}+{y}")
        top.resizable(False, False)
        top.transient(self.root)
        label = tk.Label(top, text=message, wraplength=width - 40)
        label.place(relx=0.5, y=35, anchor="center")
        self.described[label] = ("label", message, "message")

        def close() -> None:
            top.grab_release()
            top.destroy()
            self.dialogs.remove(top)
            on_ok()
            self.schedule_publish()

        ok = tk.Button(top, text="OK", width=8, command=close)
        ok.place(relx=0.5, y=height - 35, anchor="center")
        self.described[ok] = ("button", "OK", "ok")
        top.protocol("WM_DELETE_WINDOW", close)
        self.closers[top] = close
        self.dialogs.append(top)
        # A grab needs a viewable window, so wait until the server has mapped it.
        top.wait_visibility()
        top.grab_set()
        ok.focus_set()
        self.schedule_publish()
        return top

    def notice_draft_after_name(self) -> None:
        """Once the focus leaves the Name field with text in it, a small window over the
        form says the draft was saved."""
        entry = self.entries["name"]

        def left(_: object) -> None:
            if self.vars["name"].get() and not self.drafted:
                self.drafted = True
                self.open_draft_notice()

        self.drafted = False
        entry.bind("<FocusOut>", left, add="+")

    def open_draft_notice(self) -> None:
        x, y = self.opts.position
        top = tk.Toplevel(self.root, borderwidth=2, relief="raised", background="#e0ffe0")
        top.title("Draft")
        top.geometry(f"140x50+{x + 400}+{y + 330}")
        self.draft = top
        label = tk.Label(top, text="Draft saved", background="#e0ffe0")
        label.place(relx=0.5, rely=0.5, anchor="center")
        self.described[label] = ("label", "Draft saved", "draft")

    def open_mail_notice(self) -> None:
        top = tk.Toplevel(self.root, borderwidth=2, relief="raised", background="#ffffe0")
        top.title("New mail")
        top.geometry("220x70+1650+980")
        label = tk.Label(top, text="New mail", background="#ffffe0")
        label.place(relx=0.5, rely=0.5, anchor="center")
        self.described[label] = ("label", "New mail", "mail")

    # ----- actions ------------------------------------------------------

    def show_error(self, text: str) -> None:
        self.error.configure(text=text)
        self.schedule_publish()

    def validation_error(self) -> str | None:
        if not self.vars["name"].get().strip():
            return "Name is required"
        if parse_amount(self.vars["amount"].get()) is None:
            return "Amount must be a positive number"
        if not self.product.get():
            return "Choose a product"
        return None

    def on_submit(self) -> None:
        draft = getattr(self, "draft", None)
        if draft is not None:  # the draft is being filed: its notice goes
            draft.destroy()
            self.draft = None
        problem = self.validation_error()
        if problem:
            self.show_error(problem)
            return
        name = self.vars["name"].get().strip()
        record = {
            "name": name,
            "email": self.vars["email"].get().strip(),
            "amount": parse_amount(self.vars["amount"].get()),
            "urgent": bool(self.urgent.get()),
            "product": self.product.get(),
            "ts": now_iso(),
        }
        if not self.opts.fail_upload:  # else the screens look as usual until OK
            append_record(self.opts.out, record)
        self.show_error("")
        if self.opts.slow_submit:
            delay = round(self.opts.slow_submit * 1000)
            self.root.after(delay, self.submit_answered, name)
        else:
            self.submit_answered(name)

    def submit_answered(self, name: str) -> None:
        """What Submit shows once the record is saved: the status line, the confirmation."""
        if self.opts.echo:
            shown = self.vars[self.opts.echo].get().strip()
            self.status.configure(text=f"Saved {self.opts.echo} {shown}", font=ECHO_FONT)
        else:
            self.status.configure(text="Saved application for " + name)
        if self.opts.title_echo:
            self.root.title(f"Acme Loan Intake - {name}")
        done = self.upload_failed if self.opts.fail_upload else self.clear_form
        self.open_dialog("Confirmation", "Application saved", done)

    def on_close_account(self) -> None:
        if not self.vars["account"].get().strip():
            self.show_error("Account is required")
            return
        record = {
            "form": "closure",
            "account": self.vars["account"].get().strip(),
            "reason": self.vars["reason"].get().strip(),
            "ts": now_iso(),
        }
        append_record(self.opts.out, record)
        self.show_error("")
        self.open_dialog("Confirmation", "Account closure requested", self.clear_form)

    def upload_failed(self) -> None:
        self.clear_form()
        self.status.configure(text="Upload failed - claim not saved")

    def clear_form(self) -> None:
        for var in self.vars.values():
            var.set("")
        if self.opts.variant == "loan":
            self.urgent.set(False)
            self.product.set("")
        self.status.configure(text="Ready", font="TkDefaultFont")

    # ----- accessibility layout -------------------------------------------

    def describe_widget(self, w: tk.Widget) -> dict[str, Any]:
        role, label, ident = self.described[w]
        text: str = ""
        checked: bool | None = None
        if role == "entry":
            text = w.get()  # type: ignore[attr-defined]
        elif role == "checkbox":
            checked = bool(self.urgent.get())
            text = "1" if checked else "0"
        elif role == "radio":
            checked = self.product.get() == label
            text = label
        else:
            text = str(w.cget("text"))
            label = label or text
        item: dict[str, Any] = {
            "role": role,
            "label": label,
            "text": text,
            "state": str(w.cget("state")),
            "id": ident,
        }
        if checked is not None:
            item["checked"] = checked
        item.update(x=w.winfo_rootx(), y=w.winfo_rooty(), w=w.winfo_width(), h=w.winfo_height())
        return item

    def describe_window(self, top: tk.Misc, modal: bool) -> dict[str, Any]:
        widgets = [
            self.describe_widget(w)
            for w in self.described
            if w.winfo_toplevel() is top and w.winfo_ismapped()
        ]
        return {
            "title": top.wm_title(),
            "modal": modal,  # type: ignore[attr-defined]
            "x": top.winfo_rootx(),
            "y": top.winfo_rooty(),
            "w": top.winfo_width(),
            "h": top.winfo_height(),
            "widgets": widgets,
        }

    def snapshot(self) -> dict[str, Any]:
        for gone in [w for w in self.described if not w.winfo_exists()]:
            del self.described[gone]
        grabbed = self.root.grab_current()
        tops = [self.root] + [
            w
            for w in self.root.winfo_children()
            if isinstance(w, tk.Toplevel) and w.winfo_ismapped()
        ]
        # Later toplevels sit above earlier ones (no window manager restacks them).
        windows = [self.describe_window(t, modal=t is grabbed) for t in tops]
        return {"time": round(time.time(), 3), "input": self.last_input, "windows": windows}

    def _took_input(self, _event: tk.Event) -> None:
        self.last_input = time.time()

    def publish(self) -> None:
        self.publish_pending = False
        if self.opts.layout is None or not self.root.winfo_exists():
            return
        # A timer can fire before the geometry managers have mapped a new dialog's
        # children: lay them out first, or a modal is published with no buttons.
        self.root.update_idletasks()
        write_atomically(self.opts.layout, json.dumps(self.snapshot(), indent=1))

    def schedule_publish(self) -> None:
        # Coalesce bursts of changes (e.g. a typed word) into one rewrite.
        if self.opts.layout is not None and not self.publish_pending:
            self.publish_pending = True
            self.root.after(20, self.publish)

    def publish_periodically(self) -> None:
        self.publish()
        self.root.after(PUBLISH_INTERVAL_MS, self.publish_periodically)

    # ----- lifecycle ------------------------------------------------------

    def move_focus_after_first_click(self, target: tk.Entry) -> None:
        """Like a form whose script moves the focus on its own: keys typed after clicking
        another field land in `target`."""

        def clicked(event: tk.Event) -> None:
            if event.widget is not target:
                for entry in self.entries.values():
                    entry.unbind("<ButtonRelease-1>")
                self.root.after_idle(target.focus_force)

        for entry in self.entries.values():
            entry.bind("<ButtonRelease-1>", clicked, add="+")

    def start(self) -> None:
        self.root.update_idletasks()
        self.root.wait_visibility()
        if self.opts.focus and self.opts.focus in self.entries:
            # focus_set alone does not reach the X server while the pointer is
            # elsewhere (no window manager), so no focus ring would be drawn.
            self.entries[self.opts.focus].focus_force()
        if self.opts.refocus:
            self.move_focus_after_first_click(self.entries[self.opts.refocus])
        if self.opts.notice_elsewhere:
            self.open_mail_notice()
        if self.opts.draft_notice:
            self.notice_draft_after_name()
        if self.opts.popup_at_start:
            self.open_dialog("Notice", "Scheduled maintenance tonight", lambda: None)
        if self.opts.connecting:
            box = self.open_dialog("Connecting", "Connecting to the server...", lambda: None)
            self.root.after(round(self.opts.connecting * 1000), self.closers[box])
        self.root.update()
        if self.opts.layout is not None:
            self.publish_periodically()
        if self.opts.ready_file is not None:
            self.opts.ready_file.touch()


def keep_signals_responsive(root: tk.Tk) -> None:
    """With a threaded Tcl, mainloop blocks in C until a Tk event arrives, so Python
    signal handlers (SIGTERM) would wait for the next mouse move; a timer wakes it."""
    root.after(100, keep_signals_responsive, root)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    root = tk.Tk(className="LoanForm")
    app = LoanFormApp(root, opts)

    def stop(signum: int, frame: object) -> None:
        # Only ask the loop to end: destroying Tk from inside a signal handler is unsafe.
        root.quit()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    keep_signals_responsive(root)
    app.start()
    root.mainloop()
    if opts.layout is not None:
        # A closed app has no accessibility tree; a stale file would mislead agents.
        opts.layout.unlink(missing_ok=True)
    root.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
