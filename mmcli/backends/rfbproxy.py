"""A VNC endpoint for an agent, in front of the real server: every pointer and key event
the agent sends is handed to a listener before it is passed on.

`RFBProxy` listens on 127.0.0.1 (a free port) for the run. Each connection must answer a
VNC auth challenge for the run's own password (`token`): another local user, who cannot
read the agent's environment, gets no screen and sends no input. Once in, the proxy opens
its own connection to the real server (with the real password, which the agent never
sees), hands the server's greeting on, and then

- passes what the server sends to the agent through unchanged (pixels, the pointer's
  shape, the clipboard);
- reads what the agent sends message by message: a pointer or key event, or the
  clipboard's text, goes to `on_input` first, which may take its time (the recorder keeps
  the screen before it), and only then to the server. Pixel format and update requests
  pass as they are. The encodings the agent asks for are kept to those that make the
  server send pixels and pseudo-rectangles only: an extension with input messages of its
  own (QEMU's key events with keycodes, relative pointer motion, desktop resizing) is
  never enabled, so every input the server gets is one this module has read.

A message of a kind the proxy does not know ends that connection and is reported to
`on_refused`: the run cannot be recorded faithfully. A connection to the server that drops
while the agent is connected ends the agent's connection too (`on_dropped`): what the
agent sent last may not have arrived.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from mmcli.backends.rfb import SECURITY_VNC, client_handshake, read_exactly
from mmcli.backends.vncauth import vnc_response
from mmcli.desktop.display import VncAddress
from mmcli.errors import DisplayError

KEY_EVENT, POINTER_EVENT, CLIENT_CUT_TEXT = 4, 5, 6
SET_PIXEL_FORMAT, SET_ENCODINGS, UPDATE_REQUEST = 0, 2, 3
PASSED_ENCODINGS = frozenset(
    {
        *range(0, 32),  # Raw, CopyRect, RRE, Hextile, Tight, ZRLE, ...: pixels
        *range(-32, -22),  # Tight's JPEG quality levels
        *range(-256, -246),  # compression levels
        -223,  # DesktopSize
        -224,  # LastRect
        -232,  # PointerPos
        -239,  # Cursor
        -240,  # XCursor
        -307,  # DesktopName
        -314,  # the cursor with alpha
    }
)
"""Encodings an agent may ask for: they change only what the server sends. The others
(QEMU extended key events and pointer motion, ExtendedDesktopSize, Fence, continuous
updates, xvp, audio, gii) enable client messages the recording could not read."""
MAX_CUT_TEXT = 1 << 20
REFUSED_PAUSE = 0.5
"""A connection with the wrong password waits this long before it is closed."""
TOKEN_CHARS = 8
"""VNC auth uses the first 8 characters of a password: the token is that long."""
LISTEN_BACKLOG = 8


@dataclass(frozen=True)
class PointerInput:
    x: int
    y: int
    buttons: int
    """The mask of buttons held: 1 left, 2 middle, 4 right, 8/16 wheel up/down, 32/64
    wheel left/right."""


@dataclass(frozen=True)
class KeyInput:
    keysym: int
    down: bool


@dataclass(frozen=True)
class CutText:
    text: str
    """The agent put this on the remote clipboard (Latin-1, as RFB has it)."""


Input = PointerInput | KeyInput | CutText
ProxyOpener = Callable[
    [Callable[[Input], None], Callable[[str], None], Callable[[str], None]], "RFBProxy | None"
]
"""Opens an endpoint in front of a display: given what to call with each input, with a
message the endpoint cannot read, and when the server's connection drops."""


def new_token() -> str:
    """A password for one run: 8 random characters (about 48 bits)."""
    return secrets.token_urlsafe(TOKEN_CHARS)[:TOKEN_CHARS]


