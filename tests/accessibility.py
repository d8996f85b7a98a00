"""Accessibility on a test display: a session bus and the AT-SPI bus, and third-party apps
that expose their fields there (GTK 3 zenity, Qt 5 through Debian's PyQt5, Chromium).

An app registers its accessible tree when it starts, so the bus comes first. What each
app needed here besides the bus: GTK 3 nothing; Qt 5 `QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1`;
Chromium `--force-renderer-accessibility` (the page's content) and `ACCESSIBILITY_ENABLED=1`
(the tree at all). The session's `org.a11y.Status.IsEnabled` set to true, as a desktop
does when a screen reader runs, stands for either variable, but not for Chromium's flag:
Chromium 156 started after it (or `ScreenReaderEnabled`) exposed no page content.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jeepney import HeaderFields, MessageType, message_bus, new_error, new_method_return
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from tests.desktop import need, wait_until, x

LAUNCHER = Path("/usr/libexec/at-spi-bus-launcher")
"""at-spi2-core's launcher of the accessibility bus (Debian's path)."""
A11Y_BUS = ["dbus-send", "--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus"]

QT_FORM = r"""
import sys
from PyQt5.QtWidgets import QApplication, QLabel, QLineEdit, QVBoxLayout, QWidget
app = QApplication(sys.argv)
window = QWidget()
window.setWindowTitle(sys.argv[1])
window.setGeometry(int(sys.argv[2]), int(sys.argv[3]), 360, 110)
layout = QVBoxLayout(window)
layout.addWidget(QLabel("Name"))
entry = QLineEdit()
layout.addWidget(entry)
window.show()
entry.setFocus()
sys.exit(app.exec_())
"""


def missing(what: str) -> None:
    """Skip the test for want of `what` (fail under MM_REQUIRE_XVFB, as `need` does)."""
    if os.environ.get("MM_REQUIRE_XVFB"):
        pytest.fail(f"{what} required but not installed (scripts/setup)")
    pytest.skip(f"{what} not installed (scripts/setup installs it)")


class AccessibilityBus:
    """A session bus (`dbus-launch`) and the accessibility bus (`at-spi-bus-launcher
    --launch-immediately`) for `display`; `env` is the environment apps start with.
    DBUS_SESSION_BUS_ADDRESS is set in os.environ while it runs (restored on exit)."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.env: dict[str, str] = {}
        self.dbus_pid: int | None = None
        self.launcher: subprocess.Popen[bytes] | None = None
        self._saved: str | None = None

    def __enter__(self) -> AccessibilityBus:
        need("dbus-launch", "dbus-send")
        if not LAUNCHER.exists():
            missing(f"{LAUNCHER} (at-spi2-core)")
        env = {**os.environ, "DISPLAY": self.display}
        out = subprocess.run(
            ["dbus-launch", "--sh-syntax"], env=env, capture_output=True, text=True, check=True
        ).stdout
        address = re.search(r"DBUS_SESSION_BUS_ADDRESS='([^']*)'", out)
        pid = re.search(r"DBUS_SESSION_BUS_PID=(\d+)", out)
        if not address or not pid:
            raise RuntimeError(f"dbus-launch gave no bus: {out!r}")
        self.dbus_pid = int(pid.group(1))
        self.env = {**env, "DBUS_SESSION_BUS_ADDRESS": address.group(1)}
        self._saved = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = address.group(1)
        self.launcher = subprocess.Popen(
            [str(LAUNCHER), "--launch-immediately"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its bus daemon and registry join its process group
        )
        wait_until(self.address, 20, "the accessibility bus")
        return self

    def address(self) -> str:
        """The accessibility bus's address, as the session bus tells it ('' before)."""
        done = subprocess.run(
            [*A11Y_BUS, "org.a11y.Bus.GetAddress"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        found = re.search(r'string "([^"]+)"', done.stdout)
        return found.group(1) if found else ""

    def __exit__(self, *exc: object) -> None:
        if self.launcher is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.launcher.pid, signal.SIGTERM)
            try:
                self.launcher.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.launcher.pid, signal.SIGKILL)
                self.launcher.wait(5)
        if self.dbus_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.dbus_pid, signal.SIGTERM)
        if self._saved is None:
            os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
        else:
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = self._saved


class App:
    """A third-party app started on the bus's display, found by its window's title."""

    def __init__(
        self, bus: AccessibilityBus, argv: list[str], title: str, env: dict[str, str] | None = None
    ) -> None:
        self.bus = bus
        self.title = title
        self.process = subprocess.Popen(
            argv,
            env={**bus.env, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.window = str(wait_until(self._find, 60, f"the {title!r} window"))

    @property
    def pid(self) -> int:
        return self.process.pid

    def _find(self) -> str:
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.title}: the app exited ({self.process.returncode})")
        found = x("xdotool", "search", "--name", f"^{self.title}$", display=self.bus.display)
        return found.stdout.split()[0] if found.stdout.split() else ""

    def focus(self) -> None:
        x("xdotool", "windowactivate", "--sync", self.window, display=self.bus.display)

    def type(self, text: str, settle: float = 0.3, delay_ms: int = 20) -> None:
        """Type `text` with xdotool into the focused window, then let it draw."""
        x("xdotool", "type", "--delay", str(delay_ms), text, display=self.bus.display)
        time.sleep(settle)

    def key(self, *keys: str) -> None:
        x("xdotool", "key", *keys, display=self.bus.display)

    def click(self, point: tuple[int, int]) -> None:
        px, py = (str(v) for v in point)
        # No --sync: xdotool waits in vain for a pointer already there to move.
        x("xdotool", "mousemove", px, py, "click", "1", display=self.bus.display)

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)


