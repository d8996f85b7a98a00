"""Runs inside a recorded Python agent: reports each pyautogui action before it happens.

`mm record` puts this directory first on the agent's PYTHONPATH; `sitecustomize` imports
this module, which wraps pyautogui's public action functions as soon as the agent imports
pyautogui. Each outermost call is sent to the recorder over the Unix socket named by
`MM_RECORD_SOCKET`; the recorder fingerprints the screen and answers, and only then does
the real pyautogui function run. Calls pyautogui makes to itself (`write` calling `press`,
`doubleClick` calling `click`) are not reported twice.

This module must import nothing from mmcli: it runs in the agent's interpreter, which may
not have mmcli installed. It is loaded by every Python process the agent starts (`mm act`
among them), so it imports what it needs only once pyautogui or the recorder is used.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs every Python process the agent starts a few ms
    import threading
    from typing import Any

SOCKET_ENV = "MM_RECORD_SOCKET"

_local: threading.local | None = None
_disabled = False


def disable() -> None:
    """Stop reporting (used by `mm` itself, whose own input must not be recorded twice)."""
    global _disabled
    _disabled = True


class RecorderLink:
    """One connection to the recorder, shared by the agent's threads."""

    def __init__(self, path: str) -> None:
        import threading

        self._path = path
        self._sock: Any = None
        self._file: Any = None
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> dict[str, Any]:
        import json
        import socket

        with self._lock:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._sock.connect(self._path)
                self._file = self._sock.makefile("rwb")
            self._file.write(json.dumps(message).encode() + b"\n")
            self._file.flush()
            line = self._file.readline()
        if not line:
            raise RuntimeError("mm recorder went away; stopping so no action goes unrecorded")
        reply: dict[str, Any] = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"mm recorder: {reply.get('error', 'refused the action')}")
        return reply


_link: RecorderLink | None = None


def report(action: dict[str, Any]) -> None:
    global _link
    path = os.environ.get(SOCKET_ENV)
    if not path or _disabled:
        return
    if _link is None:
        _link = RecorderLink(path)
    _link.send({"op": "act", "action": action})


# ---- turning pyautogui calls into actions ---------------------------------------------


def _point(gui: Any, x: Any, y: Any) -> tuple[int, int]:
    p = gui._normalizeXYArgs(x, y)
    if p is None:  # an image that was not found: pyautogui will fail the same way
        raise gui.ImageNotFoundException(f"could not locate {x!r} on the screen")
    return int(p[0]), int(p[1])


def _button(gui: Any, button: Any) -> str:
    return str(gui._normalizeButton(button))


def _click(
    gui: Any, a: dict[str, Any], clicks: int | None = None, button: str | None = None
) -> dict[str, Any]:
    x, y = _point(gui, a.get("x"), a.get("y"))
    return {
        "kind": "click",
        "x": x,
        "y": y,
        "clicks": int(clicks if clicks is not None else a.get("clicks", 1)),
        "button": button or _button(gui, a.get("button", "primary")),
    }


def _keys(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(k) for k in value]


def _typewrite(gui: Any, a: dict[str, Any]) -> dict[str, Any]:
    message = a["message"]
    if isinstance(message, str):
        interval = float(a.get("interval") or 0.0)
        return {"kind": "type", "text": message, "key_ms": round(interval * 1000)}
    return {"kind": "press", "keys": _keys(message), "clicks": 1}


def _relative(gui: Any, a: dict[str, Any], dx_name: str, dy_name: str) -> tuple[int, int]:
    dx, dy = a.get(dx_name) or 0, a.get(dy_name) or 0
    if isinstance(dx, (tuple, list)):
        dx, dy = dx
    px, py = gui.position()
    return int(px + dx), int(py + dy)


def _drag(gui: Any, to: tuple[int, int], a: dict[str, Any]) -> dict[str, Any]:
    px, py = gui.position()
    return {
        "kind": "drag",
        "x": int(px),
        "y": int(py),
        "x2": to[0],
        "y2": to[1],
        "button": _button(gui, a.get("button", "primary")),
    }


