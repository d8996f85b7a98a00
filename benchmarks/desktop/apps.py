"""The third-party apps of the real-desktop benchmark, each with a task, a way to start it
with a perturbation, and a way to read the record it submitted.

Every task starts with a click into the task window and ends with a click that submits;
its param (`name`) is typed into the first field. The agent gets the task as a plan of
absolute screen actions (what an agent reading the screenshot would click).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlencode
from xml.etree import ElementTree as ET

from benchmarks.desktop import ods
from benchmarks.desktop.desktop import PANEL_HEIGHT, Desktop, Geometry, terminate
from benchmarks.desktop.world import HOME, MOVE_BY, World

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"  # PyQt5 comes from Debian (python3-pyqt5)

Plan = list[dict[str, object]]
_T = TypeVar("_T")


@dataclass
class Variant:
    """How an app is started for one run: the perturbations it must show itself."""

    prefill: str = ""
    error: bool = False
    other_page: bool = False
    autofill: bool = False
    dialog_after_ms: int = 0
    own_window: str = ""
    """A window of the app's own open at start (one of `App.own_windows`); "" for none."""


@dataclass
class App:
    """One app under test. Subclasses fill in start/plan/result."""

    desktop: Desktop
    work: Path
    key: str = ""
    title: str = ""
    value: str = "Ada"
    other_value: str = "Bartholomew"
    prefill_other: str = "Mallory"
    native: frozenset[str] = frozenset()
    """Variant fields the app can show itself (the others are applied from outside)."""
    own_windows: frozenset[str] = frozenset()
    """The kinds of window of its own the app can open at start (`Variant.own_window`):
    "dialog" (transient for the task window), "normal", "override" (override-redirect),
    "tooltip"; each found by `own_title`."""
    programs: tuple[str, ...] = ()
    """Programs only this benchmark installs (benchmarks/desktop/setup), checked first."""
    proc: subprocess.Popen[bytes] | None = None
    wid: int = 0
    extra: list[subprocess.Popen[bytes]] = field(default_factory=list)
    world: World = field(default_factory=World)
    """Where the window goes and how the toolkits look (the GTK theme) this run."""
    home: tuple[int, int] = HOME
    """Where the task window's client area was put at the start of this run."""

    # ----- lifecycle -------------------------------------------------------------------

    def start(self, variant: Variant | None = None) -> None:
        self.stop()
        self.work.mkdir(parents=True, exist_ok=True)
        variant = variant or Variant()
        self.reset_result()
        saved = os.environ.get("GTK_THEME")
        if self.world.gtk_theme:
            os.environ["GTK_THEME"] = self.world.gtk_theme
        try:
            self.proc = self.launch(variant)
        finally:
            if saved is None:
                os.environ.pop("GTK_THEME", None)
            else:
                os.environ["GTK_THEME"] = saved
        self.wid = self.desktop.wait_window(self.title, timeout=60)
        self.place()
        self.desktop.activate(self.wid)
        self.desktop.settle()
        if variant.prefill and "prefill" not in self.native:
            self.type_into_first_field(variant.prefill)

    def has_focus(self) -> bool:
        """Whether the app's window holds the X input focus (as xdotool tells the client
        window that has it)."""
        out = subprocess.run(["xdotool", "getwindowfocus"], capture_output=True, text=True)
        return out.stdout.strip() == str(self.wid)

    def placed(self, window: Geometry) -> tuple[int, int]:
        """The world's window position, pulled in where the window (moved on by a
        scenario) would leave the screen or reach under the panel."""
        width, height = self.desktop.size
        x = min(self.world.home[0], width - window.w - MOVE_BY - 8)
        y = min(self.world.home[1], height - PANEL_HEIGHT - window.h - 8)
        return (max(x, 8), max(y, 40))

    def place(self) -> None:
        """Put the task window where this run's world has it (`placed`)."""
        self.home = self.placed(self.geometry())
        self.desktop.move(self.wid, *self.home)

    def resize(self, size: tuple[int, int]) -> None:
        """The task window un-maximized and its client area `size`, once the app has
        settled (an app that opens maximized, or bigger than the benchmark moves)."""
        wid = str(self.wid)
        self.desktop.settle()
        subprocess.run(
            ["wmctrl", "-i", "-r", wid, "-b", "remove,maximized_vert,maximized_horz"],
            check=True,
        )
        deadline = time.monotonic() + 10
        while (g := self.geometry()).w != size[0] or g.h != size[1]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.key}'s window stays {g.w}x{g.h}")
            subprocess.run(["xdotool", "windowsize", wid, *map(str, size)], check=True)
            time.sleep(0.3)

    def stop(self) -> None:
        for proc in [self.proc, *self.extra]:
            if proc is not None:
                terminate(proc)
        self.proc, self.extra, self.wid = None, [], 0

    def close(self) -> None:
        """Stop the app and anything kept between runs."""
        self.stop()

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        raise NotImplementedError

    def supports(self, needed: set[str]) -> bool:
        return needed <= self.native

    def own_title(self, kind: str) -> str:
        """The title (a pattern) of the window of its own of that kind the app opens."""
        raise NotImplementedError

    # ----- the task --------------------------------------------------------------------

    def geometry(self) -> Geometry:
        return self.desktop.geometry(self.wid)

    def at(self, dx: int, dy: int) -> tuple[int, int]:
        g = self.geometry()
        return (g.x + dx, g.y + dy)

    def first_field(self) -> tuple[int, int]:
        raise NotImplementedError

    def plan(self, value: str) -> Plan:
        raise NotImplementedError

    def expected(self, value: str) -> str:
        return f"{value}|Paris"

    def type_into_first_field(self, text: str) -> None:
        x, y = self.first_field()
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True)
        subprocess.run(["xdotool", "type", "--delay", "30", text], check=True)
        self.desktop.settle()

    # ----- the result ------------------------------------------------------------------

    def reset_result(self) -> None:
        (self.work / "out.txt").unlink(missing_ok=True)

    def result(self, exit_code: int) -> str | None:
        """The record submitted, or None when nothing was."""
        out = self.work / "out.txt"
        deadline = time.monotonic() + 2.0
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not out.exists():
            return None
        lines = [line for line in out.read_text().splitlines() if line.strip()]
        return " / ".join(lines) if lines else None


