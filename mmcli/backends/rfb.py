"""A small RFB (VNC) client: the protocol version 3.3 to 3.8 handshake, security types
None and VNC auth, a 32-bit true-colour framebuffer kept current on a reader thread, and
pointer and key events.

The pixel format asked for is 32 bpp little-endian with red at bit 16, green at 8, blue
at 0: the bytes arrive as B, G, R, X, the layout `Frame` takes from mss, so a grab is a
copy of the buffer. Encodings: Raw, CopyRect and the DesktopSize, Cursor and PointerPos
pseudo-encodings: a server that can send the pointer's shape apart (it is dropped) draws
no pointer into the screen, which then compares with a local grab (which has none); a
server that sends the pointer's position tells where the pointer really is. After
each update the reader asks for the next one (incremental), so the framebuffer follows
the remote screen at the server's pace; each non-empty update is reported to a callback
(the backend's change log).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from mmcli.backends.vncauth import vnc_response
from mmcli.errors import DisplayError, DisplayLost
from mmcli.screen.fingerprint import Rect

RAW, COPY_RECT, DESKTOP_SIZE, CURSOR, POINTER_POS = 0, 1, -223, -239, -232
ENCODINGS = (RAW, COPY_RECT, DESKTOP_SIZE, CURSOR, POINTER_POS)
SECURITY_NONE, SECURITY_VNC = 1, 2
PIXEL_FORMAT = struct.pack(">BBBBHHHBBB3x", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
"""bpp, depth, big-endian, true-colour, red/green/blue max, red/green/blue shift."""
BUTTONS = {"left": 1, "middle": 2, "right": 4}
WHEEL_UP, WHEEL_DOWN = 8, 16
MAX_SIDE = 8192
"""A framebuffer side beyond this is a broken server, not a screen."""


MAX_CURSOR = 1024
"""The largest cursor (a side, px) a server may send: a bigger one is a broken server."""
SKIP_CHUNK = 1 << 16
"""Bytes read at a time of what is skipped (a clipboard text, a cursor's shape)."""


class ServerInit(NamedTuple):
    """What a server says of its screen once the handshake is done."""

    width: int
    height: int
    pixel_format: bytes
    name: bytes

    def message(self) -> bytes:
        """As the server sent it (to hand on to another client)."""
        return (
            struct.pack(">HH", self.width, self.height)
            + self.pixel_format
            + (struct.pack(">I", len(self.name)) + self.name)
        )


def read_exactly(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """`n` bytes from `sock`; with `deadline` (monotonic), all of them by then, however
    slowly they trickle in (`TimeoutError`). Callers bound `n` first: it is allocated."""
    buffer = bytearray(n)
    view = memoryview(buffer)
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the other side is too slow to answer")
            sock.settimeout(left)
        chunk = sock.recv_into(view[got:], n - got)
        if chunk == 0:
            raise ConnectionError("the other side closed the connection")
        got += chunk
    return bytes(buffer)


HANDSHAKE_TIMEOUT = 10.0
"""Seconds the whole handshake may take, whatever a server sends meanwhile (a byte every
3 s must not hold mm for ever)."""


def client_handshake(
    sock: socket.socket, address: str, password: str | None, timeout: float = HANDSHAKE_TIMEOUT
) -> ServerInit:
    """The client's side of the handshake up to ServerInit: version (3.3 to 3.8), security
    (None or VNC password), ClientInit with the shared flag (other viewers stay); all of
    it within `timeout` seconds (`TimeoutError`)."""
    deadline = time.monotonic() + timeout

    def read(n: int) -> bytes:
        return read_exactly(sock, n, deadline)

    def reason() -> str:
        (length,) = struct.unpack(">I", read(4))
        return read(min(length, 4096)).decode("utf-8", "replace")

    banner = read(12)
    if not banner.startswith(b"RFB ") or banner[7:8] != b".":
        raise DisplayError(f"{address} is not a VNC server (it said {banner[:12]!r})")
    major, minor = int(banner[4:7]), int(banner[8:11])
    minor = 8 if (major, minor) >= (3, 8) else 7 if (major, minor) >= (3, 7) else 3
    sock.sendall(b"RFB 003.%03d\n" % minor)
    if minor == 3:
        (chosen,) = struct.unpack(">I", read(4))
        if chosen == 0:
            raise DisplayError(f"VNC server {address} refused: {reason()}")
    else:
        (count,) = struct.unpack(">B", read(1))
        if count == 0:
            raise DisplayError(f"VNC server {address} refused: {reason()}")
        chosen = _choose(address, set(read(count)), password)
        sock.sendall(bytes([chosen]))
    if chosen == SECURITY_VNC:
        if password is None:
            raise DisplayError(
                f"VNC server {address} asks for a password: set MM_VNC_PASSWORD "
                "or MM_VNC_PASSWORD_FILE"
            )
        sock.sendall(vnc_response(password, read(16)))
    elif chosen != SECURITY_NONE:
        raise DisplayError(f"VNC server {address} wants security type {chosen}")
    if chosen == SECURITY_VNC or minor == 8:
        (result,) = struct.unpack(">I", read(4))
        if result != 0:
            why = reason() if minor == 8 else "authentication failed"
            raise DisplayError(f"VNC server {address} refused the password: {why}")
    sock.sendall(b"\x01")  # ClientInit: shared, other viewers stay connected
    width, height = struct.unpack(">HH", read(4))
    pixel_format = read(16)
    (name_length,) = struct.unpack(">I", read(4))
    if name_length > 65536:
        raise DisplayError(f"VNC server {address} sent a desktop name of {name_length} bytes")
    return ServerInit(width, height, pixel_format, read(name_length))


def _choose(address: str, offered: set[int], password: str | None) -> int:
    if password is not None and SECURITY_VNC in offered:
        return SECURITY_VNC
    if SECURITY_NONE in offered:
        return SECURITY_NONE
    if SECURITY_VNC in offered:
        return SECURITY_VNC  # refused with its own message: no password given
    names = ", ".join(str(t) for t in sorted(offered))
    raise DisplayError(
        f"VNC server {address} offers only security types {names}; mm speaks None "
        "(1) and VNC password (2)"
    )


class RFBClient:
    """One connection to a VNC server; `framebuffer` is the remote screen, BGRX."""

    def __init__(
        self,
        host: str,
        port: int,
        password: str | None = None,
        timeout: float = 10.0,
        on_update: Callable[[int, list[Rect] | None], None] | None = None,
    ) -> None:
        """`on_update(1, areas)` after each update that drew something: the rectangles
        drawn (None: the whole screen, resized)."""
        self.address = f"{host}:{port}"
        self.on_update = on_update
        try:
            self._sock = socket.create_connection((host, port), timeout)
        except OSError as e:
            raise DisplayError(f"cannot connect to the VNC server {self.address}: {e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._send_lock = threading.Lock()
        self._frame_lock = threading.Lock()
        self._updated = threading.Condition(self._frame_lock)
        self.updates = 0
        self.pointer_at: tuple[int, int] | None = None
        """The pointer as the server last reported it (PointerPos), if it does: at the
        start, and when something other than this client moves it."""
        self.pointer_reported = 0.0
        self.error: str | None = None
        """Why the connection ended, once it has."""
        try:
            self._handshake(password)
        except OSError as e:
            self._sock.close()
            raise DisplayError(f"VNC server {self.address}: {e}") from None
        except DisplayError:
            self._sock.close()
            raise
        self._sock.settimeout(None)
        self._reader = threading.Thread(target=self._read_loop, name="mm-rfb", daemon=True)
        self._reader.start()

    def _handshake(self, password: str | None) -> None:
        hello = client_handshake(self._sock, self.address, password)
        self.name = hello.name.decode("utf-8", "replace")
        self._resize(hello.width, hello.height)
        encodings = struct.pack(f">BxH{len(ENCODINGS)}i", 2, len(ENCODINGS), *ENCODINGS)
        self._sock.sendall(b"\x00\x00\x00\x00" + PIXEL_FORMAT + encodings)
        self._request(incremental=False)

    # ---- the screen -----------------------------------------------------------------------

    def _resize(self, width: int, height: int) -> None:
        if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
            raise DisplayError(f"VNC server {self.address} sent a {width}x{height} screen")
        self.width, self.height = width, height
        self.framebuffer = bytearray(width * height * 4)
        self._pixels = np.frombuffer(self.framebuffer, np.uint8).reshape(height, width, 4)

    def _request(self, incremental: bool) -> None:
        message = struct.pack(">BBHHHH", 3, int(incremental), 0, 0, self.width, self.height)
        with self._send_lock:
            self._sock.sendall(message)

    def snapshot(self) -> tuple[bytes, int, int]:
        """A copy of the framebuffer as it is now, and its size."""
        with self._frame_lock:
            return bytes(self.framebuffer), self.width, self.height

    def wait_update(self, after: int, timeout: float) -> bool:
        """Wait until more than `after` updates have arrived; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._updated:
            while self.updates <= after and self.error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._updated.wait(left)
        return self.updates > after

    def _read_loop(self) -> None:
        try:
            while True:
                kind = self._read(1)[0]
                if kind == 0:
                    self._read_update()
                elif kind == 1:  # SetColourMapEntries: not sent for true colour
                    _, _, count = struct.unpack(">BHH", self._read(5))
                    self._read(6 * count)
                elif kind == 2:  # Bell
                    pass
                elif kind == 3:  # ServerCutText
                    (length,) = struct.unpack(">3xI", self._read(7))
                    if length > self.width * self.height * 4:
                        raise DisplayError(f"a clipboard text of {length} bytes")
                    self._skip(length)
                else:
                    raise DisplayError(f"unknown server message {kind}")
        except Exception as e:  # MemoryError included: a dead reader must say so
            with self._updated:
                self.error = str(e) or type(e).__name__
                self._updated.notify_all()

    def _read_update(self) -> None:
        (count,) = struct.unpack(">xH", self._read(3))
        drawn = 0
        areas: list[Rect] | None = []
        for _ in range(count):
            x, y, w, h, encoding = struct.unpack(">HHHHi", self._read(12))
            if encoding == DESKTOP_SIZE:
                with self._frame_lock:
                    self._resize(w, h)
                drawn += 1
                areas = None  # the whole screen
                continue
            if encoding == POINTER_POS:  # where the pointer is, whoever moved it
                self.pointer_at = (x, y)
                self.pointer_reported = time.monotonic()
                continue
            if encoding == CURSOR:  # the pointer's shape: not part of the screen
                if w > min(self.width, MAX_CURSOR) or h > min(self.height, MAX_CURSOR):
                    raise DisplayError(f"a {w}x{h} cursor")
                self._skip(w * h * 4 + (w + 7) // 8 * h)
                continue
            if x + w > self.width or y + h > self.height:
                raise DisplayError(f"update {w}x{h}+{x}+{y} outside the screen")
            if encoding == RAW:
                data = self._read(w * h * 4)
                with self._frame_lock:
                    self._pixels[y : y + h, x : x + w] = np.frombuffer(data, np.uint8).reshape(
                        h, w, 4
                    )
            elif encoding == COPY_RECT:
                sx, sy = struct.unpack(">HH", self._read(4))
                with self._frame_lock:
                    self._pixels[y : y + h, x : x + w] = self._pixels[sy : sy + h, sx : sx + w]
            else:
                raise DisplayError(f"encoding {encoding}, which was not asked for")
            drawn += 1
            if areas is not None:
                areas.append(Rect(x, y, w, h))
        with self._updated:
            self.updates += 1
            self._updated.notify_all()
        if drawn and self.on_update is not None:
            self.on_update(1, areas)
        self._request(incremental=True)

    def _read(self, n: int) -> bytes:
        return read_exactly(self._sock, n)

    def _skip(self, n: int) -> None:
        """Read `n` bytes and keep none of them (no more than a chunk held at once)."""
        while n > 0:
            n -= len(read_exactly(self._sock, min(n, SKIP_CHUNK)))

    # ---- input ----------------------------------------------------------------------------

    def pointer_event(self, x: int, y: int, buttons: int = 0) -> None:
        self._send(struct.pack(">BBHH", 5, buttons, max(0, x), max(0, y)))

    def key_event(self, keysym: int, down: bool) -> None:
        self._send(struct.pack(">BBxxI", 4, int(down), keysym))

    def _send(self, message: bytes) -> None:
        if self.error is not None:
            raise DisplayLost(f"lost the VNC connection to {self.address}: {self.error}")
        try:
            with self._send_lock:
                self._sock.sendall(message)
        except OSError as e:
            raise DisplayLost(f"lost the VNC connection to {self.address}: {e}") from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._reader.join(timeout=2)
