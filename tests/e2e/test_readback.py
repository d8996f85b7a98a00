"""Reading typed text back where it landed (`mmcli/readback`), on a real X display.

Third-party apps on an Xvfb with openbox, a session bus and the AT-SPI bus
(`tests/accessibility.py`), text typed into them with `xdotool type`:

- GTK 3 (zenity), Qt 5 (a PyQt5 QLineEdit) and Chromium (an <input> on a data: page)
  expose the field's text through AT-SPI, read by `readback.atspi` (pure Python over
  D-Bus): "José Núñez" reads back exactly; a value typed twice reads doubled (DIFFERS);
  with focus moved to another field, the field at the point is read, not the focused one;
- a Tk entry (the example loan form) exposes nothing: AT-SPI says so, and OCR
  (`readback.ocr`, tesseract) reads what it shows: exact for plain values, doubled as
  DIFFERS, a value longer than the field as UNREADABLE (only its end shows);
- the client fails fast and reads in bounds: no bus, a bus that never answers, an app
  that never answers, a tree deeper or wider than the bounds, a text of megabytes.

Each read's cost is printed (median of 20): run with -s to see it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mss
import numpy as np
import pytest

from examples.world import LoanApp
from mmcli.desktop.display import ensure_xauthority
from mmcli.readback.atspi import Limits, find_bus, read_field
from mmcli.readback.field import FieldText, NotRead, ReadOutcome, compare_typed
from mmcli.readback.ocr import read_region
from mmcli.screen.fingerprint import Rect
from tests.accessibility import (
    AccessibilityBus,
    App,
    FakeAccessibility,
    Reply,
    chromium_page,
    map_characters,
    missing,
    qt_entry,
    zenity_entry,
    zenity_form,
)
from tests.desktop import Desktop, need, wait_until, x

pytestmark = pytest.mark.e2e

NAME = "José Núñez"


@pytest.fixture(scope="module")
def a11y() -> Iterator[AccessibilityBus]:
    """An Xvfb with openbox, a session bus and the accessibility bus."""
    with Desktop() as desktop, AccessibilityBus(desktop.display) as bus:
        ensure_xauthority()  # python-xlib reads the root window's AT_SPI_BUS
        map_characters(desktop.display, NAME)
        yield bus


def read_until(
    bus: AccessibilityBus, app: App, want: str, point: tuple[int, int] | None = None
) -> FieldText:
    """The app's field read through AT-SPI once it reads `want` (typing lands
    asynchronously); the last read when it never does, for the assertion to show."""
    last: list[FieldText | NotRead] = []

    def done() -> bool:
        last[:] = [read_field(point, app.pid, display=bus.display)]
        return isinstance(last[0], FieldText) and last[0].text == want

    with contextlib.suppress(AssertionError):  # the assertion below shows the last read
        wait_until(done, 15, f"the field to read {want!r}")
    assert isinstance(last[0], FieldText), last[0]
    return last[0]


def typing_into(bus: AccessibilityBus, app: App) -> None:
    """Focus the app's window and wait until its focused field is exposed, empty (a key
    typed before the app is ready is lost)."""

    def ready() -> bool:
        app.focus()
        read = read_field(None, app.pid, display=bus.display)
        return isinstance(read, FieldText) and read.text == ""

    wait_until(ready, 30, f"{app.title}'s focused field")


def median_ms(read: Callable[[], object], times: int = 20) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        read()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000


def centre(rect: Rect) -> tuple[int, int]:
    return rect.x + rect.w // 2, rect.y + rect.h // 2


# ----- AT-SPI on real apps ---------------------------------------------------------------


def test_gtk_entry_reads_back_exactly_what_was_typed(a11y: AccessibilityBus) -> None:
    with zenity_entry(a11y, "Readback GTK") as app:
        typing_into(a11y, app)
        app.type(NAME)
        read = read_until(a11y, app, NAME)
        assert read.text == NAME and read.source == "accessibility"
        assert read.role == "text" and read.app == "zenity"
        assert compare_typed(NAME, read).outcome is ReadOutcome.VERIFIED
        assert compare_typed("Jos Nez", read).outcome is ReadOutcome.DIFFERS
        assert read.rect is not None
        at_point = read_field(centre(read.rect), app.pid, display=a11y.display)
        assert isinstance(at_point, FieldText) and at_point.text == NAME
        cost = median_ms(lambda: read_field(centre(read.rect), app.pid, display=a11y.display))
        print(f"\nAT-SPI read, GTK 3 zenity: {cost:.1f} ms (median of 20)")
        assert cost < 250


def test_gtk_value_typed_twice_reads_doubled(a11y: AccessibilityBus) -> None:
    with zenity_entry(a11y, "Readback twice") as app:
        typing_into(a11y, app)
        app.type("John Smith")
        app.type("John Smith")
        read = read_until(a11y, app, "John SmithJohn Smith")
        check = compare_typed("John Smith", read)
        assert check.outcome is ReadOutcome.DIFFERS
        assert "2 times" in check.reason


def test_the_field_at_the_point_is_read_not_the_focused_one(a11y: AccessibilityBus) -> None:
    with zenity_form(a11y, "Readback form", ["First", "Second"]) as app:
        typing_into(a11y, app)
        app.type("Alice")
        first = read_until(a11y, app, "Alice")
        assert first.rect is not None
        app.key("Tab")
        app.type("Bob")
        second = read_until(a11y, app, "Bob")
        assert second.rect is not None and second.rect != first.rect
        again = read_field(centre(first.rect), app.pid, display=a11y.display)
        assert isinstance(again, FieldText) and again.text == "Alice"
        assert again.rect == first.rect


def test_qt5_line_edit_reads_back(a11y: AccessibilityBus) -> None:
    with qt_entry(a11y, "Readback Qt") as app:
        typing_into(a11y, app)
        app.type(NAME)
        read = read_until(a11y, app, NAME)
        assert read.role == "text"
        assert compare_typed(NAME, read).verified
        assert read.rect is not None
        cost = median_ms(lambda: read_field(centre(read.rect), app.pid, display=a11y.display))
        print(f"\nAT-SPI read, Qt 5 QLineEdit: {cost:.1f} ms (median of 20)")
        assert cost < 250


GTK4_FORM = Path(__file__).parents[2] / "benchmarks" / "desktop" / "assets" / "gtk4_form.py"


def test_gtk4_entry_is_read_from_its_tree_where_it_stands(
    a11y: AccessibilityBus, tmp_path: Path
) -> None:
    """GTK 4 marks only its windows SHOWING (the walk to its focused entry went through
    VISIBLE objects: "no focused editable text field" before), and gives extents from its
    window's corner on X11: the backend's read places the field on the screen."""
    from mmcli.backends.x11 import X11Backend

    python = "/usr/bin/python3"
    probe = 'import gi; gi.require_version("Gtk", "4.0")'
    if subprocess.run([python, "-c", probe], capture_output=True).returncode != 0:
        missing("GTK 4's introspection data (gir1.2-gtk-4.0)")
    argv = [python, str(GTK4_FORM), "--out", str(tmp_path / "out.txt")]
    app = App(a11y, argv, r"Person \(GTK4\)")
    try:
        typing_into(a11y, app)
        app.type(NAME)
        read_until(a11y, app, NAME)
        read = X11Backend(a11y.display).read_field(None)
        assert isinstance(read, FieldText) and read.text == NAME, read
        assert read.source == "accessibility" and read.rect is not None
        shown = x("xdotool", "getwindowgeometry", "--shell", app.window, display=a11y.display)
        place = dict(line.split("=") for line in shown.stdout.split())
        window = Rect(*(int(place[k]) for k in ("X", "Y", "WIDTH", "HEIGHT")))
        assert window.x > 200 and read.rect.inside(window), (read.rect, window)
        cost = median_ms(lambda: read_field(None, app.pid, display=a11y.display))
        print(f"\nAT-SPI read, GTK 4 entry: {cost:.1f} ms (median of 20)")
    finally:
        app.close()


def test_chromium_input_reads_back(a11y: AccessibilityBus, tmp_path: Path) -> None:
    body = '<input id=name autofocus style="font-size:18px;margin:30px">'
    with chromium_page(a11y, "Readback web", body, tmp_path / "profile") as app:
        typing_into(a11y, app)
        app.type(NAME)
        read = read_until(a11y, app, NAME)
        assert read.role == "entry" and read.app == "Chromium"
        assert compare_typed(NAME, read).verified
        assert read.rect is not None
        cost = median_ms(lambda: read_field(centre(read.rect), app.pid, display=a11y.display))
        print(f"\nAT-SPI read, Chromium <input>: {cost:.1f} ms (median of 20)")
        assert cost < 250


def test_the_bus_is_found_from_the_display_or_the_session(
    a11y: AccessibilityBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_session = find_bus(display="")
    assert from_session == a11y.address()
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    assert find_bus(display=a11y.display) == from_session  # the root window's AT_SPI_BUS


# ----- OCR where there is no accessibility: Tk ---------------------------------------------


@pytest.fixture
def tk_form(
    a11y: AccessibilityBus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[LoanApp]:
    monkeypatch.setenv("DISPLAY", a11y.display)
    app = LoanApp(tmp_path / "app").start()
    yield app
    app.stop()


def tk_read(app: LoanApp, label: str, text: str, *keys: str) -> FieldText | NotRead:
    """Clear the Tk entry `label`, type `text` into it (then press `keys`) and read it by
    OCR."""
    display = os.environ["DISPLAY"]  # the tk_form fixture's
    px, py = (str(v) for v in app.center(label))
    # No --sync: xdotool waits in vain for a pointer already there to move.
    x("xdotool", "mousemove", px, py, "click", "1", display=display)
    x("xdotool", "key", "End", "shift+Home", "BackSpace", display=display)
    if text:
        x("xdotool", "type", "--delay", "15", text, display=display)
    wait_until(lambda: typed(app, label) == text, 10, f"{text!r} in the form's {label}")
    if keys:
        x("xdotool", "key", *keys, display=display)
    time.sleep(0.2)  # drawn
    return read_region(grab(field_rect(app, label)), field_rect(app, label))


def typed(app: LoanApp, label: str) -> str:
    return str(app.widgets()[label].get("text", ""))


def field_rect(app: LoanApp, label: str) -> Rect:
    w = app.widgets()[label]
    return Rect(w["x"], w["y"], w["w"], w["h"])


def grab(rect: Rect) -> np.ndarray:
    with mss.MSS() as screen:
        shot = screen.grab({"left": rect.x, "top": rect.y, "width": rect.w, "height": rect.h})
    return np.frombuffer(shot.rgb, dtype=np.uint8).reshape(shot.height, shot.width, 3)


TK_VALUES = [
    ("Name", "John Smith"),
    ("Email", "john@example.com"),
    ("Amount", "1200"),
    ("Name", "Mary Jane Watson"),
    ("Name", "O'Brien-Smythe 42"),
    ("Email", "kevin.oconnor@example.org"),
    ("Amount", "12,345.67"),
]


def test_tk_entry_is_read_by_ocr(tk_form: LoanApp) -> None:
    need("tesseract")
    pid = tk_form.process.pid if tk_form.process else None
    nothing = read_field(tk_form.center("Name"), pid)
    assert isinstance(nothing, NotRead) and "no accessible app" in nothing.reason
    assert compare_typed("John Smith", nothing).outcome is ReadOutcome.UNREADABLE
    for label, value in TK_VALUES:
        read = tk_read(tk_form, label, value)
        print(f"\nOCR {label}: {value!r} -> {getattr(read, 'text', read)!r}")
        assert isinstance(read, FieldText)
        assert compare_typed(value, read).outcome is ReadOutcome.VERIFIED, read
    crop = grab(field_rect(tk_form, "Amount"))
    cost = median_ms(lambda: read_region(crop))
    print(f"\nOCR read, Tk entry 300x23: {cost:.0f} ms (median of 20)")
    assert cost < 1000


def test_tk_entry_is_read_with_its_caret_inside_the_text(tk_form: LoanApp) -> None:
    """The caret left before the text's end (a name typed before a kept extension) is
    painted out wherever it stands: read as an "l" or "|" it would make the value other
    text."""
    need("tesseract")
    for value, lefts in (("Ada.png", 4), ("Grace Hopper", 6)):
        read = tk_read(tk_form, "Name", value, *["Left"] * lefts)
        print(f"\nOCR caret {lefts} from the end: {value!r} -> {getattr(read, 'text', read)!r}")
        assert compare_typed(value, read).outcome is ReadOutcome.VERIFIED, read


def test_tk_entry_ocr_tells_doubled_cut_empty_and_partial(tk_form: LoanApp) -> None:
    need("tesseract")
    doubled = tk_read(tk_form, "Name", "John SmithJohn Smith")
    assert compare_typed("John Smith", doubled).outcome is ReadOutcome.DIFFERS
    stale = tk_read(tk_form, "Name", "Mrs John Smith")
    check = compare_typed("John Smith", stale)
    assert check.outcome is ReadOutcome.DIFFERS and "before" in check.reason
    cut = tk_read(tk_form, "Name", "John")
    assert compare_typed("John Smith", cut).outcome is ReadOutcome.DIFFERS
    empty = tk_read(tk_form, "Name", "")
    assert isinstance(empty, FieldText) and empty.text == ""
    assert compare_typed("", empty).outcome is ReadOutcome.VERIFIED
    assert compare_typed("John Smith", empty).outcome is ReadOutcome.DIFFERS
    long = "Maximilian Richardson-Smythe 1200 Apt 4B, Springfield"
    shown = tk_read(tk_form, "Name", long)
    assert isinstance(shown, FieldText) and shown.partial, shown
    assert compare_typed(long, shown).outcome is ReadOutcome.UNREADABLE


OVERLAY = """
import sys, tkinter as tk
root = tk.Tk()
root.overrideredirect(True)
root.geometry(sys.argv[1])
root.configure(bg="#2b2b2b")
root.mainloop()
"""
"""A window placed by itself, never given the keyboard (a notification): `WxH+X+Y`."""


READ_THROUGH_THE_BACKEND = """
import json, os, sys, time
from mmcli.backends.x11 import X11Backend
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import over_the_keyboard
field = Rect(*json.loads(sys.argv[1]))
backend = X11Backend(os.environ['DISPLAY'])
deadline = time.monotonic() + 20
while not any(r.intersects(field.grow(2)) for r in over_the_keyboard(backend.stack() or [])):
    if time.monotonic() > deadline:
        sys.exit("no window over the field above the keyboard's")
    time.sleep(0.1)