class RFBProxy:
    """The endpoint: `address` (`HOST:PORT`) and `token` are what the agent is given."""

    def __init__(
        self,
        upstream: VncAddress,
        password: str | None,
        on_input: Callable[[Input], None],
        *,
        on_refused: Callable[[str], None] | None = None,
        on_dropped: Callable[[str], None] | None = None,
        token: str | None = None,
    ) -> None:
        self.upstream = upstream
        self._password = password
        self.on_input = on_input
        self.on_refused = on_refused or (lambda why: None)
        self.on_dropped = on_dropped or (lambda why: None)
        self.token = token or new_token()
        self.refused_logins = 0
        self._input_lock = threading.Lock()
        """One input at a time, across connections: the order the server gets them in."""
        self._closing = False
        self._sockets: set[socket.socket] = set()
        self._sockets_lock = threading.Lock()
        self._serving: set[threading.Thread] = set()
        """The connections' threads still reading what their agent sent."""
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(LISTEN_BACKLOG)
        self.port = self._server.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, name="mm-vnc-proxy", daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> RFBProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def drain(self, timeout: float) -> bool:
        """No new connection; wait until every connection has been read to its end (what
        an agent sent before it exited is told and passed on, not cut off). False when
        one is still open after `timeout` seconds (a process the agent left behind)."""
        with contextlib.suppress(OSError):
            self._server.close()
        deadline = time.monotonic() + timeout
        with self._sockets_lock:
            serving = list(self._serving)
        for thread in serving:
            thread.join(max(deadline - time.monotonic(), 0))
        return not any(thread.is_alive() for thread in serving)

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(OSError):
            self._server.close()
        with self._sockets_lock:
            open_sockets = list(self._sockets)
        for sock in open_sockets:
            _shut(sock)
        self._thread.join(timeout=2)

    # ---- connections ----------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closing:
            try:
                agent, _ = self._server.accept()
            except OSError:
                return
            thread = threading.Thread(
                target=self._serve, args=(agent,), name="mm-vnc-conn", daemon=True
            )
            with self._sockets_lock:
                self._serving.add(thread)
            thread.start()

    def _track(self, sock: socket.socket) -> None:
        with self._sockets_lock:
            self._sockets.add(sock)

    def _serve(self, agent: socket.socket) -> None:
        self._track(agent)
        agent.settimeout(30)
        server: socket.socket | None = None
        try:
            try:
                if not self._greet(agent):
                    return
            except (OSError, struct.error):
                return  # not a VNC client, or one that gave up: nothing reached the server
            try:
                server = self._open_upstream()
                self._track(server)
                hello = client_handshake(server, str(self.upstream), self._password)
                server.settimeout(None)
            except (OSError, DisplayError) as e:
                self.on_dropped(str(e))
                return
            agent.settimeout(None)
            with contextlib.suppress(OSError):
                agent.sendall(hello.message())
                threading.Thread(
                    target=self._relay, args=(server, agent), name="mm-vnc-relay", daemon=True
                ).start()
                self._pump(agent, server)
        finally:
            for sock in (agent, server):
                if sock is not None:
                    _shut(sock)
                    with self._sockets_lock:
                        self._sockets.discard(sock)
            with self._sockets_lock:
                self._serving.discard(threading.current_thread())

    def _greet(self, agent: socket.socket) -> bool:
        """The server's side of the handshake toward the agent: version, VNC auth with
        the run's token, ClientInit. False for a connection that did not get in."""
        agent.sendall(b"RFB 003.008\n")
        version = read_exactly(agent, 12)
        if not version.startswith(b"RFB 003."):
            return False
        minor = int(version[8:11]) if version[8:11].isdigit() else 0
        if minor >= 7:
            agent.sendall(bytes([1, SECURITY_VNC]))
            if read_exactly(agent, 1)[0] != SECURITY_VNC:
                return False
        else:
            agent.sendall(struct.pack(">I", SECURITY_VNC))
        challenge = os.urandom(16)
        agent.sendall(challenge)
        answer = read_exactly(agent, 16)
        if not hmac.compare_digest(answer, vnc_response(self.token, challenge)):
            self.refused_logins += 1
            time.sleep(REFUSED_PAUSE)
            reason = b"this endpoint is one mm run's: its password is in MM_VNC_PASSWORD"
            tail = struct.pack(">I", len(reason)) + reason if minor >= 8 else b""
            agent.sendall(struct.pack(">I", 1) + tail)
            return False
        agent.sendall(struct.pack(">I", 0))
        read_exactly(agent, 1)  # ClientInit: shared or not, the proxy's own is shared
        return True

    def _open_upstream(self) -> socket.socket:
        try:
            server = socket.create_connection((self.upstream.host, self.upstream.port), 10)
        except OSError as e:
            raise DisplayError(f"cannot connect to the VNC server {self.upstream}: {e}") from None
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return server

    def _relay(self, server: socket.socket, agent: socket.socket) -> None:
        """The server's messages, to the agent as they are. The server going away is
        reported; the agent going away is the agent's business."""
        try:
            while True:
                try:
                    data = server.recv(1 << 16)
                    if not data:
                        raise ConnectionError("the VNC server closed the connection")
                except OSError as e:
                    if not self._closing and not _closed(agent):
                        self.on_dropped(f"{self.upstream}: {e}")
                    return
                agent.sendall(data)
        except OSError:
            return
        finally:
            _shut(agent)

    def _pump(self, agent: socket.socket, server: socket.socket) -> None:
        """The agent's messages, read one by one; input is told before it is passed on."""
        while True:
            try:
                kind = agent.recv(1)
                message = self._message(kind[0], agent) if kind else None
            except (OSError, struct.error):
                return  # the agent hung up
            if message is None:
                return
            data, event = message
            try:
                if event is None:
                    server.sendall(data)
                    continue
                with self._input_lock:
                    self.on_input(event)
                    server.sendall(data)
            except OSError as e:
                if not self._closing:
                    self.on_dropped(f"{self.upstream}: {e}")
                return

    def _message(self, kind: int, agent: socket.socket) -> tuple[bytes, Input | None] | None:
        """One client message, whole, and the input it is (None: not input); None for a
        message the proxy does not know (the connection then ends)."""

        def read(n: int) -> bytes:
            return read_exactly(agent, n)

        head = bytes([kind])
        if kind == SET_PIXEL_FORMAT:
            return head + read(19), None
        if kind == UPDATE_REQUEST:
            return head + read(9), None
        if kind == SET_ENCODINGS:
            (count,) = struct.unpack(">xH", read(3))
            asked = struct.unpack(f">{count}i", read(4 * count))
            kept = [e for e in asked if e in PASSED_ENCODINGS]
            return struct.pack(f">BxH{len(kept)}i", kind, len(kept), *kept), None
        if kind == KEY_EVENT:
            body = read(7)
            down, keysym = struct.unpack(">BxxI", body)
            return head + body, KeyInput(keysym, bool(down))
        if kind == POINTER_EVENT:
            body = read(5)
            buttons, x, y = struct.unpack(">BHH", body)
            return head + body, PointerInput(x, y, buttons)
        if kind == CLIENT_CUT_TEXT:
            body = read(7)
            (length,) = struct.unpack(">3xI", body)
            if length > MAX_CUT_TEXT:
                self.on_refused(f"clipboard text of {length} bytes sent to the VNC server")
                return None
            text = read(length)
            return head + body + text, CutText(text.decode("latin-1"))
        self.on_refused(f"RFB message type {kind}, which mm cannot record")
        return None


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def _closed(sock: socket.socket) -> bool:
    return sock.fileno() == -1
