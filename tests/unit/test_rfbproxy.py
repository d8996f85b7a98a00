"""The VNC endpoint's wire rules, against a minimal RFB server in this process that
records the bytes it receives (the endpoint in front of a real x11vnc, with a real agent,
is tested in tests/e2e/test_vnc_record.py)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from mmcli.backends.rfb import RFBClient
from mmcli.backends.rfbproxy import Input, KeyInput, PointerInput, RFBProxy
from mmcli.desktop.display import VncAddress
from mmcli.errors import DisplayError

SERVER_INIT = struct.pack(">HH", 4, 4) + bytes(16) + struct.pack(">I", 4) + b"test"


class TinyServer:
    """Speaks RFB 3.8 with no authentication, then keeps what clients send."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.sendall(b"RFB 003.008\n")
            conn.recv(12)
            conn.sendall(bytes([1, 1]))  # one security type: None
            conn.recv(1)
            conn.sendall(struct.pack(">I", 0))
            conn.recv(1)  # ClientInit
            conn.sendall(SERVER_INIT)
            self.connections += 1
            while data := conn.recv(4096):
                with self.lock:
                    self.received += data

    def wait_for(self, n: int, timeout: float = 5) -> bytes:
        deadline = time.monotonic() + timeout
        while len(self.received) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return bytes(self.received)


@pytest.fixture
def server() -> Iterator[TinyServer]:
    tiny = TinyServer()
    yield tiny
    tiny.sock.close()


def opened(server: TinyServer, heard: list[tuple[Input, int]]) -> RFBProxy:
    def on_input(event: Input) -> None:  # what the server had when told: the order
        heard.append((event, len(server.received)))

    return RFBProxy(VncAddress("127.0.0.1", server.port), None, on_input, token="r1ght-pw")


def test_input_is_told_before_the_server_gets_it(server: TinyServer) -> None:
    heard: list[tuple[Input, int]] = []
    with opened(server, heard) as proxy:
        client = RFBClient("127.0.0.1", proxy.port, proxy.token)
        start = len(server.wait_for(20 + 4 + 4 * 5 + 10))  # pixel format, encodings, request
        client.pointer_event(7, 9, 1)
        client.key_event(0x61, True)
        received = server.wait_for(start + 6 + 8)
        client.close()
    assert [event for event, _ in heard] == [PointerInput(7, 9, 1), KeyInput(0x61, True)]
    # When told of each event the server had at most what came before it (the previous
    # event may still be on its way): not this event.
    pointer_before, key_before = (before for _, before in heard)
    assert pointer_before <= start and key_before <= start + 6
    assert received[start:] == struct.pack(">BBHH", 5, 1, 7, 9) + struct.pack(">BBxxI", 4, 1, 0x61)


def test_encodings_that_enable_input_of_their_own_are_not_passed_on(server: TinyServer) -> None:
    with opened(server, []) as proxy:
        client = RFBClient("127.0.0.1", proxy.port, proxy.token)
        start = len(server.wait_for(20 + 4 + 4 * 5 + 10))
        asked = (0, 16, -239, -258, -257, -308, -312, -313, -232)
        client._send(struct.pack(f">BxH{len(asked)}i", 2, len(asked), *asked))
        kept = (0, 16, -239, -232)
        received = server.wait_for(start + 4 + 4 * len(kept))
        client.close()
    assert received[start:] == struct.pack(f">BxH{len(kept)}i", 2, len(kept), *kept)


def test_a_wrong_password_never_reaches_the_server(server: TinyServer) -> None:
    with opened(server, []) as proxy:
        with pytest.raises(DisplayError, match="refused the password"):
            RFBClient("127.0.0.1", proxy.port, "wrong-pw")
        assert proxy.refused_logins == 1
    assert server.connections == 0


def test_a_message_it_cannot_read_ends_the_connection_and_is_reported(
    server: TinyServer,
) -> None:
    refused: list[str] = []
    with RFBProxy(
        VncAddress("127.0.0.1", server.port), None, lambda e: None, on_refused=refused.append
    ) as proxy:
        client = RFBClient("127.0.0.1", proxy.port, proxy.token)
        start = len(server.wait_for(20 + 4 + 4 * 5 + 10))
        client._send(struct.pack(">BBHII", 255, 0, 1, 0x61, 30))  # QEMU's extended key event
        deadline = time.monotonic() + 5
        while client.error is None and time.monotonic() < deadline:
            time.sleep(0.01)
        client.close()
    assert refused == ["RFB message type 255, which mm cannot record"]
    assert len(server.received) == start  # nothing of it passed on


def test_the_endpoint_listens_on_loopback_only(server: TinyServer) -> None:
    with opened(server, []) as proxy:
        assert proxy.address == f"127.0.0.1:{proxy.port}"
        assert proxy._server.getsockname()[0] == "127.0.0.1"
        assert len(proxy.token) == 8


def test_what_an_agent_sent_before_it_left_is_read_to_its_end(server: TinyServer) -> None:
    """An agent types five keys and exits at once while the first is held (the recorder
    keeps the screen before it): `drain` reads the rest, tells it and passes it on,
    rather than cutting the connection off after the first key (vncdo's `type hello`
    was recorded, and reached the server, as "h")."""
    heard: list[Input] = []

    def slow(event: Input) -> None:
        if not heard:
            time.sleep(0.4)  # the screen kept before the first key
        heard.append(event)

    with RFBProxy(VncAddress("127.0.0.1", server.port), None, slow) as proxy:
        client = RFBClient("127.0.0.1", proxy.port, proxy.token)
        start = len(server.wait_for(20 + 4 + 4 * 5 + 10))
        for char in "hello":
            client.key_event(ord(char), True)
            client.key_event(ord(char), False)
        client.close()  # the agent has exited
        assert proxy.drain(5)
    assert [e.keysym for e in heard if isinstance(e, KeyInput) and e.down] == list(b"hello")
    assert len(server.wait_for(start + 10 * 8)) == start + 10 * 8  # all passed on
