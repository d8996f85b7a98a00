"""`--display cdp://`: the address parsed, keys as DevTools dispatches them, a page's own
dialog drawn over the screen, with no browser (the browser itself: tests/e2e/test_cdp.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

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
