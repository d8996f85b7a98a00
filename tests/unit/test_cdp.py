"""`--display cdp://`: the address parsed, keys as DevTools dispatches them, a page's own
dialog drawn over the screen, with no browser (the browser itself: tests/e2e/test_cdp.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from mmcli.backends.base import BrowserPage
from mmcli.backends.cdp import CdpBackend, key_of
from mmcli.desktop.display import CdpAddress, cdp_address, display_key, is_remote
from mmcli.errors import UsageError
from mmcli.screen.fingerprint import Frame


@pytest.mark.parametrize(
    ("display", "address"),
    [
        ("cdp://127.0.0.1:9333", CdpAddress("127.0.0.1", 9333)),
        ("cdp://browser", CdpAddress("browser", 9222)),
        ("CDP://[::1]:9000", CdpAddress("::1", 9000)),
        (
            "ws://10.0.0.5:9222/devtools/page/ABC",
            CdpAddress("10.0.0.5", 9222, "ws://10.0.0.5:9222/devtools/page/ABC"),
        ),
        (
            "wss://browsers.example/devtools/page/1?token=t",
            CdpAddress("browsers.example", 443, "wss://browsers.example/devtools/page/1?token=t"),
        ),
        (":99", None),
        ("vnc://10.0.0.5", None),
    ],
)
def test_a_devtools_address_is_parsed(display: str, address: CdpAddress | None) -> None:
    assert cdp_address(display) == address
    assert is_remote(display) is (address is not None or display.startswith("vnc"))


@pytest.mark.parametrize(
    "display",
    ["cdp://", "cdp://host:port", "cdp://host:1/path", "cdp://u:secret@host:1", "ws://host:1"],
)
def test_a_malformed_devtools_address_is_a_usage_error(display: str) -> None:
    with pytest.raises(UsageError):
        cdp_address(display)


def test_one_browser_is_one_display_to_lock() -> None:
    assert display_key("cdp://127.0.0.1:9333") == "cdp-local-9333"
    assert display_key("ws://localhost:9333/devtools/page/X") == "cdp-local-9333"
    assert display_key("cdp://10.0.0.5:9222") == "cdp-10.0.0.5-9222"


def test_keys_are_dispatched_as_the_browser_knows_them() -> None:
    assert key_of("enter") == ("Enter", "Enter", 13, "\r")
    assert key_of("\t") == ("Tab", "Tab", 9, "")
    assert key_of("a") == ("a", "KeyA", 65, "a")
    assert key_of("A") == ("A", "KeyA", 65, "A")
    assert key_of("7") == ("7", "Digit7", 55, "7")
    assert key_of("é") == ("é", "", 0, "é")  # typed as text, any character
    assert key_of("ctrl") == ("Control", "ControlLeft", 17, "")
    assert key_of("nosuchkey") is None


def test_a_page_dialog_is_drawn_over_the_middle_of_the_screen() -> None:
    """While a page's own dialog is open, the screen is the last one with a box no
    recorded screen shows: every check refuses it."""
    frame = Frame.from_image(Image.new("RGB", (800, 500), "#eeeeee"))
    shown = CdpBackend._with_dialog(frame, "Session expiring")
    differs = np.abs(shown.pixels[..., :3].astype(int) - frame.pixels[..., :3]).max(axis=2) > 0
    ys, xs = np.nonzero(differs)
    assert xs.min() >= 180 and xs.max() <= 620 and ys.min() >= 170 and ys.max() <= 330
    assert differs.sum() > 1000


def test_the_owner_of_a_local_connection_is_told_by_the_kernel() -> None:
    import os
    import socket

    from mmcli.backends.cdpproxy import socket_owner

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname()) as client:
            peer = client.getsockname()
            assert socket_owner(peer, server.getsockname()) == os.getuid()
            assert socket_owner(peer, ("127.0.0.1", 1)) is None


def test_devtools_input_commands_become_the_actions_replay_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What Playwright and selenium send (a click as move, press, release; typed text
    as key events or insertText; Enter as a raw key) builds the actions mm replays."""
    from mmcli.capture.built import Built
    from mmcli.capture.cdp import CdpChannel
    from mmcli.model import ActionKind

    class Recorder:
        def __init__(self) -> None:
            from mmcli.backends import FakeBackend

            self.unsupported: list[str] = []
            self.backend = FakeBackend(Image.new("RGB", (800, 500), "#eeeeee"))

        def shoot(self, action: object) -> object:
            from types import SimpleNamespace

            return SimpleNamespace(action=action)

        def note_activity(self) -> None:
            pass

    from mmcli.capture import cdp

    read: list[tuple[str, str]] = []  # (the typing read back, the action that followed)
    monkeypatch.setattr(
        cdp, "read_back", lambda b, caps, f, nxt: read.append((caps[0].action.text, nxt.kind))
    )
    channel = CdpChannel.__new__(CdpChannel)
    channel.recorder = Recorder()  # type: ignore[assignment]
    channel.built = Built(channel.recorder, before=channel._read_typed)  # type: ignore[arg-type]
    channel._pointer, channel.dropped, channel._inputs = (0, 0), [], []
    channel.page = BrowserPage(CdpAddress("127.0.0.1", 9222), "PAGE", [])
    import threading
    import time

    channel._lock, channel.clock = threading.Lock(), time.monotonic
    mouse = "Input.dispatchMouseEvent"
    for method, params in [
        (mouse, {"type": "mouseMoved", "x": 239.5, "y": 58}),
        (mouse, {"type": "mousePressed", "x": 239.5, "y": 58, "button": "left", "clickCount": 1}),
        (mouse, {"type": "mouseReleased", "x": 239.5, "y": 58, "button": "left"}),
        ("Input.dispatchKeyEvent", {"type": "keyDown", "key": "A", "text": "A"}),
        ("Input.dispatchKeyEvent", {"type": "keyUp", "key": "A"}),
        ("Input.insertText", {"text": "dé"}),
        ("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Enter"}),
        ("Input.dispatchKeyEvent", {"type": "char", "key": "Enter", "text": "\r"}),
        ("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Enter"}),
        (mouse, {"type": "mouseWheel", "x": 10, "y": 10, "deltaX": 0, "deltaY": 300}),
        ("Runtime.evaluate", {"expression": "1"}),
        ("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": []}),
    ]:
        channel.on_command(method, params, "PAGE")
    channel.on_command(mouse, {"type": "mousePressed", "x": 5, "y": 5, "button": "left"}, "TAB2")
    actions = channel.built.builder.finish()
    assert [(a.kind, a.point if a.kind is not ActionKind.TYPE else a.text) for a in actions][
        :2
    ] == [(ActionKind.CLICK, (240, 58)), (ActionKind.TYPE, "Adé")]
    assert actions[2].kind is ActionKind.PRESS and actions[2].keys == ("enter",)
    assert actions[3].kind is ActionKind.SCROLL and actions[3].amount == -3
    assert channel.recorder.unsupported == [
        "touch events (Input.dispatchTouchEvent)",
        "input to another tab or window of the browser: mm drives one page",
    ]
    assert read == [("Adé", ActionKind.PRESS)]  # the field read before Enter goes on


