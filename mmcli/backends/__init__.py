"""OS access behind one small interface: grab the screen, read the pointer, perform input.

`open_backend()` picks the implementation when it is called, from the session it finds
(a VNC server for `vnc://HOST:PORT`; X11 where `DISPLAY` is set; a clear error for a
Wayland-only session or another OS); tests use `FakeBackend`. No backend sets a
third-party library's process-wide settings.

- `base`: the `Backend` interface and what every backend shares (checked input, waits).
- `x11`: mss for pixels, XTEST for input (`xinput`, through `xtest` on the backend's own
  connection to the display named); `damage`: the X server's change reports; `xrecord`: the
  display's input events (RECORD); `x11windows`: the window structure the window
  manager tells (EWMH): the listed and the active window, every top-level window
  stacked with its type.
- `xtest`: input through XTEST with python-xlib's protocol layer alone: `mm act` outside
  a recorder gives its one action through it, on a connection of its own.
- `vnc`: a remote desktop over VNC, through `rfb` (a small RFB client) and `vncauth`
  (VNC password authentication); `rfbproxy`: an endpoint in front of the server for an
  agent's own VNC client, each input handed over before it is passed on.
- `cdp`: a browser's page through its DevTools (`devtools`: the protocol's connection;
  `cdpproxy`: an endpoint in front of the browser for an agent's own DevTools client).
- `fake`: a scripted screen for unit tests.

May import: the vocabulary, `screen`, `store`, `readback` (and `desktop`, its own layer).
"""

from __future__ import annotations

import os
import sys

from mmcli.errors import DisplayError

TYPE_CHECKING = False  # as typing has it, without loading typing (`mm act`: backends.xtest)
if TYPE_CHECKING:
    from typing import Any

    from mmcli.backends.base import Backend, in_failsafe_corner
    from mmcli.backends.fake import FakeBackend


def __getattr__(name: str) -> Any:
    """`Backend`, `FakeBackend` and `in_failsafe_corner` imported when first asked for:
    `base` loads numpy, which `xinput` (`mm act` outside a recorder) does without."""
    if name in ("Backend", "in_failsafe_corner"):
        from mmcli.backends import base

        return getattr(base, name)
    if name == "FakeBackend":
        from mmcli.backends.fake import FakeBackend

        return FakeBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_backend(display: str | None = None) -> Backend:
    """The backend for `display` (`--display`), else $MM_DISPLAY, else the X display in
    $DISPLAY: `vnc://HOST[:PORT]` is a remote desktop over VNC, `cdp://HOST[:PORT]` (or a
    page's `ws://` URL) a browser's page through its DevTools, anything else an X display
    name, which the backend connects to by name (the environment is left as it is; an
    agent is given it, `Backend.agent_env`)."""
    from mmcli.desktop.display import cdp_address, chosen, vnc_address

    display = chosen(display)
    if not display:
        if os.environ.get("WAYLAND_DISPLAY"):
            raise DisplayError(
                "a Wayland session without X: mm drives X11 displays; set DISPLAY to "
                "XWayland's display, or run the task in Xvfb (see `mm doctor`)"
            )
        if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
            raise DisplayError(f"no backend for {sys.platform}: mm drives X11 displays")
        raise DisplayError("no display: DISPLAY is not set (start Xvfb, or see `mm doctor`)")
    address = vnc_address(display)
    if address is not None:
        from mmcli.backends.vnc import VncBackend

        return VncBackend(address)
    page = cdp_address(display)
    if page is not None:
        from mmcli.backends.cdp import CdpBackend

        return CdpBackend(page)
    from mmcli.backends.x11 import X11Backend

    return X11Backend(display)


__all__ = ["Backend", "FakeBackend", "in_failsafe_corner", "open_backend"]
