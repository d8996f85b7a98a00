"""An endpoint in front of a browser's DevTools, for an agent's own DevTools client.

The agent is given `http://127.0.0.1:PORT` (selenium's `debuggerAddress` takes it without
the scheme, Playwright's `connect_over_cdp` and browser-use's `cdp_url` as it is). The
endpoint answers the browser's HTTP discovery (`/json/version`, `/json/list`, ...) with
the browser's own answers, its socket URLs pointing back at the endpoint, and passes each
WebSocket connection through to the browser, message by message. Every command the agent
sends is handed to `on_command` before it is passed on (the recorder keeps the screen
first); replies and events come back untouched.

It listens on 127.0.0.1 only, and only for the run. A connection from a process of
another user on this machine is refused (the kernel's socket table, `/proc/net/tcp`,
tells whose the connecting socket is): nothing it sends reaches the browser or the
recording. DevTools itself has no authentication (docs/cdp.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from mmcli.desktop.display import CdpAddress

Command = Callable[[str, dict[str, Any], str | None], None]
"""Told each command the agent sends (method, params, the id of the target it goes to
where known), before the browser gets it."""
PAGE_PATH = "/devtools/page/"
MAX_MESSAGE = 64 * 2**20
DISCOVERY_BYTES = 4 * 2**20


def socket_owner(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The uid owning the TCP socket bound to `local` and connected to `remote` (both on
    127.0.0.1), from the kernel's socket table; None when it is not found."""

    def hexed(address: tuple[str, int]) -> str:
        host = "".join(f"{int(part):02X}" for part in reversed(address[0].split(".")))
        return f"{host}:{address[1]:04X}"

    want = (hexed(local), hexed(remote))
    with contextlib.suppress(OSError), open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.read().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 7 and (fields[1], fields[2]) == want:
                return int(fields[7])
    return None


class CdpProxy:
    """The endpoint; `address` is what the agent is given."""

    def __init__(self, upstream: CdpAddress, on_command: Command) -> None:
        from websockets.sync.server import serve

        self.upstream = upstream
        self.on_command = on_command
        self.refused: list[str] = []
        """Why connections were refused (another user's)."""
        self.sessions: dict[str, str] = {}
        """The target each of the agent's sessions is attached to (`Target.attachedToTarget`,
        as the browser told it)."""
        self._open: set[Any] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._server = serve(
            self._relay,
            "127.0.0.1",
            0,
            process_request=self._request,
            max_size=MAX_MESSAGE,
            compression=None,
            ping_interval=None,
        )
        self.port = int(self._server.socket.getsockname()[1])
        self.address = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="mm-cdp-endpoint", daemon=True
        )
        self._thread.start()

    # ---- HTTP: the browser's discovery, pointed back here ------------------------------

    def _request(self, connection: Any, request: Any) -> Any:
        from websockets.datastructures import Headers
        from websockets.http11 import Response

        peer = connection.remote_address
        owner = socket_owner((peer[0], peer[1]), ("127.0.0.1", self.port))
        if owner is not None and owner != os.getuid():
            self.refused.append(f"a connection from uid {owner}, not this user's: refused")
            return connection.respond(403, "this endpoint serves its own user only\n")
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        if not request.path.startswith("/json"):
            return connection.respond(404, "not found\n")
        try:
            with urllib.request.urlopen(
                f"http://{self.upstream.netloc}{request.path}", timeout=10
            ) as reply:
                body = reply.read(DISCOVERY_BYTES)
        except (OSError, urllib.error.URLError) as e:
            return connection.respond(502, f"the browser does not answer: {e}\n")
        body = body.replace(self.upstream.netloc.encode(), f"127.0.0.1:{self.port}".encode())
        json_type = ("Content-Type", "application/json; charset=UTF-8")
        headers = Headers([json_type, ("Content-Length", str(len(body)))])
        return Response(200, "OK", headers, body)

    # ---- WebSocket: passed through, each command told first ----------------------------

    def _relay(self, agent: Any) -> None:
        from websockets.sync.client import connect

        path = agent.request.path if agent.request is not None else "/"
        try:
            browser = connect(
                f"ws://{self.upstream.netloc}{path}",
                max_size=MAX_MESSAGE,
                compression=None,
                ping_interval=None,
                open_timeout=10,
            )
        except Exception:
            agent.close(1011, "the browser does not answer")
            return
        with self._lock:
            self._open.add(agent)
        back = threading.Thread(
            target=self._pump, args=(browser, agent, self._attached), daemon=True
        )
        back.start()
        page = path[len(PAGE_PATH) :] if path.startswith(PAGE_PATH) else None
        try:
            self._pump(agent, browser, lambda message: self._told(message, page))
        finally:
            back.join(timeout=5)
            with self._lock:
                self._open.discard(agent)
                self._idle.notify_all()

    @staticmethod
    def _pump(source: Any, sink: Any, seen: Callable[[str | bytes], None]) -> None:
        """Pass each message from `source` on to `sink`, shown to `seen` first, until
        either side is gone; then close `sink`."""
        try:
            for message in source:
                seen(message)
                sink.send(message)
        except Exception:  # either side gone: the connection ends
            pass
        finally:
            with contextlib.suppress(Exception):
                sink.close()

    def _told(self, message: str | bytes, page: str | None) -> None:
        """Tell `on_command` of a command, with its target: the session's (a browser
        socket's flattened sessions), else the page the socket is (`page`)."""
        try:
            command = json.loads(message)
        except ValueError:
            return
        if isinstance(command, dict) and isinstance(command.get("method"), str):
            params = command.get("params")
            session = command.get("sessionId")
            target = self.sessions.get(str(session)) if session else page
            self.on_command(command["method"], params if isinstance(params, dict) else {}, target)

    def _attached(self, message: str | bytes) -> None:
        """Note which target a session the browser attached is for."""
        text = message if isinstance(message, str) else message.decode("utf-8", "replace")
        if "Target.attachedToTarget" not in text:
            return
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            params = json.loads(message)["params"]
            self.sessions[str(params["sessionId"])] = str(params["targetInfo"]["targetId"])

    # ---- the end ------------------------------------------------------------------------

    def drain(self, timeout: float) -> bool:
        """Wait until the agent's connections have closed (its last commands told); False
        if one is still open after `timeout`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._open:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        self._server.shutdown()
        with self._lock:
            still = list(self._open)
        for agent in still:
            with contextlib.suppress(Exception):
                agent.close()
        self._thread.join(timeout=5)