def test_only_a_browser_page_found_through_discovery_gets_an_agent_endpoint() -> None:
    """A desktop's display has no page; a page's own socket URL has no target list to
    stand in front of: neither opens a DevTools channel."""
    from mmcli.backends import FakeBackend
    from mmcli.capture.cdp import CdpChannel

    desktop = FakeBackend(Image.new("RGB", (80, 50), "#eeeeee"))
    assert desktop.page() is None
    assert CdpChannel.open(object(), desktop) is None  # type: ignore[arg-type]

    class Socket(FakeBackend):
        def page(self) -> BrowserPage:
            return BrowserPage(CdpAddress("h", 1, "ws://h:1/devtools/page/P"), "P", [])

    assert CdpChannel.open(object(), Socket(desktop.screen)) is None  # type: ignore[arg-type]


def test_a_navigation_no_input_came_shortly_before_is_unexplained() -> None:
    from mmcli.capture.cdp import NAVIGATION_CAUSE, unexplained

    inputs = [10.0, 11.0, 12.0]
    assert unexplained([5.0], inputs) == []  # before the task: the agent opened the page
    assert unexplained([12.5, 12.0 + NAVIGATION_CAUSE], inputs) == []  # a click's doing
    assert unexplained([15.0], inputs) == [15.0]  # no input before it: script
    assert unexplained([15.0], []) == []


class IdleCompositor:
    """DevTools of a headless page whose compositor went idle: a screenshot goes
    unanswered until a screencast has woken it (`wakes` screencasts needed; None: never)."""

    def __init__(self, wakes: int | None) -> None:
        self.wakes = wakes
        self.calls: list[str] = []

    def call(self, method: str, params: object = None, **_: object) -> dict[str, object]:
        from mmcli.backends.devtools import Unanswered

        self.calls.append(method)
        woken = self.calls.count("Page.startScreencast")
        if method == "Page.captureScreenshot":
            if self.wakes is None or woken < self.wakes:
                raise Unanswered(f"the browser did not answer {method} within 3s")
            return {"data": "shot"}
        return {}


def idle_page(
    wakes: int | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[CdpBackend, IdleCompositor]:
    import mmcli.backends.cdp as cdp

    monkeypatch.setattr(cdp, "WAKE_WAIT", 0.0)
    backend = CdpBackend.__new__(CdpBackend)
    devtools = IdleCompositor(wakes)
    backend._devtools = devtools  # type: ignore[assignment]
    backend._dialog = None
    return backend, devtools


def test_a_screenshot_an_idle_page_leaves_unanswered_is_asked_again_once_woken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend, devtools = idle_page(1, monkeypatch)
    assert backend._screenshot({}) == {"data": "shot"}
    assert devtools.calls == [
        "Page.captureScreenshot",
        "Page.startScreencast",
        "Page.stopScreencast",
        "Page.captureScreenshot",
    ]


def test_a_page_that_never_answers_a_screenshot_is_an_error_after_a_few_tries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mmcli.backends.cdp import CAPTURE_TRIES
    from mmcli.errors import DisplayError

    backend, devtools = idle_page(None, monkeypatch)
    with pytest.raises(DisplayError, match=r"did not answer Page\.captureScreenshot 4 times"):
        backend._screenshot({})
    assert devtools.calls.count("Page.captureScreenshot") == CAPTURE_TRIES
