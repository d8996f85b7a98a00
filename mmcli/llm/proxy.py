"""The model-API proxy: answers from memory where the conversation matches the recording's
tree, forwards to the model where it departs, and records what the model answered.

Standard library only: a `ThreadingHTTPServer` on 127.0.0.1 and `http.client` to the
upstream. Request headers (API keys) go to the upstream and nowhere else: they are never
stored or logged. Bodies are logged nowhere either.

Binding 127.0.0.1 keeps other hosts out, not the machine's other users: every request must
carry the server's token as the first part of its path (`/t/TOKEN/v1/messages`), which the
SDKs send without a change when their base URL ends with it. Anything else is refused with
401 before its body is read, so it is neither answered nor recorded.
"""

from __future__ import annotations

import contextlib
import hmac
import http.client
import json
import os
import re
import secrets
import socket
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from mmcli.errors import MMError
from mmcli.llm.conversation import (
    denormalize,
    fresh_id,
    images,
    normalize,
    replace_images,
    said,
    target_of,
)
from mmcli.llm.document import LLMRecording
from mmcli.llm.leaks import shown_before, shown_regions
from mmcli.llm.screens import Screen, digest_of, frame_of, screen_of
from mmcli.llm.shapes import SHAPES, Shape, parse_sse, shape_for
from mmcli.llm.tree import Conversation, Walk, conversation
from mmcli.screen.matcher import Policy
from mmcli.store.storefs import new_token

HOP_BY_HOP = {
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-connection",
    "accept-encoding",
    "content-encoding",
}
UPSTREAM_TIMEOUT = 600.0
MAX_BODY = 256 * 1024 * 1024
STREAM_READ = 64 * 1024
REFUSED_STATUS = 422
"""A miss with no model allowed: a client error the SDKs surface without retrying."""
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22,128}")
"""A token `mm proxy` accepts from `MM_PROXY_TOKEN`: URL-safe, at least 128 bits' worth."""
UNAUTHORIZED = {
    "type": "error",
    "error": {
        "type": "authentication_error",
        "message": "mm: this proxy answers only requests whose path starts with its token "
        "(/t/TOKEN/...; see docs/llm.md)",
    },
}


def new_proxy_token() -> str:
    """A per-run token: 256 random bits, URL-safe (it travels in the base URL's path)."""
    return secrets.token_urlsafe(32)


def strip_token(path: str, token: str) -> str | None:
    """`path` without its leading `/t/TOKEN`, or None when it does not carry `token`.
    Compared in constant time: the answer takes as long for a near miss as for a far one."""
    parts = path.split("/", 3)
    if len(parts) < 3 or parts[0] != "" or parts[1] != "t":
        return None
    given = parts[2].encode("utf-8", "replace")
    if not hmac.compare_digest(given, token.encode("utf-8")):
        return None
    return "/" + parts[3] if len(parts) == 4 else "/"


def upstreams(environ: Mapping[str, str], override: str | None = None) -> dict[str, str]:
    """Base URL of each provider: `--upstream` (a server root speaking both), else the
    caller's own `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, else the providers' defaults."""
    out = {}
    for name, shape in SHAPES.items():
        if override:
            out[name] = shape.base_for_agent(override.rstrip("/"))
        else:
            out[name] = (environ.get(shape.env) or shape.default_base).rstrip("/")
    return out


@dataclass
class Stats:
    hits: int = 0
    forwarded: int = 0
    refused: int = 0
    failed: int = 0
    unfinished: int = 0
    """Answers passed on but not learned: an error, or not ended as its API ends one."""
    reasons: list[str] = field(default_factory=list)


