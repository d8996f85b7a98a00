"""mm reads X the same under python-xlib 0.33 and 0.15 (python3-xlib, pyautogui's
dependency: both install the `Xlib` package, the last installed wins), and `mm doctor`
says when the window structure cannot be read.

0.33 gives a format-8 property's value as bytes; 0.15 decodes it as UTF-8 where it can (a
str) and leaves it bytes where it cannot. 0.15 has no `Xlib.ext.damage`, and its RANDR
module takes the event code of DAMAGE's events on Xvfb: the area is read from the wire.
"""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from mmcli.backends import x11windows
from mmcli.backends.damage import ScreenWatch, notify_area
from mmcli.inventory import doctor
from mmcli.inventory.doctor import Status, check_window_system
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import StackedWindow, WindowRef

WM_CLASS = "café\0Café\0".encode("latin-1")
"""A `WM_CLASS` in ISO-8859-1, as ICCCM has it: not valid UTF-8."""


def as_015(data: bytes) -> bytes | str:
    """What python3-xlib 0.15 gives for a format-8 value: decoded where it is UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


@pytest.mark.parametrize(
    "data", [b"xterm\0XTerm\0", WM_CLASS, "Zoë".encode(), b"\x00\xffpixels\x80"]
)
def test_as_bytes_gives_back_the_bytes_sent_from_either_version(data: bytes) -> None:
    assert x11windows.as_bytes(data) == data  # 0.33
    assert x11windows.as_bytes(as_015(data)) == data


def test_property_text_decodes_as_the_type_says() -> None:
    for value in (WM_CLASS, as_015(WM_CLASS)):
        assert x11windows.property_text(value, "ISO-8859-1") == "café\0Café\0"
    title = "José Núñez".encode()
    for value in (title, as_015(title)):
        assert x11windows.property_text(value, "utf-8") == "José Núñez"


def _asked(value: bytes | str) -> tuple[Any, int, int]:
    """A `_get_property` request whose reply carries a format-8 `value`."""
    reply = SimpleNamespace(reply=lambda: None, property_type=31, bytes_after=0, value=(8, value))
    return reply, 67, 31


@pytest.mark.parametrize(
    ("data", "name"),
    [(b"xterm\0XTerm\0", "xterm.XTerm"), (WM_CLASS, "café.Café"), (b"lone", "")],
)
def test_a_class_name_reads_the_same_under_either_version(data: bytes, name: str) -> None:
    for value in (data, as_015(data)):
        assert x11windows._class_name(None, _asked(value)) == name


def _damage_notify(x: int, y: int, w: int, h: int) -> bytes:
    """A DamageNotify as sent: type, level, sequence number, drawable, damage, timestamp,
    area, geometry."""
    return struct.pack(
        "=BBHLLLhhHHhhHH", 91, 0, 7, 0x25A, 0x400001, 1234, x, y, w, h, 0, 0, 800, 600
    )


def test_a_damage_area_is_read_from_the_event_as_sent() -> None:
    wire = _damage_notify(-3, 40, 120, 16)
    assert len(wire) == 32
    assert notify_area(wire) == Rect(-3, 40, 120, 16)
    assert notify_area(wire[:20]) is None


def test_a_damage_event_parsed_as_another_extensions_keeps_its_area() -> None:
    """0.15 parses it as RANDR's OutputChangeNotify: no `area`, no `data`."""
    watch = SimpleNamespace(_notify=91)
    randr = SimpleNamespace(type=91, _binary=_damage_notify(10, 20, 30, 40))
    assert ScreenWatch._area(watch, randr) == Rect(10, 20, 30, 40)  # type: ignore[arg-type]
    parsed = SimpleNamespace(type=91, area=SimpleNamespace(x=1, y=2, width=3, height=4))
    assert ScreenWatch._area(watch, parsed) == Rect(1, 2, 3, 4)  # type: ignore[arg-type]
    other = SimpleNamespace(type=12, _binary=_damage_notify(10, 20, 30, 40))
    assert ScreenWatch._area(watch, other) is None  # type: ignore[arg-type]


# ---- mm doctor's "window structure" --------------------------------------------------------

FORM = WindowRef("loanForm.Loanform", Rect(101, 120, 560, 420))


class _Connection:
    opened: ClassVar[list[_Connection]] = []

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False
        _Connection.opened.append(self)

    def has_extension(self, name: str) -> bool:
        return False  # a server without Composite

    def close(self) -> None:
        self.closed = True


def _doctor_with(
    monkeypatch: pytest.MonkeyPatch, version: tuple[int, int], stacked: Any
) -> doctor.Finding:
    """`check_window_system`'s windows row with python-xlib's version and `stacked_windows` faked
    (`stacked`: what it returns, or an exception it raises)."""
    import Xlib
    from Xlib import display

    calls = []

    def stacked_windows(conn: Any) -> Any:
        calls.append(conn)
        if isinstance(stacked, Exception):
            raise stacked
        return stacked

    monkeypatch.setenv("DISPLAY", ":42")
    monkeypatch.setattr(Xlib, "__version__", version)
    monkeypatch.setattr(display, "Display", _Connection)
    monkeypatch.setattr(x11windows, "stacked_windows", stacked_windows)
    finding = check_window_system(":42")[0]
    assert finding.check == "windows"
    assert all(c.name == ":42" for c in calls)
    return finding


