"""The VNC backend: a remote desktop through `rfb.RFBClient`.

The screen is the client's framebuffer, kept current by the server's updates on a reader
thread: a grab is a copy of it (from `FRESH_AFTER_CONNECT` after a connection on: a
server's first frames may be its screen from before), and each update is a change report
for `settle`. Input is RFB pointer and key events; text is typed as each character's X
keysym (the server finds the key, whatever its keyboard layout), keys and hotkeys by mm's
key names mapped to keysyms. RFB tells nothing of windows (`windows()` is None: the pixel
rules apply). Where the pointer is, a server tells only if it has the PointerPos extension
(x11vnc does), and then only the moves of others: `pointer()` is its last report, or mm's
own last move if that came later, or mm's last move alone where the server says nothing
(the fail-safe corner then cannot be reached from the remote side; Ctrl-C stops a replay).

A dropped connection is reconnected at the next grab or action, at most `RECONNECTS`
times in the backend's life; then `DisplayLost`, before any further action.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from mmcli.backends.base import SETTLE_LIMIT, Backend, ChangeLog, Settled
from mmcli.backends.lagmemory import recalled, remember
from mmcli.backends.rfb import BUTTONS, WHEEL_DOWN, WHEEL_UP, RFBClient
from mmcli.backends.rfbproxy import Input, PointerInput, RFBProxy
from mmcli.backends.serverlag import SERVER_LAG, ServerLag
from mmcli.backends.x11 import CLICK_SETTLE
from mmcli.backends.xtest import drag_path, keysym_of
from mmcli.desktop.display import VncAddress
from mmcli.errors import DisplayError, DisplayLost, UsageError
from mmcli.model import Action, ActionKind
from mmcli.pace import KEY_PAUSE_MIN
from mmcli.screen.fingerprint import Frame

PASSWORD_ENV = "MM_VNC_PASSWORD"
PASSWORD_FILE_ENV = "MM_VNC_PASSWORD_FILE"
RECONNECTS = 3
"""Reconnects allowed in a backend's life, `RECONNECT_PAUSE` x 1, 2, 3 s apart."""
RECONNECT_PAUSE = 0.5
FIRST_FRAME_WAIT = 10.0
FRESH_AFTER_CONNECT = 1.5
"""No screen is given out (`grab`) until this long after a connection's first frame: a
server may first send the screen it kept from before, not the one there now. x11vnc,
connected to within a moment of its last client leaving, sent the form without the dialog
that had opened since, and caught up 0.75-0.97 s later (measured): a check on that first
frame passed, and a click went under the dialog."""

KEYSYMS: dict[str, int] = {
    "enter": 0xFF0D, "return": 0xFF0D, "\n": 0xFF0D, "\r": 0xFF0D, "tab": 0xFF09,
    "\t": 0xFF09, "esc": 0xFF1B, "escape": 0xFF1B, "backspace": 0xFF08, "\b": 0xFF08,
    "delete": 0xFFFF, "del": 0xFFFF, "insert": 0xFF63, "home": 0xFF50, "end": 0xFF57,
    "pageup": 0xFF55, "pgup": 0xFF55, "pagedown": 0xFF56, "pgdn": 0xFF56,
    "left": 0xFF51, "up": 0xFF52, "right": 0xFF53, "down": 0xFF54, "space": 0x20,
    "shift": 0xFFE1, "shiftleft": 0xFFE1, "shiftright": 0xFFE2,
    "ctrl": 0xFFE3, "ctrlleft": 0xFFE3, "ctrlright": 0xFFE4,
    "alt": 0xFFE9, "altleft": 0xFFE9, "altright": 0xFFEA, "option": 0xFFE9,
    "win": 0xFFEB, "winleft": 0xFFEB, "winright": 0xFFEC, "super": 0xFFEB,
    "command": 0xFFEB, "cmd": 0xFFEB, "capslock": 0xFFE5, "numlock": 0xFF7F,
    "scrolllock": 0xFF14, "pause": 0xFF13, "printscreen": 0xFF61, "print": 0xFF61,
    "prtsc": 0xFF61, "prtscr": 0xFF61, "prntscrn": 0xFF61, "apps": 0xFF67, "menu": 0xFF67,
    "add": 0xFFAB, "subtract": 0xFFAD, "multiply": 0xFFAA, "divide": 0xFFAF,
    "decimal": 0xFFAE,
    **{f"f{n}": 0xFFBE + n - 1 for n in range(1, 25)},
    **{f"num{n}": 0xFFB0 + n for n in range(10)},
}  # fmt: skip
"""mm's key names (pyautogui's) as X keysyms; a single character is its own keysym."""


SHIFTS = {"shift", "shiftleft", "shiftright"}
CLICK_BUTTONS = 0b111
"""The left, middle and right buttons in RFB's button mask (the wheel is not a click)."""


