"""A VNC server that lies about sizes or stalls: every declared length and every read is
bounded. A hostile RFB server on 127.0.0.1 against the real `mm doctor --display vnc://`:

- a 1 GiB clipboard text declared: before, allocated up front (1 GB resident), and with 4
  GiB the reader thread died of MemoryError and replay went on against a frozen screen;
- a 65535x65535 cursor: the same, through the cursor's shape;
- a handshake sent a byte every 3 s: waited on for 36 s and more (the timeout was per
  read); now one deadline for the whole handshake.

Each time `mm` says what was wrong in one line, its peak resident memory stays small, and
nothing is acted on after the reader stopped."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from tests.helpers import peak_memory

pytestmark = pytest.mark.e2e

WIDTH, HEIGHT = 64, 48
PIXEL_FORMAT = struct.pack(">BBBBHHHBBB3x", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)


def handshake(conn: socket.socket, slow: float = 0.0) -> None:
    """The server's side of RFB 3.8 with no security, then ServerInit."""
    hello = b"RFB 003.008\n"
    for byte in hello if slow else [hello]:
        conn.sendall(bytes([byte]) if slow else byte)  # type: ignore[arg-type]
        if slow:
            time.sleep(slow)
    conn.recv(12)
    conn.sendall(b"\x01\x01")  # one security type: None
    conn.recv(1)
    conn.sendall(struct.pack(">I", 0))  # SecurityResult: OK
    conn.recv(1)  # ClientInit
    conn.sendall(struct.pack(">HH", WIDTH, HEIGHT) + PIXEL_FORMAT + struct.pack(">I", 4) + b"evil")


def frame() -> bytes:
    """One FramebufferUpdate drawing the whole screen grey, raw."""
    head = struct.pack(">BxH", 0, 1) + struct.pack(">HHHHi", 0, 0, WIDTH, HEIGHT, 0)
    return head + b"\x80" * (WIDTH * HEIGHT * 4)


@contextmanager
def server(behave: Callable[[socket.socket], None]) -> Iterator[int]:
    """A server on 127.0.0.1 running `behave` on each connection; its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_run, args=(behave, conn), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def _run(behave: Callable[[socket.socket], None], conn: socket.socket) -> None:
    try:
        behave(conn)
    except OSError:
        pass
    finally:
        time.sleep(5)
        conn.close()


def clipboard(conn: socket.socket) -> None:
    handshake(conn)
    conn.sendall(struct.pack(">B3xI", 3, 1 << 30))  # ServerCutText: 1 GiB follows
    time.sleep(1)
    conn.sendall(frame())
    time.sleep(20)


def cursor(conn: socket.socket) -> None:
    handshake(conn)
    conn.sendall(struct.pack(">BxH", 0, 1) + struct.pack(">HHHHi", 0, 0, 65535, 65535, -239))
    time.sleep(1)
    conn.sendall(frame())
    time.sleep(20)


def trickle(conn: socket.socket) -> None:
    handshake(conn, slow=3.0)


def doctor(port: int) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """`mm doctor --display vnc://...`: its result, seconds, and its own peak resident MB."""
    started = time.monotonic()
    display = f"vnc://127.0.0.1:{port}"
    result, peak = peak_memory(
        sys.executable, "-m", "mmcli", "doctor", "--json", "--display", display
    )
    return result, time.monotonic() - started, peak


@pytest.mark.parametrize(
    ("behave", "says"),
    [(clipboard, "a clipboard text of 1073741824 bytes"), (cursor, "a 65535x65535 cursor")],
    ids=["1-GiB-clipboard", "65535-cursor"],
)
def test_a_declared_size_is_checked_before_anything_is_allocated(
    behave: Callable[[socket.socket], None], says: str
) -> None:
    with server(behave) as port:
        result, seconds, peak = doctor(port)
    print(result.stdout, f"{seconds:.1f} s, peak {peak:.0f} MB")
    display = next(f for f in json.loads(result.stdout) if f["check"] == "display")
    assert display["status"] == "fail" and says in display["detail"], display
    assert "broke the protocol" in display["detail"]
    assert peak < 400, f"{peak:.0f} MB resident"


def test_a_handshake_that_trickles_is_given_one_deadline() -> None:
    with server(trickle) as port:
        result, seconds, _ = doctor(port)
    print(result.stderr, f"{seconds:.1f} s")
    assert result.returncode == 1
    assert seconds < 20
