"""The recorder's channel: the Unix socket the agent's actions are reported on (the
pyautogui hook inside a Python agent, the `xdotool` shim first on the agent's PATH, `mm
act` from any language), one JSON line per request and per reply."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mmcli.capture import shim
from mmcli.model import BUTTONS, MAX_KEY_MS, Action, ActionKind

if TYPE_CHECKING:
    from mmcli.capture.recorder import Recorder

SOCKET_ENV = "MM_RECORD_SOCKET"
HOOK_DIR = shim.HOOK_DIR
LOCAL_X_ON_VNC = "input on the local X display (pyautogui or xdotool) on a VNC desktop"
"""What an agent that gives X input while the display is `vnc://` did: that input goes to
the local X display, never to the VNC desktop the task is on."""
VNC_CHANNELS = "on a vnc:// display act through the VNC endpoint in MM_VNC_ADDRESS or mm act"
LOCAL_X_ON_CDP = "input on the local X display (pyautogui or xdotool) on a browser's DevTools"
"""What an agent that gives X input while the display is `cdp://` did: that input goes to
the local X display, never to the page the task is on."""
CDP_CHANNELS = "on a cdp:// display act through mm act"


class Channel:
    """Serves the socket while the agent runs: each action reported is captured by the
    recorder before the reply lets it happen."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._dir = tempfile.mkdtemp(prefix="mm-rec-")
        self.socket_path = os.path.join(self._dir, "recorder.sock")
        self._server: socket.socket | None = None
        self.closing = False

    def env(self) -> dict[str, str]:
        """Environment for the agent: where to report, the pyautogui hook on PYTHONPATH
        and the recording `xdotool` first on PATH."""
        path = os.environ.get("PYTHONPATH", "")
        return {
            SOCKET_ENV: self.socket_path,
            "PYTHONPATH": str(HOOK_DIR) + (os.pathsep + path if path else ""),
            "PATH": self._bin + os.pathsep + os.environ.get("PATH", os.defpath),
        }

    @property
    def _bin(self) -> str:
        return os.path.join(self._dir, "bin")

    def open(self) -> threading.Thread:
        """Listen, write the shim, and serve on a thread (returned)."""
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.socket_path)
        server.listen(8)
        self._server = server
        shim.write(self._bin)
        t = threading.Thread(target=self._accept, name="mm-recorder", daemon=True)
        t.start()
        return t

    def close(self) -> None:
        self.closing = True
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _accept(self) -> None:
        assert self._server is not None
        while not self.closing:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as f:
            for line in f:
                reply = self._handle(line)
                try:
                    f.write(json.dumps(reply).encode() + b"\n")
                    f.flush()
                except OSError:
                    return

    def _handle(self, line: bytes) -> dict[str, Any]:
        recorder = self.recorder
        if self.closing:
            return {"ok": False, "error": "the recording has ended"}
        try:
            message = json.loads(line)
            op = message.get("op")
            if op in ("act", "button") and not recorder.backend.takes_local_input:
                # The pyautogui hook and the xdotool shim act on the local X display:
                # the task on a remote display would not get the input at all.
                vnc = recorder.backend.takes_vnc_clients
                what, channels = (
                    (LOCAL_X_ON_VNC, VNC_CHANNELS) if vnc else (LOCAL_X_ON_CDP, CDP_CHANNELS)
                )
                recorder.unsupported.append(what)
                return {"ok": False, "error": f"{what}; {channels}"}
            if op in ("act", "perform"):
                action = action_from_json(message["action"])
                # The pointer moving while a button is held is part of the drag.
                # A channel that acts itself (the pyautogui hook, the xdotool shim)
                # moves the pointer itself; `mm act` is acted for by the backend here.
                if recorder.held is None or action.kind is not ActionKind.MOVE:
                    recorder.capture(action, keep_pointer=op == "act")
                if op == "perform":  # `mm act`: acts through the recorder's own backend
                    recorder.perform(action)
                return {"ok": True}
            if op == "button":
                at = message.get("x"), message.get("y")
                point = None if None in at else (int(at[0]), int(at[1]))
                button = str(message.get("button", "left"))
                if message.get("state") == "down":
                    recorder.press(button, point)
                else:
                    recorder.release(button, point)
                return {"ok": True}
            if op == "unsupported":
                recorder.unsupported.append(str(message.get("name")))
                return {"ok": True}
            return {"ok": False, "error": f"unknown request {op!r}"}
        except Exception as e:  # the agent gets the reason; the recording stays consistent
            return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def action_from_json(data: Mapping[str, Any]) -> Action:
    """Parse an action sent by the hook or `mm act` (trusted local input, still checked)."""
    kind = ActionKind(str(data["kind"]))
    button = str(data.get("button", "left"))
    if button not in BUTTONS:
        raise ValueError(f"mouse button {button!r} cannot be recorded (only {', '.join(BUTTONS)})")

    def opt_int(key: str) -> int | None:
        return None if data.get(key) is None else int(data[key])

    return Action(
        kind=kind,
        x=opt_int("x"),
        y=opt_int("y"),
        x2=opt_int("x2"),
        y2=opt_int("y2"),
        button=button,
        clicks=int(data.get("clicks", 1)),
        text=str(data.get("text", "")),
        keys=tuple(str(k) for k in data.get("keys", ())),
        amount=int(data.get("amount", 0)),
        key_ms=None if (ms := opt_int("key_ms")) is None else min(max(ms, 0), MAX_KEY_MS),
    )


def action_to_json(action: Action) -> dict[str, Any]:
    return {
        "kind": str(action.kind),
        "x": action.x,
        "y": action.y,
        "x2": action.x2,
        "y2": action.y2,
        "button": action.button,
        "clicks": action.clicks,
        "text": action.text,
        "keys": list(action.keys),
        "amount": action.amount,
        "key_ms": action.key_ms,
    }