def map_characters(display: str, text: str) -> None:
    """Give each character of `text` missing from `display`'s keymap a spare key of its
    own. xdotool types such a character by remapping a spare key just for it, and an app
    now and then reads the key before the remap arrives ("Jos Núñez", "José Nñez": 3
    runs in 5 on GTK and Qt, 3 in 7 on Chromium): mapped beforehand, it is a plain key."""
    from Xlib import display as xdisplay

    conn = xdisplay.Display(display)
    try:
        first = conn.display.info.min_keycode
        count = conn.display.info.max_keycode - first + 1
        rows = conn.get_keyboard_mapping(first, count)
        mapped = {keysym for row in rows for keysym in row}
        spare = [first + i for i, row in enumerate(rows) if not any(row)]
        for char in dict.fromkeys(text):
            keysym = ord(char) if ord(char) < 0x100 else 0x1000000 + ord(char)
            if keysym in mapped:
                continue
            keycode = spare.pop()
            conn.change_keyboard_mapping(keycode, [(keysym, keysym)])
            mapped.add(keysym)
        conn.sync()
    finally:
        conn.close()
    time.sleep(0.3)  # every client has read the new mapping


@contextlib.contextmanager
def zenity_entry(bus: AccessibilityBus, title: str) -> Iterator[App]:
    """GTK 3: `zenity --entry` (one text entry, focused)."""
    need("zenity")
    app = App(bus, ["zenity", "--entry", f"--title={title}", "--text=Name"], title)
    try:
        yield app
    finally:
        app.close()


@contextlib.contextmanager
def zenity_form(bus: AccessibilityBus, title: str, fields: list[str]) -> Iterator[App]:
    """GTK 3: `zenity --forms` with one entry a field."""
    need("zenity")
    args = [f"--add-entry={f}" for f in fields]
    app = App(bus, ["zenity", "--forms", f"--title={title}", f"--text={title}", *args], title)
    try:
        yield app
    finally:
        app.close()


@contextlib.contextmanager
def qt_entry(bus: AccessibilityBus, title: str, at: tuple[int, int] = (60, 60)) -> Iterator[App]:
    """Qt 5: a QLineEdit (Debian's PyQt5 on the system Python), accessibility on."""
    python = "/usr/bin/python3"
    probe = subprocess.run([python, "-c", "import PyQt5.QtWidgets"], capture_output=True)
    if probe.returncode != 0:
        missing("Debian's python3-pyqt5")
    argv = [python, "-c", QT_FORM, title, str(at[0]), str(at[1])]
    app = App(bus, argv, title, env={"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1"})
    try:
        yield app
    finally:
        app.close()


@contextlib.contextmanager
def chromium_page(bus: AccessibilityBus, title: str, body: str, profile: Path) -> Iterator[App]:
    """Chromium on the display (not headless), showing a data: URL page, accessible."""
    need("chromium")
    page = f"data:text/html,<title>{title}</title>{body}"
    argv = [
        "chromium",
        "--no-sandbox",
        "--force-renderer-accessibility",
        f"--user-data-dir={profile}",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--window-position=0,0",
        "--window-size=700,400",
        f"--app={page}",
    ]
    app = App(bus, argv, title, env={"ACCESSIBILITY_ENABLED": "1"})
    try:
        yield app
    finally:
        app.close()


Handler = Callable[[str, str, str, tuple[Any, ...]], "Reply | None"]
"""(object path, interface, member, arguments) -> the reply, or None to stay silent."""


@dataclass(frozen=True)
class Reply:
    signature: str | None = None
    body: tuple[Any, ...] = ()
    error: str = ""
    """A D-Bus error name to answer with instead (org.freedesktop.DBus.Error.UnknownMethod)."""


class FakeAccessibility:
    """A private bus (`dbus-daemon`) where a scripted peer owns the AT-SPI registry's name
    and answers as `handler` says: a hostile or huge accessible tree on demand. The
    registry's apps are this same peer (`unique_name`). `address` is the bus's address
    (to give as AT_SPI_BUS_ADDRESS)."""

    def __init__(self, folder: Path, handler: Handler) -> None:
        self.folder = folder
        self.handler = handler
        self.address = ""
        self.unique_name = ""
        self.daemon: subprocess.Popen[str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeAccessibility:
        need("dbus-daemon")
        listen = f"unix:path={self.folder / 'bus'}"
        self.daemon = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address={listen}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.daemon.stdout is not None
        self.address = self.daemon.stdout.readline().strip()
        connection = open_dbus_connection(self.address)
        self.unique_name = connection.unique_name
        reply = connection.send_and_get_reply(
            message_bus.RequestName("org.a11y.atspi.Registry"), timeout=5
        )
        assert reply.body == (1,), reply.body  # DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER
        self._thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
        self._thread.start()
        return self

    def _serve(self, connection: DBusConnection) -> None:
        with connection:
            while not self._stop.is_set():
                try:
                    message = connection.receive(timeout=0.05)
                except TimeoutError:
                    continue
                except (OSError, ValueError):
                    return
                if message.header.message_type != MessageType.method_call:
                    continue
                fields = message.header.fields
                reply = self.handler(
                    str(fields.get(HeaderFields.path, "")),
                    str(fields.get(HeaderFields.interface, "")),
                    str(fields.get(HeaderFields.member, "")),
                    tuple(message.body),
                )
                if reply is None:
                    continue
                if reply.error:
                    connection.send(new_error(message, reply.error))
                else:
                    connection.send(new_method_return(message, reply.signature, reply.body))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self.daemon is not None:
            self.daemon.terminate()
            self.daemon.wait(5)
