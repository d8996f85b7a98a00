"""A D-Bus client that cannot hang: every call has a timeout, every reply a size bound.

Built on jeepney's message layer (pure Python: a pip venv cannot import PyGObject), with
its own blocking loop rather than `jeepney.io.blocking`, whose connection says Hello with
no timeout and reads a reply of any size: a bus or an app that does not answer, or
answers with megabytes, must cost a bounded wait and nothing more.
"""

from __future__ import annotations

import os
import socket
import time
from itertools import count
from typing import Any

from jeepney import DBusAddress, HeaderFields, Message, MessageType, Parser, new_method_call
from jeepney.auth import BEGIN, AuthenticationError, Authenticator
from jeepney.bus import get_connectable_addresses

MAX_REPLY_BYTES = 4 << 20
"""A reply larger than this is refused (the bus itself allows 128 MiB)."""


class BusError(Exception):
    """A bus that cannot be reached, a call that timed out or failed, a reply too big."""


class CallFailed(BusError):
    """The peer answered a call with a D-Bus error (`name`: e.g. UnknownMethod)."""

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"{name}: {detail}" if detail else name)
        self.name = name


def session_bus_address() -> str:
    """The session bus's address from the environment ('' when there is none)."""
    return os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")


class Bus:
    """One connection to a message bus, said Hello to; `call` sends and waits, bounded."""

    def __init__(self, address: str, timeout: float = 0.5) -> None:
        """Connect and authenticate within `timeout` seconds (BusError otherwise)."""
        try:
            path = next(get_connectable_addresses(address))
        except (RuntimeError, ValueError, StopIteration) as e:
            raise BusError(f"unusable bus address {address!r}: {e}") from None
        self.timeout = timeout
        self._broken = ""
        self._serials = count(1)
        self._parser = Parser()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + timeout
        try:
            self._sock.settimeout(timeout)
            self._sock.connect(path)
            self._authenticate(deadline)
            hello = DBusAddress(
                "/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus"
            )
            self.unique_name = str(self.call(hello, "Hello", timeout=_left(deadline))[0])
        except OSError as e:
            self.close()
            raise BusError(f"cannot connect to the bus at {path.lstrip(chr(0))}: {e}") from None
        except BusError:
            self.close()
            raise

    def _authenticate(self, deadline: float) -> None:
        auth = Authenticator(enable_fds=False, inc_null_byte=False)
        self._sock.sendall(b"\0")
        for request in auth:
            self._sock.settimeout(_left(deadline))
            self._sock.sendall(request)
            data = self._sock.recv(1024)
            if not data:
                raise BusError("the bus closed the connection while authenticating")
            try:
                auth.feed(data)
            except AuthenticationError as e:
                raise BusError(f"the bus refused authentication: {e}") from None
        self._sock.sendall(BEGIN)

    def call(
        self,
        address: DBusAddress,
        method: str,
        signature: str | None = None,
        body: tuple[Any, ...] = (),
        timeout: float | None = None,
    ) -> tuple[Any, ...]:
        """Call `method` and return the reply's body; BusError on a timeout, a closed
        connection or a reply over `MAX_REPLY_BYTES`, CallFailed on an error reply."""
        if self._broken:
            raise BusError(self._broken)
        message = new_method_call(address, method, signature, body)
        serial = next(self._serials)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        try:
            self._sock.settimeout(_left(deadline))
            self._sock.sendall(message.serialise(serial=serial))
            while True:
                reply = self._next_message(deadline)
                if reply.header.fields.get(HeaderFields.reply_serial) == serial:
                    break
        except TimeoutError:
            raise BusError(f"{method} on {address.bus_name}: no answer in time") from None
        except OSError as e:
            raise BusError(f"{method} on {address.bus_name}: {e}") from None
        if reply.header.message_type == MessageType.error:
            name = str(reply.header.fields.get(HeaderFields.error_name, "error"))
            detail = str(reply.body[0]) if reply.body and isinstance(reply.body[0], str) else ""
            raise CallFailed(name, detail[:200])
        return tuple(reply.body)

    def _next_message(self, deadline: float) -> Message:
        """The next whole message on the connection (signals and stray replies included)."""
        while True:
            message = self._parser.get_next_message()
            if message is not None:
                return message
            # 16 bytes tell a message's size: refuse a huge one before reading it.
            if self._parser.bytes_desired() > MAX_REPLY_BYTES:
                # Left unread, it would garble every later message: the connection is done.
                self._broken = f"a message larger than {MAX_REPLY_BYTES} bytes"
                raise BusError(self._broken)
            self._sock.settimeout(_left(deadline))
            data = self._sock.recv(65536)
            if not data:
                raise BusError("the bus closed the connection")
            self._parser.add_data(data)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> Bus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _left(deadline: float) -> float:
    """Seconds left until `deadline`; TimeoutError when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left