@dataclass
class Session:
    """One recording behind the proxy: its tree, and what this run added to it."""

    recording: LLMRecording
    values: dict[str, str]
    policy: Policy = Policy.DEFAULT
    secrets: frozenset[str] = frozenset()
    """The keys of `values` that are secrets: a screenshot sent after the model typed one
    is kept with what may show it painted over."""
    upstream: dict[str, str] | None = None
    """Base URL per API; None: no model, a miss is refused."""
    replay: bool = True
    """Answer from memory when the tree matches (False: `mm record`, always forward)."""
    on_new: Callable[[Session, int], None] | None = None
    guard: Callable[[Session], contextlib.AbstractContextManager[Any]] | None = None
    """Held around each request (`mm proxy`): marks the recording in use, and has it
    reloaded if it was replaced since the last request (an `MMError` refuses the request)."""
    stats: Stats = field(default_factory=Stats)
    new: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def lookup(self, conv: Conversation) -> Walk:
        with self.lock:
            walk = self.recording.tree.find(conv, self.policy)
            if walk.hit is not None and self.replay:
                self.stats.hits += 1
            elif walk.hit is None and self.replay:
                self.stats.reasons.append(walk.reason)
            return walk

    def answer(self, shape: Shape, conv: Conversation, walk: Walk) -> dict[str, Any]:
        assert walk.hit is not None
        return denormalize(walk.hit.answer, conv.ids, fresh_id(shape.id_prefix), self.values)

    def learn(self, shape: Shape, conv: Conversation, walk: Walk, answer: dict[str, Any]) -> None:
        """Record the model's `answer` to `conv` as a new exchange below `walk.parent`."""
        stored = normalize(answer, conv.ids, self.values)
        if walk.hit is not None and said(walk.hit.answer["message"]) == said(stored["message"]):
            with self.lock:  # recording over a tree that already holds this exchange
                self.stats.forwarded += 1
            return
        target = target_of(stored["message"])
        screens: dict[str, Screen] = {}
        prompt = conv.turns[walk.position :]
        if self.secrets:
            with self.lock:
                before = shown_before(self.recording.tree, walk.parent, self.secrets)
            shown = shown_regions(prompt, self.secrets, before)
        else:
            shown = {}

        def keep(marker: dict[str, Any]) -> dict[str, Any]:
            frame = frame_of(marker["$image"])
            if frame is None:
                return {"$screen": ""}
            sid = "s-" + new_token() + new_token()
            image = marker["$image"]
            paint = shown.get(id(marker))
            screens[sid] = screen_of(
                frame, target, sid + ".png", digest_of(image), paint, bool(self.secrets)
            )
            return {"$screen": sid}

        prompt = replace_images(prompt, keep) if images(prompt) else prompt
        with self.lock:
            self.recording.tree.screens.update(screens)
            node = self.recording.tree.add(conv, walk, stored, prompt)
            self.new.append(node.id)
            self.stats.forwarded += 1
            if self.on_new is not None:
                self.on_new(self, node.id)