def _click(x: int, y: int) -> dict[str, object]:
    return {"op": "click", "x": x, "y": y}


def _write(text: str) -> dict[str, object]:
    return {"op": "write", "text": text}


def _person(
    name: tuple[int, int], value: str, city: tuple[int, int], save: tuple[int, int]
) -> Plan:
    """The person form's task: `value` into Name, "Paris" into City, Save."""
    return [_click(*name), _write(value), _click(*city), _write("Paris"), _click(*save)]


# ----- GTK 3: zenity --forms -----------------------------------------------------------


@dataclass
class Zenity(App):
    key: str = "gtk"
    title: str = "^Person$"
    native: frozenset[str] = frozenset({"error", "other_page"})
    _stdout: object = None

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        text = "Delete a person" if variant.other_page else "New person"
        if variant.error:
            text = "<span foreground='#c01010'><b>Error: server unreachable</b></span>"
        out = open(self.work / "zenity.out", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [
                "zenity",
                "--forms",
                "--title",
                "Person",
                "--text",
                text,
                "--width",
                "360",
                "--add-entry",
                "Name",
                "--add-entry",
                "City",
            ],
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
        out.close()
        self._other = variant.other_page
        return proc

    def reset_result(self) -> None:
        (self.work / "zenity.out").unlink(missing_ok=True)

    def first_field(self) -> tuple[int, int]:
        return self.at(153, 53)

    def plan(self, value: str) -> Plan:
        return _person(self.at(153, 53), value, self.at(153, 93), self.at(309, 136))

    def result(self, exit_code: int) -> str | None:
        if self.proc is not None:
            try:  # OK closes zenity; wait for it to write the record
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                return None
        text = (self.work / "zenity.out").read_text().strip()
        if not text:
            return None
        return ("DELETE " if self._other else "") + text


# ----- Qt 5: a PyQt5 form (Debian's python3-pyqt5) -------------------------------------


@dataclass
class PersonForm(App):
    """A form laid out as assets/qt_form.py lays it out (Name, City, Save at fixed places
    in a 400x230 window), whatever the toolkit; its own windows titled "KIND (TOOLKIT)"."""

    toolkit: str = ""
    script: str = ""
    """The form's script in assets/, run with Debian's Python; it takes the variant
    fields of `native` as flags."""

    def own_title(self, kind: str) -> str:
        return f"^{kind} \\({self.toolkit}\\)$"

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        argv = [SYSTEM_PYTHON, str(HERE / "assets" / self.script)]
        argv += ["--out", str(self.work / "out.txt")]
        if variant.prefill:
            argv += ["--prefill", variant.prefill]
        if variant.error:
            argv.append("--error")
        if variant.other_page:
            argv += ["--variant", "delete"]
        if variant.autofill:
            argv.append("--autofill")
        if variant.dialog_after_ms and "dialog_after_ms" in self.native:
            argv += ["--dialog-after", str(variant.dialog_after_ms)]
        if variant.own_window:
            argv += ["--own-window", variant.own_window]
        return subprocess.Popen(argv, stderr=subprocess.DEVNULL)

    def first_field(self) -> tuple[int, int]:
        return self.at(230, 64)

    def plan(self, value: str) -> Plan:
        return _person(self.at(230, 64), value, self.at(230, 109), self.at(320, 196))


@dataclass
class QtForm(PersonForm):
    key: str = "qt"
    toolkit: str = "Qt"
    title: str = "^Person \\(Qt\\)$"
    native: frozenset[str] = frozenset(
        {"prefill", "error", "other_page", "autofill", "dialog_after_ms"}
    )
    own_windows: frozenset[str] = frozenset({"dialog", "normal", "override", "tooltip"})
    script: str = "qt_form.py"


@dataclass
class Gtk4Form(PersonForm):
    """The same form in GTK 4 (assets/gtk4_form.py, PyGObject from Debian): GTK 4 draws
    its widgets with its own renderer and places no window itself on X11."""

    key: str = "gtk4"
    toolkit: str = "GTK4"
    title: str = "^Person \\(GTK4\\)$"
    native: frozenset[str] = frozenset({"prefill", "error", "other_page", "autofill"})
    own_windows: frozenset[str] = frozenset({"dialog", "normal"})
    script: str = "gtk4_form.py"


# ----- Chromium on a local page --------------------------------------------------------


NOTES_PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>notes (web)</title></head>"
    b"<body style='margin:8px;font:14px sans-serif;background:#e8e0f0'>Draft saved.</body></html>"
)


