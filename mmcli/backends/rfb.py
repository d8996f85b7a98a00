"""A small RFB (VNC) client: the protocol version 3.3 to 3.8 handshake, security types
None and VNC auth, a 32-bit true-colour framebuffer kept current on a reader thread, and
pointer and key events.

The pixel format asked for is 32 bpp little-endian with red at bit 16, green at 8, blue
at 0: the bytes arrive as B, G, R, X, the layout `Frame` takes from mss, so a grab is a
copy of the buffer. Encodings: Raw, CopyRect and the DesktopSize and Cursor
pseudo-encodings: a server that can send the pointer's shape apart (and drops it) draws
no pointer into the screen, which then compares with a local grab (which has none). After
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

import numpy as np

from mmcli.backends.vncauth import vnc_response
from mmcli.errors import DisplayError, DisplayLost

RAW, COPY_RECT, DESKTOP_SIZE, CURSOR = 0, 1, -223, -239
ENCODINGS = (RAW, COPY_RECT, DESKTOP_SIZE, CURSOR)
SECURITY_NONE, SECURITY_VNC = 1, 2
PIXEL_FORMAT = struct.pack(">BBBBHHHBBB3x", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
"""bpp, depth, big-endian, true-colour, red/green/blue max, red/green/blue shift."""
BUTTONS = {"left": 1, "middle": 2, "right": 4}
WHEEL_UP, WHEEL_DOWN = 8, 16
MAX_SIDE = 16384
"""A framebuffer side beyond this is a broken server, not a screen."""


class RFBClient:
    """One connection to a VNC server; `framebuffer` is the remote screen, BGRX."""

    def __init__(
        self,
        host: str,
        port: int,
        password: str | None = None,
        timeout: float = 10.0,
        on_update: Callable[[], None] | None = None,
    ) -> None:
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

    # ---- handshake ------------------------------------------------------------------------

    def _handshake(self, password: str | None) -> None:
        banner = self._read(12)
        if not banner.startswith(b"RFB ") or banner[7:8] != b".":
            raise DisplayError(f"{self.address} is not a VNC server (it said {banner[:12]!r})")
        major, minor = int(banner[4:7]), int(banner[8:11])
        minor = 8 if (major, minor) >= (3, 8) else 7 if (major, minor) >= (3, 7) else 3
        self._sock.sendall(b"RFB 003.%03d\n" % minor)
        if minor == 3:
            (chosen,) = struct.unpack(">I", self._read(4))
            if chosen == 0:
                raise DisplayError(f"VNC server {self.address} refused: {self._reason()}")
        else:
            (count,) = struct.unpack(">B", self._read(1))
            if count == 0:
                raise DisplayError(f"VNC server {self.address} refused: {self._reason()}")
            offered = set(self._read(count))
            chosen = self._choose(offered, password)
            self._sock.sendall(bytes([chosen]))
        if chosen == SECURITY_VNC:
            if password is None:
                raise DisplayError(
                    f"VNC server {self.address} asks for a password: set MM_VNC_PASSWORD "
                    "or MM_VNC_PASSWORD_FILE"
                )
            self._sock.sendall(vnc_response(password, self._read(16)))
        elif chosen != SECURITY_NONE:
            raise DisplayError(f"VNC server {self.address} wants security type {chosen}")
        if chosen == SECURITY_VNC or minor == 8:
            (result,) = struct.unpack(">I", self._read(4))
            if result != 0:
                why = self._reason() if minor == 8 else "authentication failed"
                raise DisplayError(f"VNC server {self.address} refused the password: {why}")
        self._sock.sendall(b"\x01")  # ClientInit: shared, other viewers stay connected
        width, height = struct.unpack(">HH", self._read(4))
        self._read(16)  # the server's pixel format: replaced by ours below
        (name_length,) = struct.unpack(">I", self._read(4))
        self.name = self._read(name_length).decode("utf-8", "replace")
        self._resize(width, height)
        encodings = struct.pack(f">BxH{len(ENCODINGS)}i", 2, len(ENCODINGS), *ENCODINGS)
        self._sock.sendall(b"\x00\x00\x00\x00" + PIXEL_FORMAT + encodings)
        self._request(incremental=False)

    def _choose(self, offered: set[int], password: str | None) -> int:
        if password is not None and SECURITY_VNC in offered:
            return SECURITY_VNC
        if SECURITY_NONE in offered:
            return SECURITY_NONE
        if SECURITY_VNC in offered:
            return SECURITY_VNC  # refused with its own message: no password given
        names = ", ".join(str(t) for t in sorted(offered))
        raise DisplayError(
            f"VNC server {self.address} offers only security types {names}; mm speaks None "
            "(1) and VNC password (2)"
        )

    def _reason(self) -> str:
        (length,) = struct.unpack(">I", self._read(4))
        return self._read(min(length, 4096)).decode("utf-8", "replace")

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
                    self._read(length)
                else:
                    raise DisplayError(f"unknown server message {kind}")
        except (OSError, DisplayError, ValueError, struct.error) as e:
            with self._updated:
                self.error = str(e) or type(e).__name__
                self._updated.notify_all()

    def _read_update(self) -> None:
        (count,) = struct.unpack(">xH", self._read(3))
        drawn = 0
        for _ in range(count):
            x, y, w, h, encoding = struct.unpack(">HHHHi", self._read(12))
            if encoding == DESKTOP_SIZE:
                with self._frame_lock:
                    self._resize(w, h)
                drawn += 1
                continue
            if encoding == CURSOR:  # the pointer's shape: not part of the screen
                self._read(w * h * 4 + (w + 7) // 8 * h)
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
        with self._updated:
            self.updates += 1
            self._updated.notify_all()
        if drawn and self.on_update is not None:
            self.on_update()
        self._request(incremental=True)

    def _read(self, n: int) -> bytes:
        buffer = bytearray(n)
        view = memoryview(buffer)
        got = 0
        while got < n:
            chunk = self._sock.recv_into(view[got:], n - got)
            if chunk == 0:
                raise ConnectionError("the server closed the connection")
            got += chunk
        return bytes(buffer)

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