Route = Callable[[str], tuple[Session, Shape] | None]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ProxyServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # request lines could carry names; bodies and headers are never logged

    def do_POST(self) -> None:
        try:
            self._post()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the agent hung up
        except Exception as e:  # one request's failure must not take the proxy down
            if os.environ.get("MM_DEBUG") == "1":
                traceback.print_exc()
            with contextlib.suppress(OSError):
                problem = {
                    "type": "api_error",
                    "message": f"mm: internal error ({type(e).__name__})",
                }
                self._send_json(500, {"error": problem})

    def _post(self) -> None:
        path = strip_token(self.path.split("?", 1)[0], self.server.token)
        if path is None:  # not from the run that owns this proxy: nothing read, nothing kept
            self._send_json(401, UNAUTHORIZED, close=True)
            return
        try:
            routed = self.server.route(path)
        except MMError as e:  # `mm proxy`: a name that is not a model-API recording
            self._send_json(400, {"error": {"type": "invalid_request_error", "message": str(e)}})
            return
        if routed is None:
            self._send_json(404, {"error": {"message": f"mm: no such endpoint {self.path}"}})
            return
        session, shape = routed
        with contextlib.ExitStack() as held:
            try:
                if session.guard is not None:
                    held.enter_context(session.guard(session))
            except MMError as e:  # `mm proxy`: the recording was removed, or is broken now
                problem = {"type": "invalid_request_error", "message": str(e)}
                self._send_json(400, {"error": problem})
                return
            self._serve(session, shape)

    def _serve(self, session: Session, shape: Shape) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send_json(413, shape.error(413, "mm: request too large"))
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_json(400, shape.error(400, "mm: the request body is not a JSON object"))
            return
        query = urlsplit(self.path).query
        conv = conversation(shape, body, session.values, self.headers.items(), query)
        walk = session.lookup(conv)
        if walk.hit is not None and session.replay:
            answer = session.answer(shape, conv, walk)
            if conv.stream:
                self._send_stream(200, shape.stream(answer, body))
            else:
                self._send_json(200, shape.response(answer))
            return
        if session.upstream is None:
            with session.lock:
                session.stats.refused += 1
            message = f"mm: no recorded answer and no model allowed ({walk.reason})"
            self._send_json(REFUSED_STATUS, shape.error(REFUSED_STATUS, message))
            return
        self._forward(session, shape, conv, walk, raw)

    def _forward(
        self, session: Session, shape: Shape, conv: Conversation, walk: Walk, raw: bytes
    ) -> None:
        assert session.upstream is not None
        url = urlsplit(session.upstream[shape.name] + shape.suffix)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Accept-Encoding"] = "identity"
        conn_type = (
            http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        )
        conn = conn_type(url.netloc, timeout=UPSTREAM_TIMEOUT)
        try:
            query = "&".join(q for q in (url.query, urlsplit(self.path).query) if q)
            conn.request("POST", url.path + (f"?{query}" if query else ""), raw, headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            with session.lock:
                session.stats.failed += 1
            where = f"{url.hostname}:{url.port}" if url.port else str(url.hostname)
            message = f"mm: cannot reach the model at {url.scheme}://{where} ({e})"
            self._send_json(502, shape.error(502, message))
            return
        try:
            self._relay(session, shape, conv, walk, response)
        finally:
            conn.close()

    def _relay(
        self,
        session: Session,
        shape: Shape,
        conv: Conversation,
        walk: Walk,
        response: http.client.HTTPResponse,
    ) -> None:
        """Pass the upstream's response on as it is, and learn its answer only when the
        model finished it: HTTP 200 and a body with its stop reason, or a stream that ran to
        its API's own end. An error, a half answer, a cut stream is never learned."""
        if "text/event-stream" in (response.getheader("Content-Type") or ""):
            self._relay_stream(session, shape, conv, walk, response)
            return
        try:
            data = response.read()
        except (OSError, http.client.HTTPException) as e:  # cut before its end
            with session.lock:
                session.stats.failed += 1
            message = f"mm: the model's answer was cut off ({type(e).__name__})"
            self._send_json(502, shape.error(502, message))
            return
        self._send_head(response)
        # Learned before the response ends, so that an agent's next request (or a
        # `mm proxy` client reading the store) already finds it.
        if response.status == 200:
            try:
                parsed = json.loads(data)
            except ValueError:  # an HTML page, a body cut off behind a proxy
                parsed = None
            self._learn(session, shape, conv, walk, shape.finished(parsed))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _relay_stream(
        self,
        session: Session,
        shape: Shape,
        conv: Conversation,
        walk: Walk,
        response: http.client.HTTPResponse,
    ) -> None:
        self._send_head(response)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        parts: list[bytes] = []
        try:
            # read1, not readline: readline takes a chunked stream cut short for its end.
            while data := response.read1(STREAM_READ):
                parts.append(data)
                self._chunk(data)
            cut = bool(response.length)  # a Content-Length that promised more
        except (OSError, http.client.HTTPException):
            cut = True
        if cut:
            # So is the agent's stream (no final chunk): its SDK reports the broken stream
            # it is, and nothing of it is learned.
            with session.lock:
                session.stats.failed += 1
            self.close_connection = True
            return
        if response.status == 200:
            events = list(parse_sse(b"".join(parts).splitlines(keepends=True)))
            self._learn(session, shape, conv, walk, shape.finished_stream(events))
        self._chunk(b"")

    def _send_head(self, response: http.client.HTTPResponse) -> None:
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in HOP_BY_HOP:
                self.send_header(key, value)

    def _learn(
        self,
        session: Session,
        shape: Shape,
        conv: Conversation,
        walk: Walk,
        answer: dict[str, Any] | None,
    ) -> None:
        if answer is None:
            with session.lock:
                session.stats.unfinished += 1
            return
        with contextlib.suppress(ValueError, KeyError, AttributeError, TypeError, IndexError):
            session.learn(shape, conv, walk, answer)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        if data:
            self.wfile.flush()

    def _send_json(self, status: int, payload: Any, close: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if close:  # the request's body was not read: the connection cannot go on
            self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, status: int, events: Iterator[bytes]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self._chunk(event)
        self._chunk(b"")


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, route: Route, token: str, port: int = 0, host: str = "127.0.0.1") -> None:
        self.route = route
        self.token = token
        super().__init__((host, port), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def root(self) -> str:
        """The server's address, for people: requests to it are refused."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base(self) -> str:
        """Where clients send requests: the address and the token (a secret)."""
        return f"{self.root}/t/{self.token}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-stream; nothing to tell (and no bodies in logs)


def single_route(session: Session) -> Route:
    """Every request to the one recording (`mm record --llm`, `mm replay`)."""

    def route(path: str) -> tuple[Session, Shape] | None:
        shape = shape_for(path)
        return (session, shape) if shape is not None else None

    return route


class Serving:
    """A `ProxyServer` answering in a background thread for the length of a `with`."""

    def __init__(self, route: Route, port: int = 0, token: str | None = None) -> None:
        try:
            self.server = ProxyServer(route, token or new_proxy_token(), port)
        except OSError as e:
            raise MMError(f"cannot listen on 127.0.0.1:{port} ({e.strerror})") from None
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ProxyServer:
        self.thread.start()
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
