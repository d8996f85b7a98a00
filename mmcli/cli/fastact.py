"""`mm act`, without the CLI's start-up cost.

An agent in a loop runs `mm act` once per action. Under `mm record` (MM_RECORD_SOCKET
set) the recorder has the display open already: `mm act` only parses its words, sends the
action, and the recorder captures the screen and performs it. Outside a recorder the
action is given through XTEST alone (`backends/xtest.py`: python-xlib's protocol layer;
no pyautogui, numpy, mss or typer). This module is imported before typer, rich or numpy and uses
only the standard library; anything it does not recognise (help, a malformed word) is
left to the full CLI, which explains.
"""

from __future__ import annotations

import os
import sys

from mmcli.errors import ExitCode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOCKET_ENV = "MM_RECORD_SOCKET"
BUTTONS = ("left", "right", "middle")
FAST_KEYS = frozenset(
    [
        *("enter", "return", "tab", "space", "backspace", "delete", "del", "esc", "escape"),
        *("up", "down", "left", "right", "home", "end", "pageup", "pagedown", "pgup", "pgdn"),
        *("insert", "shift", "ctrl", "alt", "shiftleft", "shiftright", "ctrlleft", "ctrlright"),
        *("altleft", "altright", "win", "winleft", "capslock", "printscreen"),
        *(f"f{i}" for i in range(1, 13)),
        *"abcdefghijklmnopqrstuvwxyz0123456789",
    ]
)
"""Key names known good on X11; any other goes to the full CLI, which checks it."""


def _known(keys: list[str]) -> bool:
    return all(k.lower() in FAST_KEYS for k in keys)


class _NotPlain(Exception):
    """Words the fast path leaves to the full CLI (which explains what is wrong)."""


def _ints(words: list[str], n: int) -> list[int]:
    if len(words) != n:
        raise _NotPlain
    try:
        return [int(w) for w in words]
    except ValueError:
        raise _NotPlain from None


def _take(words: list[str], option: str, n: int) -> tuple[list[str], list[str] | None]:
    """Remove `option` and its `n` values from words: (the rest, its values or None)."""
    if option not in words:
        return words, None
    i = words.index(option)
    values = words[i + 1 : i + 1 + n]
    if len(values) < n:
        raise _NotPlain
    return words[:i] + words[i + 1 + n :], values


def parse(args: list[str]) -> dict[str, Any] | None:
    """The action `mm act ARGS` asks for, as the recorder's JSON; None if not plain."""
    try:
        return _parse(args)
    except _NotPlain:
        return None


def _parse(args: list[str]) -> dict[str, Any] | None:
    if not args or any(a in ("-h", "--help") for a in args):
        return None
    command, words = args[0], args[1:]
    if command in ("type", "press") and len(words) == 2 and words[0] == "--":
        words = words[1:]
    if command == "click":
        words, button = _take(words, "--button", 1)
        words, double = _take(words, "--double", 0)
        x, y = _ints(words, 2)
        b = button[0] if button else "left"
        if b not in BUTTONS:
            return None
        return {"kind": "click", "x": x, "y": y, "button": b, "clicks": 1 + (double is not None)}
    if command == "type" and len(words) == 1:
        return {"kind": "type", "text": words[0]}
    if command == "press" and len(words) == 1 and _known(words):
        return {"kind": "press", "keys": words, "clicks": 1}
    if command == "hotkey" and words and _known(words):
        return {"kind": "hotkey", "keys": words}
    if command == "scroll":
        words, at = _take(words, "--at", 2)
        (amount,) = _ints(words, 1)
        where = {} if at is None else dict(zip(("x", "y"), _ints(at, 2), strict=True))
        return {"kind": "scroll", "amount": amount, **where}
    if command == "move":
        x, y = _ints(words, 2)
        return {"kind": "move", "x": x, "y": y}
    if command == "drag":
        x, y, x2, y2 = _ints(words, 4)
        return {"kind": "drag", "x": x, "y": y, "x2": x2, "y2": y2}
    return None


def _ask(path: str, request: bytes) -> bytes:
    """Send one request line, return the reply line (`_socket`: `socket` costs ~5 ms)."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        sock.sendall(request)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("mm recorder went away")
            reply += chunk
        return reply
    finally:
        sock.close()


def run(args: list[str]) -> ExitCode | None:
    """Perform `mm act ARGS` through the recorder, or outside one through `XTest` alone;
    None when the full CLI should."""
    path = os.environ.get(SOCKET_ENV)
    action = parse(args)
    if action is None or not (path or os.environ.get("DISPLAY")) or os.environ.get("MM_DISPLAY"):
        return None  # (another display than $DISPLAY: the full CLI's backend drives it)
    if path is None:
        from mmcli.backends import interrupts
        from mmcli.errors import MMError

        # Ctrl-C stops it even where it started with SIGINT ignored (a shell's background
        # job), as the full CLI's own handler does; never in the middle of an X request.
        interrupts.install()
        try:
            _give(action)
        except MMError as e:
            print(f"mm: error: {e}", file=sys.stderr)
            return e.exit_code
        except KeyboardInterrupt:  # as the full CLI says it (what was held is released)
            print("mm: error: interrupted", file=sys.stderr)
            return ExitCode.ABORTED
        return ExitCode.OK
    import json

    try:
        line = _ask(path, json.dumps({"op": "perform", "action": action}).encode() + b"\n")
        reply = json.loads(line)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"mm: error: cannot reach the recorder: {e}", file=sys.stderr)
        return ExitCode.ERROR
    if not reply.get("ok"):
        print(
            f"mm: error: mm recorder: {reply.get('error', 'refused the action')}", file=sys.stderr
        )
        return ExitCode.ERROR
    return ExitCode.OK


def _give(action: dict[str, Any]) -> None:
    """The action given on the display through XTEST with python-xlib's protocol layer
    alone (`backends/xtest.py`): no pyautogui, numpy, mss, typer or recording model."""
    from mmcli.backends.xtest import XTest

    with XTest() as xtest:
        xtest.give(action)


def main() -> None:
    """The `mm` command: `mm act` under a recorder here, everything else in mmcli.cli.app."""
    if len(sys.argv) > 2 and sys.argv[1] == "act":
        code = run(sys.argv[2:])
        if code is not None:
            sys.exit(code)
    from mmcli.cli.app import main as cli_main

    try:
        cli_main()
    except SystemExit as e:  # the command's exit, everything it did done
        from mmcli.cli.output import leave

        leave(e.code)