def test_doctor_reads_the_window_structure(monkeypatch: pytest.MonkeyPatch) -> None:
    stack = [StackedWindow(FORM, FORM.rect), StackedWindow(WindowRef("", FORM.rect), FORM.rect)]
    found = _doctor_with(monkeypatch, (0, 33), stack)
    assert found.status is Status.OK
    assert found.detail == (
        "2 top-level windows read, 1 of them an app's with its class (python-xlib 0.33)"
    )


def test_doctor_says_what_is_off_without_a_window_manager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = _doctor_with(monkeypatch, (0, 33), None)
    assert found.status is Status.SKIP
    assert found.detail.startswith("no window manager on :42 lists its windows (EWMH): ")
    assert "--relocate" in found.detail and "notification" in found.detail


def test_doctor_fails_where_the_window_manager_cannot_be_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As under 0.15 before mm read its str values: every query raised, the backend
    answered "not known" and nothing said so."""
    error = TypeError("string argument without an encoding")
    found = _doctor_with(monkeypatch, (0, 15), error)
    assert found.status is Status.FAIL
    assert "(TypeError: string argument without an encoding; python-xlib 0.15)" in found.detail
    assert "keys are not held back" in found.detail
    assert found.fix.startswith("pip install --force-reinstall --no-deps 'python-xlib>=0.33'")
    found = _doctor_with(monkeypatch, (0, 33), error)
    assert found.status is Status.FAIL and "report" in found.fix


def test_doctor_retries_a_query_a_vanishing_window_broke(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes: list[Any] = [RuntimeError("BadWindow"), [StackedWindow(FORM, FORM.rect)]]

    def flaky(conn: Any) -> Any:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(x11windows, "stacked_windows", flaky)
    monkeypatch.setattr("Xlib.display.Display", _Connection)
    assert check_window_system(":42")[0].status is Status.OK


def test_doctor_warns_of_an_old_python_xlib_that_reads_the_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = _doctor_with(monkeypatch, (0, 15), [StackedWindow(FORM, FORM.rect)])
    assert found.status is Status.WARN
    assert "python-xlib 0.15 is active: mm needs python-xlib >= 0.33" in found.detail
    assert "--force-reinstall" in found.fix


# ---- mm doctor's "readback" -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bus", "ocr", "status", "says"),
    [
        (True, True, "ok", "the accessibility bus is up"),
        (False, True, "ok", "no accessibility tree (no bus); other fields read by OCR"),
        (True, False, "warn", "fields of apps without one cannot be read back"),
        (False, False, "warn", "typed text cannot be read back"),
    ],
)
def test_doctor_says_how_typed_text_is_read_back(
    monkeypatch: pytest.MonkeyPatch, bus: bool, ocr: bool, status: str, says: str
) -> None:
    from mmcli.inventory import doctor
    from mmcli.readback import atspi

    def find_bus(*_: object) -> str:
        if not bus:
            raise atspi.Unavailable("no bus")
        return "unix:path=/tmp/a11y"

    monkeypatch.setattr(atspi, "find_bus", find_bus)
    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/x" if ocr else None)
    finding = doctor.check_readback(accessibility=True)
    assert (finding.check, str(finding.status)) == ("readback", status)
    assert says in finding.detail
    assert bool(finding.fix) == (status == "warn")


@pytest.mark.parametrize("bridge", [True, False])
def test_doctor_says_whether_java_apps_an_agent_starts_expose_their_tree(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bridge: bool
) -> None:
    from mmcli.inventory import doctor
    from mmcli.readback import atspi, expose

    jar = tmp_path / "java-atk-wrapper.jar"
    if bridge:
        jar.write_bytes(b"PK")
    monkeypatch.setattr(expose, "ATK_WRAPPER_JARS", (jar,))
    monkeypatch.setattr(atspi, "find_bus", lambda *_: "unix:path=/tmp/a11y")
    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/x")
    detail = doctor.check_readback(accessibility=True).detail
    said = "Java's ATK bridge loaded" if bridge else "no Java ATK bridge (libatk-wrapper-java-jni)"
    assert said in detail, detail


def test_doctor_asks_the_window_rows_on_one_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The windows row and the `under` row share one connection, closed after them."""
    monkeypatch.setattr(
        x11windows, "stacked_windows", lambda conn: [StackedWindow(FORM, FORM.rect)]
    )
    monkeypatch.setattr("Xlib.display.Display", _Connection)
    monkeypatch.setattr(_Connection, "opened", [])
    windows, under = check_window_system(":42")
    assert (windows.status, under.check, under.status) == (Status.OK, "under", Status.SKIP)
    assert "no Composite extension" in under.detail
    assert len(_Connection.opened) == 1 and _Connection.opened[0].closed
