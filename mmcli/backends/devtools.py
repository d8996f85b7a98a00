"""A connection to a browser's DevTools (the Chrome DevTools Protocol over a WebSocket):
commands answered by id, events handed to listeners, on a reader thread.

`page_socket` finds the page to drive: a `cdp://HOST:PORT` address is asked over HTTP for
its targets (`/json/list`, as the browser serves it) and its first page is taken; a
`ws://` / `wss://` URL is a page's own socket and is used as it is."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from mmcli.desktop.display import CdpAddress
from mmcli.errors import DisplayError, DisplayLost

CALL_TIMEOUT = 15.0
"""The most a command waits for its answer (a screenshot of a busy page takes a while)."""
CONNECT_TIMEOUT = 10.0
MAX_MESSAGE = 64 * 2**20
"""The largest message taken from the browser (a PNG screenshot of a large page)."""

UNTIL_POLL = 0.02
"""How often a command waiting for its answer asks whether it was superseded."""

Listener = Callable[[dict[str, Any]], None]


class Unanswered(DisplayError):
    """The browser did not answer a command in time (it may still: the answer is dropped)."""


class Superseded(DisplayError):
    """A command whose answer will not come: what it waited on was told otherwise."""


def page_socket(address: CdpAddress) -> str:
    """The WebSocket URL of the page `address` names: its first target of type "page"."""
    if address.socket is not None:
        return address.socket
    url = f"http://{address.netloc}/json/list"
    try:
        with urllib.request.urlopen(url, timeout=CONNECT_TIMEOUT) as reply:
            targets = json.loads(reply.read(4 * 2**20))
    except (OSError, urllib.error.URLError, ValueError) as e:
        raise DisplayError(
            f"{address}: no DevTools endpoint answers there ({_reason(e)}); start the browser "
            "with --remote-debugging-port=PORT"
        ) from None
    pages = [
        t
        for t in targets
        if isinstance(t, dict) and t.get("type") == "page" and t.get("webSocketDebuggerUrl")
    ]
    if not pages:
        raise DisplayError(f"{address}: the browser has no page open to drive")
    return str(pages[0]["webSocketDebuggerUrl"])


def _reason(e: BaseException) -> str:
    if isinstance(e, urllib.error.URLError) and e.reason is not None:
        return str(e.reason)
    return str(e) or type(e).__name__


class DevTools:
    """One page's DevTools socket."""

    def __init__(self, socket_url: str) -> None:
        try:
            from websockets.sync.client import connect
        except ImportError:
            raise DisplayError(
                "--display cdp:// needs the websockets package: pip install 'mmcli[cdp]'"
            ) from None
        try:
            self._ws = connect(
                socket_url,
                open_timeout=CONNECT_TIMEOUT,
                max_size=MAX_MESSAGE,
                ping_interval=None,
                compression=None,
            )
        except Exception as e:  # the library's own errors, or the socket's
            raise DisplayError(f"{socket_url}: cannot connect to DevTools ({e})") from None
        self.url = socket_url
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._listeners: dict[str, list[Listener]] = {}
        self.lost: str | None = None
        """Why the connection ended (None: open)."""
        self._reader = threading.Thread(target=self._read, name="mm-devtools", daemon=True)
        self._reader.start()

    def on(self, method: str, listener: Listener) -> None:
        """Call `listener` with the params of each `method` event (on the reader thread)."""
        self._listeners.setdefault(method, []).append(listener)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float = CALL_TIMEOUT,
        until: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Send a command and wait for its result; `DisplayLost` when the browser went
        away, `DisplayError` when it answers with an error or not in time, `Superseded`
        as soon as `until()` holds (an event told meanwhile that no answer will come: a
        page's own dialog holds the page)."""
        if self.lost is not None:
            raise DisplayLost(f"the browser's DevTools connection ended ({self.lost})")
        done = threading.Event()
        box: list[dict[str, Any]] = []
        with self._lock:
            self._next += 1
            ident = self._next
            self._waiting[ident] = (done, box)
        message = {"id": ident, "method": method, "params": params or {}}
        try:
            self._ws.send(json.dumps(message))
        except Exception as e:
            self._waiting.pop(ident, None)
            raise DisplayLost(f"the browser's DevTools connection ended ({e})") from None
        deadline = time.monotonic() + timeout
        while not done.wait(UNTIL_POLL if until is not None else timeout):
            if until is not None and until():
                self._waiting.pop(ident, None)
                raise Superseded(method)
            if time.monotonic() >= deadline:
                self._waiting.pop(ident, None)
                raise Unanswered(f"the browser did not answer {method} within {timeout:g}s")
        if not box:
            raise DisplayLost(f"the browser's DevTools connection ended ({self.lost})")
        reply = box[0]
        if "error" in reply:
            error = reply["error"]
            text = error.get("message", error) if isinstance(error, dict) else error
            raise DisplayError(f"the browser refused {method}: {text}")
        result = reply.get("result", {})
        return result if isinstance(result, dict) else {}

    def _read(self) -> None:
        try:
            for raw in self._ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if "id" in message:
                    waiting = self._waiting.pop(message["id"], None)
                    if waiting is not None:
                        waiting[1].append(message)
                        waiting[0].set()
                    continue
                for listener in self._listeners.get(str(message.get("method")), ()):
                    listener(message.get("params") or {})
            self.lost = "closed by the browser"
        except Exception as e:
            self.lost = str(e) or type(e).__name__
        finally:
            self.lost = self.lost or "closed"
            for done, _ in list(self._waiting.values()):
                done.set()
            self._waiting.clear()

    def close(self) -> None:
        self.lost = self.lost or "closed by mm"
        with contextlib.suppress(Exception):  # a socket that may already be gone
            self._ws.close()
        self._reader.join(timeout=2)