def _move(point: tuple[int, int]) -> dict[str, Any]:
    return {"kind": "move", "x": point[0], "y": point[1]}


def _scroll(gui: Any, a: dict[str, Any]) -> dict[str, Any]:
    x, y = _point(gui, a.get("x"), a.get("y"))
    return {"kind": "scroll", "amount": int(a["clicks"]), "x": x, "y": y}


def _press(gui: Any, a: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "press", "keys": _keys(a["keys"]), "clicks": int(a.get("presses", 1))}


TRANSLATORS: dict[str, Any] = {
    "click": lambda g, a: _click(g, a),
    "leftClick": lambda g, a: _click(g, a, 1, "left"),
    "rightClick": lambda g, a: _click(g, a, 1, "right"),
    "middleClick": lambda g, a: _click(g, a, 1, "middle"),
    "doubleClick": lambda g, a: _click(g, a, 2),
    "tripleClick": lambda g, a: _click(g, a, 3),
    "scroll": _scroll,
    "vscroll": _scroll,
    "moveTo": lambda g, a: _move(_point(g, a.get("x"), a.get("y"))),
    "moveRel": lambda g, a: _move(_relative(g, a, "xOffset", "yOffset")),
    "dragTo": lambda g, a: _drag(g, _point(g, a.get("x"), a.get("y")), a),
    "dragRel": lambda g, a: _drag(g, _relative(g, a, "xOffset", "yOffset"), a),
    "press": _press,
    "typewrite": _typewrite,
    "hotkey": lambda g, a: {"kind": "hotkey", "keys": [str(k) for k in a["args"]]},
}
ALIASES = {"move": "moveRel", "drag": "dragRel", "write": "typewrite"}
UNSUPPORTED = ("mouseDown", "mouseUp", "keyDown", "keyUp", "hold", "hscroll")


def _wrap(gui: Any, name: str, fn: Any, local: threading.local) -> Any:
    import functools
    import inspect

    signature = inspect.signature(fn)
    translate = TRANSLATORS.get(name)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _local = local
        if getattr(_local, "depth", 0) or _disabled:
            return fn(*args, **kwargs)
        _local.depth = 1
        try:
            if translate is None:
                _link_unsupported(name)
            else:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                arguments.update(arguments.pop("kwargs", {}) or {})
                report(translate(gui, arguments))
            return fn(*args, **kwargs)
        finally:
            _local.depth = 0

    wrapper.__mm_wrapped__ = True  # type: ignore[attr-defined]
    return wrapper


def _link_unsupported(name: str) -> None:
    global _link
    path = os.environ.get(SOCKET_ENV)
    if not path:
        return
    if _link is None:
        _link = RecorderLink(path)
    _link.send({"op": "unsupported", "name": f"pyautogui.{name}"})


def instrument(gui: Any) -> None:
    """Wrap pyautogui's action functions in place (idempotent)."""
    import threading

    global _local
    if _local is None:
        _local = threading.local()
    for name in (*TRANSLATORS, *UNSUPPORTED):
        fn = getattr(gui, name, None)
        if fn is None or getattr(fn, "__mm_wrapped__", False):
            continue
        setattr(gui, name, _wrap(gui, name, fn, _local))
    for alias, target in ALIASES.items():
        if hasattr(gui, alias):
            setattr(gui, alias, getattr(gui, target))


class _PyAutoGUIFinder:
    """Instruments pyautogui right after it is first imported (a meta path finder)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "pyautogui":
            return None
        import importlib.machinery

        sys.meta_path.remove(self)
        try:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module: Any) -> None:
            original_exec(module)
            instrument(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    if os.environ.get(SOCKET_ENV) is None:
        return
    if "pyautogui" in sys.modules:
        instrument(sys.modules["pyautogui"])
    elif not any(isinstance(f, _PyAutoGUIFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PyAutoGUIFinder())
