"""What an agent's apps are told to expose their accessibility tree (`readback.expose`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcli.readback import expose
from mmcli.readback.atspi import Unavailable
from mmcli.readback.bus import BusError


class _Reached:
    def __init__(self, address: str, timeout: float) -> None:
        self.address = address

    def __enter__(self) -> _Reached:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def jar(tmp_path: Path) -> tuple[Path, ...]:
    path = tmp_path / "java-atk-wrapper.jar"
    path.write_bytes(b"PK")
    return (tmp_path / "absent.jar", path)


@pytest.fixture
def bus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expose, "find_bus", lambda display: "unix:path=/run/a11y")
    monkeypatch.setattr(expose, "Bus", _Reached)


@pytest.mark.usefixtures("bus")
def test_with_a_bus_qt_and_java_are_told(jar: tuple[Path, ...]) -> None:
    env = expose.exposing_env(":5", {}, jar)
    assert env["QT_LINUX_ACCESSIBILITY_ALWAYS_ON"] == "1"
    assert env["JAVA_TOOL_OPTIONS"] == (
        "-Djavax.accessibility.assistive_technologies=org.GNOME.Accessibility.AtkWrapper "
        f"-Xbootclasspath/a:{jar[1]}"
    )


@pytest.mark.usefixtures("bus")
def test_nothing_the_user_set_is_overridden(jar: tuple[Path, ...]) -> None:
    mine = {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "0", "JAVA_TOOL_OPTIONS": "-Xmx1g"}
    env = expose.exposing_env(":5", mine, jar)
    assert "QT_LINUX_ACCESSIBILITY_ALWAYS_ON" not in env  # theirs stays
    assert env["JAVA_TOOL_OPTIONS"].startswith("-Xmx1g -Djavax.accessibility.")
    own_at = {"JAVA_TOOL_OPTIONS": "-Djavax.accessibility.assistive_technologies=x.Y"}
    assert "JAVA_TOOL_OPTIONS" not in expose.exposing_env(":5", own_at, jar)
    assert expose.exposing_env(":5", {"NO_AT_BRIDGE": "1"}, jar) == {}  # off on purpose
    assert "JAVA_TOOL_OPTIONS" not in expose.exposing_env(":5", {}, jar[:1])  # no bridge


def test_without_a_live_bus_nothing_is_told(
    monkeypatch: pytest.MonkeyPatch, jar: tuple[Path, ...]
) -> None:
    def none(display: str) -> str:
        raise Unavailable("no accessibility bus")

    monkeypatch.setattr(expose, "find_bus", none)
    assert expose.exposing_env(":5", {}, jar) == {}

    def gone(address: str, timeout: float) -> _Reached:
        raise BusError("connection refused")  # named by a session that ended

    monkeypatch.setattr(expose, "find_bus", lambda display: "unix:path=/gone")
    monkeypatch.setattr(expose, "Bus", gone)
    assert expose.exposing_env(":5", {}, jar) == {}