def keysym(key: str) -> int | None:
    """The keysym of a key name or a single character; None for an unknown name."""
    if key in KEYSYMS:
        return KEYSYMS[key]
    if len(key) == 1:
        return keysym_of(key)
    return KEYSYMS.get(key.lower())


def vnc_password() -> str | None:
    """The password from $MM_VNC_PASSWORD, else the first line of the file named by
    $MM_VNC_PASSWORD_FILE; None when neither is set."""
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV]
    path = os.environ.get(PASSWORD_FILE_ENV)
    if not path:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{PASSWORD_FILE_ENV}: cannot read {path} ({e})") from None
    if not lines or not lines[0]:
        raise UsageError(f"{PASSWORD_FILE_ENV}: {path} is empty")
    return lines[0]


class VncBackend(Backend):
    """A remote desktop over VNC: its framebuffer, pointer and key events."""

    def __init__(self, address: VncAddress) -> None:
        self.address = address
        self._password = vnc_password()
        self._log = ChangeLog()
        self.reconnects = 0
        self._fresh_at = 0.0
        """When the connection's screen can be trusted as the one there now."""
        self._client = self._connect()
        self._position = (self._client.width // 2, self._client.height // 2)
        self._clicked_at = 0.0
        self._moved_at = 0.0
        self._server = f"{address.host}:{address.port}"
        self.lag = ServerLag(self._log, recalled(self._server))
        """How late this server reports a change, learned from the clicks given (and
        by earlier connections to it: `lagmemory`)."""
        self._sent_at = 0.0
        """When an agent's input through `open_proxy` was last passed on."""

    def _connect(self) -> RFBClient:
        client = RFBClient(
            self.address.host, self.address.port, self._password, on_update=self._log.note
        )
        if not client.wait_update(0, FIRST_FRAME_WAIT):
            client.close()
            if client.error is not None:
                raise DisplayError(f"{self.address} broke the protocol: {client.error}")
            raise DisplayError(f"{self.address} sent no screen in {FIRST_FRAME_WAIT:.0f}s")
        self._fresh_at = time.monotonic() + FRESH_AFTER_CONNECT
        return client

    def _live(self) -> RFBClient:
        """The connection, reconnected if it dropped (within the backend's allowance)."""
        client = self._client
        if client.error is None:
            return client
        why = client.error
        client.close()
        while self.reconnects < RECONNECTS:
            self.reconnects += 1
            time.sleep(RECONNECT_PAUSE * self.reconnects)
            try:
                self._client = self._connect()
            except DisplayError as e:
                why = str(e)
                continue
            self._log.note()
            return self._client
        raise DisplayLost(
            f"lost the VNC connection to {self.address} ({why}); "
            f"{RECONNECTS} reconnects used: stopped before the next action"
        )

    def size(self) -> tuple[int, int]:
        client = self._live()
        return (client.width, client.height)

    def grab(self) -> Frame:
        client = self._live()
        wait = self._fresh_at - time.monotonic()
        if wait > 0:  # the server's first frames may show the screen from before
            time.sleep(wait)
        raw, width, height = client.snapshot()
        return Frame(raw, width, height)

    def pointer(self) -> tuple[int, int]:
        """Where the server last said the pointer is (moved by another VNC client, or on
        the remote side), unless mm moved it since (a server does not echo a client's
        own moves); where mm last put it if the server does not say."""
        client = self._client
        if client.pointer_at is not None and client.pointer_reported > self._moved_at:
            return client.pointer_at
        return self._position

    def move(self, x: int, y: int) -> None:
        self._let_click_land()
        self._live().pointer_event(x, y)
        self._position = (x, y)
        self.input_at = self._moved_at = time.monotonic()

    def valid_key(self, key: str) -> bool:
        return keysym(key) is not None

    def changes(self) -> ChangeLog | None:
        return self._log

    def settle(
        self,
        quiet: float = 0.03,
        limit: float = SETTLE_LIMIT,
        since: float = 0.0,
        windows: bool = False,
    ) -> Settled:
        """As `Backend.settle`, still for at least `SERVER_LAG`, and no sooner than the
        server's lag after the last input (`ServerLag.after_input`): the server's report of
        a change comes after the change."""
        quiet, floor, limit = self._stillness(quiet, limit)
        return super().settle(quiet, limit, max(since, floor), windows)

    def wait_still(self, quiet: float = 0.03, limit: float = SETTLE_LIMIT) -> bool:
        quiet, floor, limit = self._stillness(quiet, limit)
        return self._log.wait_still(quiet, floor, time.monotonic() + limit)

    def _stillness(self, quiet: float, limit: float) -> tuple[float, float, float]:
        """`quiet` at least `SERVER_LAG`; the floor to be still `quiet` from, so that the
        screen is still no sooner than the server's lag after the last input (mm's own,
        or an agent's through `open_proxy`); `limit` long enough for both."""
        quiet = max(quiet, SERVER_LAG)
        lag = self.lag.after_input()
        last = max(self.input_at, self._sent_at)
        return quiet, last + max(0.0, lag - quiet), max(limit, 2 * quiet, 2 * lag)

    def perform(self, action: Action) -> None:
        client = self._live()
        k = action.kind
        if k in (ActionKind.CLICK, ActionKind.SCROLL, ActionKind.MOVE, ActionKind.DRAG):
            self._let_click_land()
        try:
            if k is ActionKind.CLICK:
                x, y = self._at(action.x, action.y)
                mask = BUTTONS.get(action.button, 1)
                client.pointer_event(x, y)
                for _ in range(action.clicks):
                    client.pointer_event(x, y, mask)
                    client.pointer_event(x, y)
                self._position = (x, y)
            elif k is ActionKind.TYPE:
                self._type(client, action.text, action.typing_pause())
            elif k is ActionKind.PRESS:
                for i in range(action.clicks):
                    if i:
                        time.sleep(KEY_PAUSE_MIN)
                    for key in action.keys:
                        self._tap(client, self._keysym(key))
            elif k is ActionKind.HOTKEY:
                # With shift held a viewer sends the shifted letter's keysym (shift+x is
                # 'X'): a server gives each keysym exactly, lifting shift for an 'x'.
                shifted = any(key.lower() in SHIFTS for key in action.keys)
                syms = [
                    self._keysym(key.upper() if shifted and len(key) == 1 else key)
                    for key in action.keys
                ]
                for sym in syms:
                    client.key_event(sym, True)
                for sym in reversed(syms):
                    client.key_event(sym, False)
            elif k is ActionKind.SCROLL:
                x, y = self._at(action.x, action.y)
                wheel = WHEEL_UP if action.amount > 0 else WHEEL_DOWN
                client.pointer_event(x, y)
                for _ in range(abs(action.amount)):
                    client.pointer_event(x, y, wheel)
                    client.pointer_event(x, y)
                self._position = (x, y)
            elif k is ActionKind.MOVE:
                self._position = self._at(action.x, action.y)
                client.pointer_event(*self._position)
            elif k is ActionKind.DRAG:
                self._drag(client, action)
            else:  # pragma: no cover - exhaustive over ActionKind
                raise ValueError(f"unknown action {k}")
        finally:
            self.input_at = time.monotonic()
            if action.point is not None:
                self._moved_at = self.input_at
            if k is ActionKind.CLICK:
                self._clicked_at = self.input_at
                self._teach(self._position)

    def _keysym(self, key: str) -> int:
        sym = keysym(key)
        if sym is None:
            raise UsageError(f"unknown key {key!r}")
        return sym

    @staticmethod
    def _tap(client: RFBClient, sym: int) -> None:
        client.key_event(sym, True)
        client.key_event(sym, False)

    def _type(self, client: RFBClient, text: str, pause: float) -> None:
        for i, char in enumerate(text):
            if i:
                time.sleep(pause)
            self._tap(client, KEYSYMS.get(char) or keysym_of(char))

    def _drag(self, client: RFBClient, action: Action) -> None:
        x, y = self._at(action.x, action.y)
        x2, y2 = self._at(action.x2, action.y2)
        mask = BUTTONS.get(action.button, 1)
        client.pointer_event(x, y)
        client.pointer_event(x, y, mask)
        try:
            for point in drag_path(x, y, x2, y2):
                client.pointer_event(*point, mask)
        finally:  # never leave the button held down
            client.pointer_event(x2, y2)
            self._position = (x2, y2)

    def _at(self, x: int | None, y: int | None) -> tuple[int, int]:
        here = self.pointer()
        return (here[0] if x is None else x, here[1] if y is None else y)

    def _teach(self, point: tuple[int, int]) -> None:
        """A click at `point` just now teaches `lag`, once the connection's first screens
        are past (x11vnc sent its first update 1.9 s after a click given right after a
        connection, 0.4 s after the next)."""
        now = time.monotonic()
        if now >= self._fresh_at:
            self.lag.clicked(now, point)

    def _let_click_land(self) -> None:
        wait = self._clicked_at + CLICK_SETTLE - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    takes_vnc_clients = True
    takes_local_input = False

    def open_proxy(
        self,
        on_input: Callable[[Input], None],
        on_refused: Callable[[str], None],
        on_dropped: Callable[[str], None],
    ) -> RFBProxy:
        """An endpoint in front of this server for an agent's VNC client: it logs in with
        this backend's password, which the agent never sees. The agent's clicks teach
        `lag` as mm's own do."""
        held = 0

        def heard(received: Input) -> None:
            nonlocal held
            on_input(received)  # (the recorder keeps the screen first: the input is sent now)
            self._sent_at = time.monotonic()
            if isinstance(received, PointerInput):
                if received.buttons & ~held & CLICK_BUTTONS:
                    self._teach((received.x, received.y))
                held = received.buttons

        return RFBProxy(
            self.address, self._password, heard, on_refused=on_refused, on_dropped=on_dropped
        )

    def close(self) -> None:
        remember(self._server, self.lag.lags)
        self._client.close()
