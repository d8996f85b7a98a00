"""The VNC channel's side: an agent's RFB pointer and key events, as its endpoint hands
them over, become the actions a recording keeps, each with the screen from before its
first event (the endpoint itself is tested against a real server in tests/e2e)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from mmcli.backends.fake import FakeBackend
from mmcli.backends.rfbproxy import CutText, Input, KeyInput, PointerInput
from mmcli.capture.recorder import Recorder
from mmcli.capture.vnc import ADDRESS_ENV, VncChannel, key_of
from mmcli.model import Action, ActionKind
from tests.helpers import form_screen

SHIFT, CTRL, ENTER, BACKSPACE = 0xFFE1, 0xFFE3, 0xFF0D, 0xFF08


@dataclass
class Endpoint:
    """Stands in for `RFBProxy`: what the channel is given to hear input from."""

    on_input: Callable[[Input], None]
    on_refused: Callable[[str], None]
    on_dropped: Callable[[str], None]
    address: str = "127.0.0.1:5999"
    token: str = "tok3n-xy"

    def __enter__(self) -> Endpoint:
        return self

    def close(self) -> None:
        pass


@pytest.fixture
def channel() -> Iterator[VncChannel]:
    backend = FakeBackend(form_screen())
    with Recorder(backend, learn=False) as recorder:
        channel = VncChannel(recorder, Endpoint)  # type: ignore[arg-type]
        ticks = iter(range(10_000))
        channel.clock = lambda: next(ticks) * 0.01  # each input 10 ms after the last
        yield channel


def send(channel: VncChannel, *inputs: Input) -> None:
    for event in inputs:
        channel.on_input(event)


def click(x: int, y: int, button: int = 1) -> tuple[Input, ...]:
    return PointerInput(x, y, 0), PointerInput(x, y, button), PointerInput(x, y, 0)


def keys(text: str) -> tuple[Input, ...]:
    return tuple(k for c in text for k in (KeyInput(ord(c), True), KeyInput(ord(c), False)))


def finished(channel: VncChannel) -> list[Action]:
    captures = channel.finish()
    channel.recorder.add_captures(captures)
    return [c.action for c in channel.recorder.captures]


def test_the_agent_is_given_the_endpoint_and_its_password_only(channel: VncChannel) -> None:
    env = channel.env()
    assert env[ADDRESS_ENV] == "127.0.0.1:5999"
    assert env["MM_VNC_PASSWORD"] == "tok3n-xy"
    assert env["MM_VNC_PASSWORD_FILE"] == ""  # the real server's password file: not passed


def test_clicks_typing_and_keys_become_actions_with_the_screen_before(
    channel: VncChannel,
) -> None:
    send(channel, *click(100, 50), *keys("Ada"), KeyInput(ENTER, True), KeyInput(ENTER, False))
    send(channel, *click(200, 80, 4))  # the right button
    assert finished(channel) == [
        Action(ActionKind.CLICK, x=100, y=50),
        Action(ActionKind.TYPE, text="Ada", key_ms=20),
        Action(ActionKind.PRESS, keys=("enter",)),
        Action(ActionKind.CLICK, x=200, y=80, button="right"),
    ]
    captures = channel.recorder.captures
    assert captures[0].pointer == (100, 50)  # the pointer put on the target
    assert all(c.small is not None for c in captures)


def test_a_double_click_a_drag_and_the_wheel(channel: VncChannel) -> None:
    send(channel, *click(10, 10), *click(11, 10))
    send(channel, PointerInput(50, 50, 1), PointerInput(80, 60, 1), PointerInput(120, 90, 0))
    send(channel, *click(300, 300, 16), *click(300, 300, 16))
    assert finished(channel) == [
        Action(ActionKind.CLICK, x=10, y=10, clicks=2),
        Action(ActionKind.DRAG, x=50, y=50, x2=120, y2=90),
        Action(ActionKind.SCROLL, x=300, y=300, amount=-2),
    ]


def test_a_second_press_on_what_the_first_one_uncovered_is_a_click_of_its_own(
    channel: VncChannel,
) -> None:
    backend = channel.recorder.backend
    assert isinstance(backend, FakeBackend)
    backend.screen = form_screen(popup=True)
    send(channel, *click(400, 352))  # OK: the dialog closes before the agent sees it
    backend.screen = form_screen()
    send(channel, *click(400, 352))  # again, on the form under it
    send(channel, *click(300, 185))  # in the Name field: the caret moves
    backend.screen = form_screen(caret=True)
    send(channel, *click(300, 185))
    assert finished(channel) == [
        Action(ActionKind.CLICK, x=400, y=352),
        Action(ActionKind.CLICK, x=400, y=352),
        Action(ActionKind.CLICK, x=300, y=185, clicks=2),
    ]
    dialog, form = channel.recorder.captures[:2]
    assert (dialog.small != form.small).any()  # each with the screen it went to


def test_shifted_characters_are_text_and_chords_are_hotkeys(channel: VncChannel) -> None:
    shifted = (KeyInput(SHIFT, True), KeyInput(ord("A"), True), KeyInput(ord("A"), False))
    send(channel, *shifted, KeyInput(SHIFT, False), *keys("é"))
    send(channel, KeyInput(CTRL, True), *keys("s"), KeyInput(CTRL, False))
    assert finished(channel) == [
        Action(ActionKind.TYPE, text="Aé", key_ms=30),
        Action(ActionKind.HOTKEY, keys=("ctrl", "s")),
    ]


def test_the_pace_of_typing_is_kept(channel: VncChannel) -> None:
    at = iter([0.0, 0.01, 0.15, 0.16, 0.30, 0.31, 1.5, 1.51])  # a pause before the last
    channel.clock = lambda: next(at)
    send(channel, *keys("abcd"))
    (typed,) = finished(channel)
    assert typed.text == "abcd" and typed.key_ms == 150  # the median gap, not the mean


def test_a_paste_of_what_the_agent_put_on_the_clipboard_is_typed_text(
    channel: VncChannel,
) -> None:
    send(channel, CutText("4111 1111"), KeyInput(CTRL, True), *keys("v"), KeyInput(CTRL, False))
    (pasted,) = channel.finish()
    assert pasted.action == Action(ActionKind.TYPE, text="4111 1111")
    assert pasted.note == "pasted from the clipboard"


def test_input_it_cannot_name_fails_the_run(channel: VncChannel) -> None:
    send(channel, KeyInput(0xFE50, True), KeyInput(0xFE50, False))  # a dead key
    send(channel, PointerInput(5, 5, 0x80))  # button 8
    channel.finish()
    assert any("unnamed key" in u for u in channel.recorder.unsupported)
    assert any("button 8" in u for u in channel.recorder.unsupported)


def test_key_names() -> None:
    assert key_of(0xFF0D) == ("enter", "")
    assert key_of(0x20) == ("space", " ")
    assert key_of(ord("Q")) == ("q", "Q")
    assert key_of(0x010020AC) == ("€", "€")
    assert key_of(0xFFE2) == ("shiftright", "")
    assert key_of(0xFE50) == ("", "")
