"""The backend is chosen when `open_backend()` is called, from the session it finds."""

from __future__ import annotations

import sys

import pytest

from mmcli import backends
from mmcli.errors import DisplayError


@pytest.fixture(autouse=True)
def no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


def test_no_display_at_all_says_so() -> None:
    with pytest.raises(DisplayError, match="no display: DISPLAY is not set"):
        backends.open_backend()


def test_a_wayland_only_session_is_told_how_to_reach_x(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    with pytest.raises(DisplayError, match=r"Wayland session without X.*XWayland"):
        backends.open_backend()


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_another_os_is_named(monkeypatch: pytest.MonkeyPatch, platform: str) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    with pytest.raises(DisplayError, match=f"no backend for {platform}"):
        backends.open_backend()


def test_x11_is_chosen_where_display_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under XWayland both are set: X11 is what mm drives."""
    from mmcli.backends import x11

    class Chosen(Exception):
        pass

    def opened(name: str) -> None:
        raise Chosen(name)

    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setattr(x11, "X11Backend", opened)
    with pytest.raises(Chosen, match=":99"):
        backends.open_backend()


def test_an_x_display_named_is_driven_by_name_and_the_environment_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--display :5` with DISPLAY=:99: the backend connects to :5; DISPLAY stays :99
    (an agent is given :5 by the backend, `agent_env`)."""
    import os

    from mmcli.backends import x11

    class Chosen(Exception):
        pass

    def opened(name: str) -> None:
        raise Chosen(name)

    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("MM_DISPLAY", raising=False)
    monkeypatch.setattr(x11, "X11Backend", opened)
    with pytest.raises(Chosen, match=":5"):
        backends.open_backend(":5")
    assert os.environ["DISPLAY"] == ":99"


def test_no_x_display_anywhere_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mmcli.errors import DisplayError

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("MM_DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(DisplayError, match="DISPLAY is not set"):
        backends.open_backend()


def test_the_backend_and_the_lock_are_on_the_one_display_chosen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """$MM_DISPLAY names :7 and $DISPLAY :0: a run drives :7 and holds :7's lock, never
    :0's (two runs on :7 must exclude each other)."""
    import contextlib
    from collections.abc import Iterator

    from mmcli.desktop import display as desktop_display
    from mmcli.verbs.display import Display

    opened: list[str | None] = []
    locked: list[str | None] = []

    def open_backend(name: str | None = None) -> contextlib.AbstractContextManager[str]:
        opened.append(name)
        return contextlib.nullcontext("backend")

    @contextlib.contextmanager
    def display_lock(
        wait: float, display: str | None = None, on_wait: object = None
    ) -> Iterator[None]:
        locked.append(display)
        yield

    monkeypatch.setenv("MM_DISPLAY", ":7")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(backends, "open_backend", open_backend)
    monkeypatch.setattr(desktop_display, "display_lock", display_lock)
    with Display(None).opened() as backend:
        assert backend == "backend"
    assert opened == locked == [":7"]
    assert desktop_display.chosen(":3") == ":3"
    monkeypatch.delenv("MM_DISPLAY")
    assert desktop_display.chosen(None) == ":0"