class _Records(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        page = (HERE / "assets" / "form.html").read_bytes()
        if self.path.startswith("/notes"):  # the window the page opens of its own
            page = NOTES_PAGE
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        out: Path = self.server.out  # type: ignore[attr-defined]
        with out.open("a") as f:
            f.write(body + "\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Chromium(App):
    key: str = "chromium"
    title: str = "Person \\(web\\)"
    native: frozenset[str] = frozenset(
        {"prefill", "error", "other_page", "autofill", "dialog_after_ms"}
    )
    own_windows: frozenset[str] = frozenset({"normal"})
    """A popup window the page opens (`window.open`) at load."""
    server: ThreadingHTTPServer | None = None

    def url(self, variant: Variant) -> str:
        """The page with the variant's perturbations, from the record server (started once)."""
        if self.server is None:
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Records)
            self.server.out = self.work / "out.txt"  # type: ignore[attr-defined]
            threading.Thread(target=self.server.serve_forever, daemon=True).start()
        query: dict[str, str] = {}
        if variant.prefill:
            query["prefill"] = variant.prefill
        if variant.error:
            query["error"] = "1"
        if variant.other_page:
            query["variant"] = "delete"
        if variant.autofill:
            query["autofill"] = "1"
        if variant.dialog_after_ms:
            query["dialog_after"] = str(variant.dialog_after_ms)
        if variant.own_window:
            query["own"] = variant.own_window
        return f"http://127.0.0.1:{self.server.server_address[1]}/form?{urlencode(query)}"

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        url = self.url(variant)
        profile = tempfile.mkdtemp(prefix="profile-", dir=self.work)
        self._profile = profile
        return subprocess.Popen(
            [
                shutil.which("chromium") or "chromium",
                "--no-sandbox",
                f"--user-data-dir={profile}",
                "--disable-background-networking",
                "--no-first-run",
                "--disable-component-update",
                "--disable-sync",
                "--disable-gpu",
                "--force-device-scale-factor=1",
                "--disable-features=Translate,AutofillServerCommunication",
                "--password-store=basic",
                "--test-type",
                "--window-size=400,260",
                *(["--disable-popup-blocking"] if variant.own_window else []),
                f"--app={url}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def stop(self) -> None:
        super().stop()
        profile = getattr(self, "_profile", None)
        if profile:
            shutil.rmtree(profile, ignore_errors=True)

    def close(self) -> None:
        self.stop()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def first_field(self) -> tuple[int, int]:
        return self.at(230, 64)

    def own_title(self, kind: str) -> str:
        return "^notes \\(web\\)"

    def plan(self, value: str) -> Plan:
        return [
            _click(*self.at(230, 64)),
            _write(value),
            _click(*self.at(230, 109)),
            _write("Paris"),
            _click(*self.at(320, 196)),
        ]


# ----- Firefox on the same page --------------------------------------------------------

FIREFOX_PREFS = {
    # no first-run, welcome, what's-new, default-browser or privacy-notice pages
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "startup.homepage_welcome_url": "",
    "startup.homepage_welcome_url.additional": "",
    "browser.startup.firstrunSkipsHomepage": True,
    "trailhead.firstrun.didSeeAboutWelcome": True,
    "datareporting.policy.dataSubmissionPolicyBypassNotification": True,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "browser.uitour.enabled": False,
    "browser.tabs.warnOnClose": False,
    # no session restore, no crash reporter, no safe-mode prompt after a killed run
    "browser.sessionstore.resume_from_crash": False,
    "browser.sessionstore.max_resumed_crashes": -1,
    "toolkit.startup.max_resumed_crashes": -1,
    "browser.crashReports.unsubmittedCheck.enabled": False,
    "browser.tabs.crashReporting.sendReport": False,
    # no network of its own: updates, telemetry, studies, safe browsing, captive portal
    "app.update.enabled": False,
    "app.update.auto": False,
    "app.normandy.enabled": False,
    "app.shield.optoutstudies.enabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "browser.search.update": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.newtabpage.enabled": False,
    "browser.newtabpage.activity-stream.feeds.telemetry": False,
    "browser.ping-centre.telemetry": False,
    "media.gmp-manager.updateEnabled": False,
    "extensions.pocket.enabled": False,
    "identity.fxaccounts.enabled": False,
    # the page alone, like Chromium's app window: no tabs or toolbars (userChrome.css),
    # the window manager's title bar, no form history, no translation or password offers
    "toolkit.legacyUserProfileCustomizations.stylesheets": True,
    "browser.tabs.inTitlebar": 0,
    "browser.formfill.enable": False,
    "signon.rememberSignons": False,
    "browser.translations.enable": False,
    "browser.translations.automaticallyPopup": False,
    "layout.css.devPixelsPerPx": "1.0",
    "ui.prefersReducedMotion": 1,
    "general.smoothScroll": False,
    "gfx.webrender.software": True,
}

USER_CHROME = """\
#navigator-toolbox { visibility: collapse !important; }
"""


@dataclass
class Firefox(Chromium):
    """Firefox ESR on the page Chromium shows, with a fresh profile per run; its tabs and
    toolbars are hidden (userChrome.css), so the page fills the client area as in
    Chromium's app window, under the window manager's title bar."""

    key: str = "firefox"
    programs: tuple[str, ...] = ("firefox-esr",)
    own_windows: frozenset[str] = frozenset()
    title: str = "^Person \\(web\\) .* Mozilla Firefox$"

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        url = self.url(variant)
        profile = Path(tempfile.mkdtemp(prefix="profile-", dir=self.work))
        self._profile = str(profile)
        (profile / "user.js").write_text(
            "".join(
                f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in FIREFOX_PREFS.items()
            )
        )
        (profile / "chrome").mkdir()
        (profile / "chrome" / "userChrome.css").write_text(USER_CHROME)
        env = {
            **os.environ,
            "MOZ_CRASHREPORTER_DISABLE": "1",
            "MOZ_CRASHREPORTER": "0",
            "MOZ_DISABLE_AUTO_SAFE_MODE": "1",
            "MOZ_ENABLE_WAYLAND": "0",
        }
        return subprocess.Popen(
            [
                shutil.which("firefox-esr") or "firefox-esr",
                "--no-remote",
                "--new-instance",
                "--profile",
                str(profile),
                "--width",
                "400",
                "--height",
                "260",
                url,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


# ----- Xaw: xcalc ----------------------------------------------------------------------


@dataclass
class XCalc(App):
    key: str = "xaw"
    title: str = "^Calculator$"
    value: str = "408"
    other_value: str = "1234"
    prefill_other: str = "17"
    native: frozenset[str] = frozenset()

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["xcalc"], stderr=subprocess.DEVNULL)

    def display(self) -> tuple[int, int]:
        return self.at(self.geometry().w // 2, 22)

    def first_field(self) -> tuple[int, int]:
        return self.display()

    def type_into_first_field(self, text: str) -> None:
        x, y = self.display()
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True)
        subprocess.run(["xdotool", "type", "--delay", "60", text], check=True)
        self.desktop.settle()

    def plan(self, value: str) -> Plan:
        return [
            _click(*self.display()),
            _write(value),
            {"op": "press", "key": "asterisk"},
            {"op": "press", "key": "2"},
            {"op": "press", "key": "Return"},
        ]

    def expected(self, value: str) -> str:
        return str(int(value) * 2)

    def result(self, exit_code: int) -> str | None:
        if exit_code != 0:  # only the last key (=) submits: a stopped replay left none
            return None
        x, y = self.display()
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True)
        time.sleep(0.3)
        out = subprocess.run(
            ["xclip", "-o", "-selection", "primary"], capture_output=True, text=True, timeout=5
        )
        text = out.stdout.strip()
        return text or None


# ----- Tk: the example loan form -------------------------------------------------------


@dataclass
class TkLoan(App):
    key: str = "tk"
    title: str = "^Acme Loan Intake$"
    value: str = "Ada Lovelace"
    other_value: str = "Grace Hopper"
    native: frozenset[str] = frozenset({"prefill", "error", "other_page"})
    own_windows: frozenset[str] = frozenset({"dialog", "normal"})
    """The form's modal "Notice" (transient) and its "New mail" window."""

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        argv = [
            sys.executable,
            str(REPO / "examples" / "loan_form.py"),
            "--out",
            str(self.work / "records.jsonl"),
            "--layout",
            str(self.work / "layout.json"),
            "--position",
            f"{self.world.home[0]},{self.world.home[1]}",
        ]
        if variant.prefill:
            argv += ["--prefill", f"name={variant.prefill}"]
        if variant.error:
            argv.append("--error-label")
        if variant.other_page:
            argv += ["--variant", "other"]
        if variant.own_window:
            argv.append(
                {"dialog": "--popup-at-start", "normal": "--notice-elsewhere"}[variant.own_window]
            )
        return subprocess.Popen(argv, stderr=subprocess.DEVNULL)

    def own_title(self, kind: str) -> str:
        return {"dialog": "^Notice$", "normal": "^New mail$"}[kind]

    def reset_result(self) -> None:
        (self.work / "records.jsonl").unlink(missing_ok=True)

    def widget(self, label: str) -> tuple[int, int]:
        layout = json.loads((self.work / "layout.json").read_text())
        # by label, the last widget wins (an entry after its caption), as examples/world.py
        widgets = {w["label"]: w for w in layout["windows"][0]["widgets"]}
        w = widgets[label]
        return (w["x"] + w["w"] // 2, w["y"] + w["h"] // 2)

    def first_field(self) -> tuple[int, int]:
        return self._fresh("Name")

    def _fresh(self, label: str) -> tuple[int, int]:
        deadline = time.monotonic() + 10
        while True:  # the layout is republished after the window manager placed it
            try:
                layout = json.loads((self.work / "layout.json").read_text())
                g = self.geometry()
                window = layout["windows"][0]
                if (window["x"], window["y"]) == (g.x, g.y):
                    return self.widget(label)
            except (OSError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {label} in the loan form's layout")
            time.sleep(0.1)

    def plan(self, value: str) -> Plan:
        return [
            _click(*self._fresh("Name")),
            _write(value),
            _click(*self._fresh("Email")),
            _write("ada@example.com"),
            _click(*self._fresh("Amount")),
            _write("1200"),
            _click(*self._fresh("Auto")),
            _click(*self._fresh("Submit")),
        ]

    def expected(self, value: str) -> str:
        return f"{value}|ada@example.com|1200"

    def result(self, exit_code: int) -> str | None:
        out = self.work / "records.jsonl"
        deadline = time.monotonic() + 2.0
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not out.exists():
            return None
        rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        return (
            " / ".join(f"{r.get('name')}|{r.get('email')}|{r.get('amount')}" for r in rows) or None
        )


# ----- a Windows app under Wine: notepad editing a file -------------------------------


@dataclass
class NoteEditor(App):
    """A text editor with a file (note.txt): click into its text (`text_at`, from the
    window's corner), type the name, a new line and the city, save (Ctrl+S); the record
    is the saved file's lines (read as `encoding`)."""

    native: frozenset[str] = frozenset()
    text_at: tuple[int, int] = (200, 120)
    encoding: str = "utf-8"

    @property
    def note(self) -> Path:
        return self.work / "note.txt"

    def reset_result(self) -> None:
        self.note.write_text("")

    def first_field(self) -> tuple[int, int]:
        return self.at(*self.text_at)

    def plan(self, value: str) -> Plan:
        return [
            _click(*self.first_field()),
            _write(value),
            {"op": "press", "key": "Return"},
            _write("Paris"),
            {"op": "hotkey", "keys": ["ctrl", "s"]},
        ]

    def result(self, exit_code: int) -> str | None:
        time.sleep(0.5)  # the editor writes the file when it handles the key
        text = self.note.read_text(encoding=self.encoding)
        return "|".join(line for line in text.splitlines() if line) or None


@dataclass
class WineNotepad(NoteEditor):
    """Wine's notepad (`NoteEditor`'s task)."""

    key: str = "wine"
    title: str = "^note.txt - Notepad$"
    encoding: str = "latin-1"
    server: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        prefix = self.work.parent / "wineprefix"
        env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all"}
        if not (prefix / "system.reg").exists():  # once per benchmark: about 12 s
            subprocess.run(["wineboot", "-i"], env=env, capture_output=True, timeout=300)
        return env

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        env = self.env()
        # One wineserver for the whole benchmark: a server started afresh for each run
        # is still starting Wine's own processes when notepad maps its window, and the
        # window then often does not take the focus a click gives it (seen on IceWM).
        if self.server is None or self.server.poll() is not None:
            self.server = subprocess.Popen(
                ["wineserver", "--foreground", "--persistent"], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        path = "Z:" + str(self.note).replace("/", "\\")
        return subprocess.Popen(
            ["wine", "notepad", path], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def start(self, variant: Variant | None = None) -> None:
        super().start(variant)
        self.take_focus()

    def take_focus(self, timeout: float = 20.0) -> None:
        """Give the window the X input focus as a user would: by clicking its title bar
        until it holds it. Wine's windows take the focus themselves when the window
        manager offers it (WM_TAKE_FOCUS), and may ignore an offer while Wine is busy."""
        deadline = time.monotonic() + timeout
        while not self.has_focus():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.key}: the window never took the input focus")
            g = self.geometry()
            title_bar = (str(g.x + g.w // 2), str(g.y - 10))
            subprocess.run(["xdotool", "mousemove", *title_bar, "click", "1"])
            time.sleep(0.5)
        self.desktop.settle()

    def stop(self) -> None:
        super().stop()
        # notepad's own process; Wine's server and services stay for the next run
        subprocess.run(["wine", "taskkill", "/f", "/im", "notepad.exe"], env=self.env(),
                       capture_output=True, timeout=30)  # fmt: skip

    def close(self) -> None:
        super().close()
        subprocess.run(["wineserver", "-k"], env=self.env(), capture_output=True, timeout=30)
        if self.server is not None:
            terminate(self.server)
            self.server = None


@dataclass
class JEdit(NoteEditor):
    """jEdit (Java Swing, from Debian) (`NoteEditor`'s task). Its status bar keeps a
    memory gauge ("197/388MB") that moves while the app works, and a clock."""

    key: str = "jedit"
    title: str = "^jEdit - note.txt$"
    programs: tuple[str, ...] = ("jedit",)
    text_at: tuple[int, int] = (300, 90)

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        settings = self.work / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        # No welcome window or tip of the day: the task's window is the only one.
        (settings / "properties").write_text("firstTime=false\ntip.show=false\n")
        argv = ["jedit", f"-settings={settings}", "-nosplash", "-noserver", str(self.note)]
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self, variant: Variant | None = None) -> None:
        super().start(variant)
        self.resize((760, 540))
        self.place()


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _expose(g: Geometry) -> None:
    """Have the window under `g` (and its title bar) draw itself again, all of it: a
    window covering it is mapped and destroyed (what `xrefresh` does). Calc, shrunk from
    maximized, sometimes keeps its menu bar as painted at the full width (a gradient
    spread over 1280 px): a recording or a replay then saw another menu bar."""
    from Xlib import X, display

    conn = display.Display()
    try:
        screen = conn.screen()
        cover = screen.root.create_window(
            g.x, g.y - 40, g.w, g.h + 40, 0, screen.root_depth, X.InputOutput,
            X.CopyFromParent, override_redirect=True, background_pixel=screen.black_pixel,
        )  # fmt: skip
        cover.map()
        conn.sync()
        time.sleep(0.05)
        cover.destroy()
        conn.sync()
    finally:
        conn.close()


# ----- a spreadsheet: LibreOffice Calc on a document ------------------------------------

OFFICE_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse">\
<value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" \
oor:op="fuse"><value>{version}</value></prop></item>
</oor:items>
"""
"""A user profile past its first start: no tip of the day, no "running this version for
the first time" bar; otherwise as installed."""


@dataclass
class LibreOffice(App):
    """A LibreOffice app on one document (`document`), with a fresh user profile per start,
    its window un-maximized to `size`; the record read from the saved document."""

    size: tuple[int, int] = (760, 480)
    _variant: Variant = field(default_factory=Variant)
    _version: str = ""
    _written: bytes = b""
    """The document as written for this run: a file still equal to it was not saved."""

    @property
    def document(self) -> Path:
        raise NotImplementedError

    def write_document(self, variant: Variant) -> None:
        raise NotImplementedError

    def profile(self) -> Path:
        profile = self.work / "lo-profile"
        settings = profile / "user" / "registrymodifications.xcu"
        # Written before every start: LibreOffice saves its toolbars' state there on exit,
        # and a later start then shows other toolbars (Undo and Redo appear on the third).
        settings.parent.mkdir(parents=True, exist_ok=True)
        if not self._version:
            out = subprocess.run([self.programs[0], "--version"], capture_output=True, text=True)
            found = re.search(r"(\d+\.\d+)\.", out.stdout)
            self._version = found.group(1) if found else "99.9"
        settings.write_text(OFFICE_PROFILE.format(version=self._version))
        return profile

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        self._variant = variant
        self.document.with_name(f".~lock.{self.document.name}#").unlink(missing_ok=True)
        self.write_document(variant)
        self._written = self.document.read_bytes()
        return subprocess.Popen(
            [self.programs[0], "--norestore", "--nologo",
             f"-env:UserInstallation=file://{self.profile()}", str(self.document)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    def place(self) -> None:
        # LibreOffice opens maximized (its profile is reset before each start):
        # un-maximized and sized, for the benchmark moves the window.
        self.resize(self.size)
        super().place()
        _expose(self.geometry())

    def stop(self) -> None:
        if self.proc is not None:
            # localc is a shell script; the office process outlives it with its window (a
            # next start would find that window, or hand its document to that process):
            # the whole session is stopped, and waited for.
            group = self.proc.pid
            for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, sig)
                deadline = time.monotonic() + wait
                while _alive(group) and time.monotonic() < deadline:
                    self.proc.poll()
                    time.sleep(0.1)
                if not _alive(group):
                    break
        super().stop()

    def reset_result(self) -> None:
        self._written = b""

    def saved(self, exit_code: int, read: Callable[[Path], _T]) -> _T | None:
        """The saved document as `read` parses it; None when it was not saved."""
        deadline = time.monotonic() + (6.0 if exit_code == 0 else 2.0)
        while True:
            saved = self.document.read_bytes() if self.document.exists() else b""
            if saved and saved != self._written:
                try:  # written in place: complete once it parses
                    return read(self.document)
                except (ET.ParseError, ValueError):
                    pass
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)


@dataclass
class Calc(LibreOffice):
    """LibreOffice Calc on a flat ODS document with a header row: click A2, type the name,
    Tab, the salary, Tab, the city, save (Ctrl+S); the record is row 2 of the saved file.

    Prefill puts text in A2 (typing into a cell replaces it: a saved row that lost the
    prefilled text says so); the error text is a red cell below the task; the other page
    is the sheet "Delete" whose header asks for the person to delete."""

    key: str = "calc"
    title: str = "^people.fods - LibreOffice Calc$"
    programs: tuple[str, ...] = ("localc", "wmctrl")
    value: str = "Anna"
    other_value: str = "Hannah"
    native: frozenset[str] = frozenset({"prefill", "error", "other_page"})
    salary: str = "5000"

    @property
    def document(self) -> Path:
        return self.work / "people.fods"

    def write_document(self, variant: Variant) -> None:
        header = "Delete: name" if variant.other_page else "Name"
        rows: list[list[ods.Cell]] = [
            [(header, "head"), ("Salary", "head"), ("City", "head")],
            [(variant.prefill, "")],
            [],
            [("Error: server unreachable", "error")] if variant.error else [],
        ]
        ods.write(self.document, "Delete" if variant.other_page else "People", rows)

    def first_field(self) -> tuple[int, int]:
        return self.at(80, 149)  # A2

    def plan(self, value: str) -> Plan:
        return [
            _click(*self.first_field()),
            _write(value),
            {"op": "press", "key": "Tab"},
            _write(self.salary),
            {"op": "press", "key": "Tab"},
            _write("Paris"),
            {"op": "hotkey", "keys": ["ctrl", "s"]},
        ]

    def expected(self, value: str) -> str:
        return f"{value}|{self.salary}|Paris"

    def result(self, exit_code: int) -> str | None:
        """Row 2 of the saved document; None when it was not saved."""
        table = self.saved(exit_code, ods.rows)
        if table is None:
            return None
        row = (table[1] if len(table) > 1 else [])[:3]
        while row and not row[-1]:
            row = row[:-1]
        record = "|".join(row)
        prefill = self._variant.prefill
        if prefill and (row[:1] or [""])[0] != prefill:
            record += f" (replaced {prefill!r})"
        return ("DELETE " if self._variant.other_page else "") + record


# ----- Java: a Swing form -------------------------------------------------------------


@dataclass
class SwingForm(PersonForm):
    """The Qt form's task in Java Swing (assets/SwingForm.java, compiled into the work
    folder once): Name, City, Save; its own modal dialog or second window at start."""

    key: str = "java"
    toolkit: str = "Java"
    title: str = "^Person \\(Java\\)$"
    native: frozenset[str] = frozenset({"prefill"})
    own_windows: frozenset[str] = frozenset({"dialog", "normal"})
    programs: tuple[str, ...] = ("java", "javac")

    def launch(self, variant: Variant) -> subprocess.Popen[bytes]:
        classes = self.work / "classes"
        if not (classes / "SwingForm.class").exists():
            source = HERE / "assets" / "SwingForm.java"
            subprocess.run(["javac", "-d", str(classes), str(source)], check=True, timeout=120)
        argv = ["java", "-cp", str(classes), "SwingForm", "--out", str(self.work / "out.txt")]
        if variant.prefill:
            argv += ["--prefill", variant.prefill]
        if variant.own_window:
            argv += ["--own-window", variant.own_window]
        return subprocess.Popen(argv, stderr=subprocess.DEVNULL)


FORMS: dict[str, type[App]] = {
    "gtk": Zenity,
    "qt": QtForm,
    "gtk4": Gtk4Form,
    "chromium": Chromium,
    "firefox": Firefox,
    "xaw": XCalc,
    "tk": TkLoan,
    "wine": WineNotepad,
    "calc": Calc,
    "java": SwingForm,
    "jedit": JEdit,
}