time.sleep(0.3)  # drawn
read = backend.read_field(field, None, "ocr")
print(json.dumps({"text": read.text, "partial": read.partial, "confidence": read.confidence}))
"""
"""The X11 backend in a process of its own (pyautogui binds to the DISPLAY it is first
imported with), reading the field at `argv[1]` once a window stands over it."""


def test_a_tk_entry_whose_end_a_window_covers_is_read_up_to_it(tk_form: LoanApp) -> None:
    """A window over the right end of the field typed into (a notification's corner) is
    left out of the read: read whole, its edge ran the text to the field's end and the
    value could not be verified."""
    import json
    import subprocess
    import sys

    need("tesseract")
    tk_read(tk_form, "Name", "Ada Lovelace")
    field = field_rect(tk_form, "Name")
    place = f"240x40+{field.right - 60}+{field.y - 30}"
    overlay = subprocess.Popen([sys.executable, "-c", OVERLAY, place])
    try:
        done = subprocess.run(
            [sys.executable, "-c", READ_THROUGH_THE_BACKEND, json.dumps(field.as_list())],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        overlay.kill()
        overlay.wait()
    assert done.returncode == 0, done.stderr
    read = FieldText(**json.loads(done.stdout), source="ocr")
    assert compare_typed("Ada Lovelace", read).outcome is ReadOutcome.VERIFIED, read


# ----- failing fast, reading in bounds ----------------------------------------------------


def test_no_bus_at_all_is_told_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AT_SPI_BUS_ADDRESS", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    start = time.monotonic()
    read = read_field((10, 10))
    assert isinstance(read, NotRead) and "no accessibility bus" in read.reason
    assert time.monotonic() - start < 0.2


def test_a_bus_that_never_answers_costs_one_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "silent"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True).start()
    monkeypatch.setenv("AT_SPI_BUS_ADDRESS", f"unix:path={path}")
    try:
        start = time.monotonic()
        read = read_field((10, 10), limits=Limits(call_timeout=0.3, deadline=1.0))
        spent = time.monotonic() - start
    finally:
        server.close()
        for conn in accepted:
            conn.close()
    assert isinstance(read, NotRead), read
    assert spent < 0.6, spent  # the connection's own timeout: one call's


ROOT = "/org/a11y/atspi/accessible/root"
ACCESSIBLE = "org.a11y.atspi.Accessible"


class Tree:
    """A scripted accessible app under the fake registry: `nodes` maps a path to its
    children (paths), states and text; `calls` counts what the reader asked."""

    def __init__(self, fake_name: Callable[[], str]) -> None:
        self.name = fake_name
        self.calls: dict[str, int] = {}
        self.silent_app = False

    def children(self, path: str) -> list[str]:
        return []

    def child_count(self, path: str) -> int:
        return len(self.children(path))

    def states(self, path: str) -> set[int]:
        return {8, 24, 25, 30}  # enabled, sensitive, showing, visible

    def text(self, path: str, start: int, end: int) -> tuple[int, str]:
        return 0, ""

    def __call__(self, path: str, interface: str, member: str, args: tuple[Any, ...]) -> Any:
        self.calls[member] = self.calls.get(member, 0) + 1
        if path == ROOT:  # the registry: one app
            if member == "Get":
                return Reply("v", (("i", 1),))
            return Reply("a(so)", ([(self.name(), "/app")],))
        if self.silent_app:
            return None
        if interface == "org.a11y.atspi.Collection":
            return Reply(error="org.freedesktop.DBus.Error.UnknownMethod")
        if member == "Get" and args[1] == "ChildCount":
            return Reply("v", (("i", self.child_count(path)),))
        if member == "Get" and args[1] == "CharacterCount":
            return Reply("v", (("i", self.text(path, 0, 0)[0]),))
        if member == "Get" and args[1] == "Name":
            return Reply("v", (("s", "hostile"),))
        if member == "GetChildren":
            return Reply("a(so)", ([(self.name(), c) for c in self.children(path)],))
        if member == "GetState":
            bits = self.states(path)
            return Reply("au", ([sum(1 << b for b in bits if b < 32), 0],))
        if member == "GetInterfaces":
            return Reply("as", (["org.a11y.atspi.Accessible", "org.a11y.atspi.Text"],))
        if member == "GetText":
            return Reply("s", (self.text(path, *args)[1],))
        if member == "GetRoleName":
            return Reply("s", ("text",))
        if member == "GetExtents":
            return Reply("(iiii)", ((0, 0, 100, 20),))
        return Reply(error="org.freedesktop.DBus.Error.UnknownMethod")


@pytest.fixture
def fake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeAccessibility, Tree]]:
    """A fake accessibility bus whose one app is a `Tree` the test scripts."""
    holder: list[FakeAccessibility] = []
    tree = Tree(lambda: holder[0].unique_name)
    with FakeAccessibility(tmp_path, tree) as bus:
        holder.append(bus)
        monkeypatch.setenv("AT_SPI_BUS_ADDRESS", bus.address)
        yield bus, tree


def timed_read(limits: Limits | None = None) -> tuple[FieldText | NotRead, float]:
    start = time.monotonic()
    read = read_field(None, limits=limits)
    return read, time.monotonic() - start


def test_an_app_that_never_answers_costs_one_deadline(fake: tuple[FakeAccessibility, Tree]) -> None:
    _bus, tree = fake
    tree.silent_app = True
    read, spent = timed_read(Limits(call_timeout=0.3, deadline=1.0))
    assert isinstance(read, NotRead), read
    assert spent < 1.3, spent


def test_a_bottomless_tree_is_walked_to_its_bounds(fake: tuple[FakeAccessibility, Tree]) -> None:
    _bus, tree = fake
    tree.children = lambda path: [f"{path}/n"]  # type: ignore[method-assign]
    read, spent = timed_read(Limits(call_timeout=2.0, deadline=5.0, max_depth=30))
    assert isinstance(read, NotRead), read
    assert 1 <= tree.calls.get("GetState", 0) <= 30, tree.calls
    assert spent < 5.5


def test_a_wide_tree_is_cut(fake: tuple[FakeAccessibility, Tree]) -> None:
    _bus, tree = fake
    tree.children = (  # type: ignore[method-assign]
        lambda path: [f"/w/{i}" for i in range(5000)] if path == "/app" else []
    )
    # A 5,000-child reply from the fake bus can take longer than a call's default
    # 0.3 s on a loaded machine; this is about the cut, not the timeout.
    read, _ = timed_read(Limits(call_timeout=2.0, deadline=5.0, max_children=50))
    assert isinstance(read, NotRead), read
    assert 1 <= tree.calls.get("GetState", 0) <= 50, tree.calls
    tree.calls.clear()
    tree.child_count = lambda path: 10**6  # type: ignore[method-assign]
    read, _ = timed_read()
    assert isinstance(read, NotRead), read
    assert "GetChildren" not in tree.calls or tree.calls["GetChildren"] <= 1  # the registry's


def focused_text(tree: Tree, length: int, honest: bool) -> None:
    """The app's one child: focused editable text `length` characters long, which a
    dishonest app sends whole whatever range is asked for."""
    tree.children = lambda path: ["/app/text"] if path == "/app" else []  # type: ignore[method-assign]
    tree.states = lambda path: {7, 8, 12, 24, 25, 30}  # type: ignore[method-assign]

    def text(path: str, start: int, end: int) -> tuple[int, str]:
        return length, "a" * (max(0, end - start) if honest else length)

    tree.text = text  # type: ignore[method-assign]


def test_a_long_text_is_read_to_its_bound(fake: tuple[FakeAccessibility, Tree]) -> None:
    _bus, tree = fake
    focused_text(tree, 100_000, honest=True)
    read, _ = timed_read()
    assert isinstance(read, FieldText), read
    assert read.partial and len(read.text) == Limits().max_chars
    assert compare_typed("a" * 100_000, read).outcome is ReadOutcome.UNREADABLE


def test_megabytes_of_text_are_refused(fake: tuple[FakeAccessibility, Tree]) -> None:
    _bus, tree = fake
    focused_text(tree, 8 << 20, honest=False)
    read, _ = timed_read(Limits(deadline=5.0, call_timeout=3.0))
    assert isinstance(read, NotRead), read
    assert "larger than" in read.reason
