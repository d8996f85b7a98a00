"""Runs as `xdotool` on a recorded agent's PATH: reports each input action, then runs the
real xdotool.

`mm record` (and a replay handing over to its agent) puts a small `xdotool` shell script
first on the agent's PATH (capture/shim.py); a line with input in it comes to `main()`
here, others go straight to the real xdotool. The command line is parsed the way xdotool
parses it (commands chained on one line included); each recordable action is sent to the
recorder over the Unix socket named by `MM_RECORD_SOCKET`, which fingerprints the screen
and answers, and only then does the real xdotool (the next one on PATH) perform it. Its
exit code and output are the agent's, unchanged. Input that cannot be recorded
(`keydown` alone, `--window` aimed at another window, ...) is reported as unsupported, so
the recording fails loudly instead of being saved incomplete. Every other command
(`search`, `getmouselocation`, `windowactivate`, ...) passes through unrecorded.

It is started once per action (`python -I -S`): it imports nothing beyond what Python has
loaded at start (`posix`, `sys`) and two C modules, `_socket` and `_json`, and nothing
from mmcli (the agent's interpreter may not have it): `json`, `socket`, `dataclasses` and
`typing` would pull in `re`, `enum` and `inspect`, 20-70 ms of every action on a loaded
machine, and `os` 2 ms more (`posix` is what it wraps).
"""

from __future__ import annotations

import _json  # the C encoder `json` itself uses for strings
import _socket
import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOCKET_ENV = "MM_RECORD_SOCKET"

COMMANDS = frozenset(
    """click getactivewindow getmouselocation getwindowfocus getwindowname getwindowpid
    getwindowgeometry getwindowclassname getdisplaygeometry key keydown keyup mousedown
    mousemove mousemove_relative mouseup search selectwindow set_desktop get_desktop
    set_num_desktops get_num_desktops set_desktop_for_window get_desktop_for_window
    set_desktop_viewport get_desktop_viewport type windowactivate windowfocus windowmap
    windowminimize windowmove windowraise windowlower windowreparent windowsize windowunmap
    windowkill windowclose windowquit windowstate set_window behave behave_screen_edge exec
    sleep version help""".split()  # noqa: SIM905 - a word list reads better as words
)
"""xdotool's commands: a word among them starts the next command of a chain."""

TYPE_DELAY = 12
"""xdotool type's pause between keys (ms) when no --delay is given."""
SPLITTABLE = frozenset({"sleep"})
"""Unrecorded commands that a chain can be cut around (they use no window stack)."""

BUTTONS = {"1": "left", "2": "middle", "3": "right"}
SCROLLS = {"4": 1, "5": -1}
"""xdotool buttons 4/5 are one wheel click up/down (pyautogui: positive is up)."""

MODIFIERS = {
    "ctrl": "ctrl", "control": "ctrl", "control_l": "ctrl", "control_r": "ctrlright",
    "shift": "shift", "shift_l": "shift", "shift_r": "shiftright",
    "alt": "alt", "alt_l": "alt", "alt_r": "altright", "meta": "alt", "meta_l": "alt",
    "meta_r": "altright", "super": "win", "super_l": "win", "super_r": "winright",
    "hyper": "win", "hyper_l": "win", "win": "win",
}  # fmt: skip
NAMED_KEYS = {
    "return": "enter", "kp_enter": "enter", "enter": "enter", "linefeed": "enter",
    "tab": "tab", "iso_left_tab": "tab", "backspace": "backspace", "escape": "esc",
    "esc": "esc", "delete": "delete", "kp_delete": "delete", "insert": "insert",
    "kp_insert": "insert", "home": "home", "kp_home": "home", "end": "end", "kp_end": "end",
    "page_up": "pageup", "prior": "pageup", "kp_page_up": "pageup", "kp_prior": "pageup",
    "page_down": "pagedown", "next": "pagedown", "kp_page_down": "pagedown",
    "kp_next": "pagedown", "left": "left", "kp_left": "left", "right": "right",
    "kp_right": "right", "up": "up", "kp_up": "up", "down": "down", "kp_down": "down",
    "space": "space", "kp_space": "space", "caps_lock": "capslock", "num_lock": "numlock",
    "scroll_lock": "scrolllock", "print": "printscreen", "pause": "pause", "menu": "apps",
    "help": "help", "select": "select", "execute": "execute",
    "kp_add": "add", "kp_subtract": "subtract", "kp_multiply": "multiply",
    "kp_divide": "divide", "kp_decimal": "decimal", "kp_separator": "separator",
    **{f"kp_{d}": f"num{d}" for d in "0123456789"},
    **{f"f{n}": f"f{n}" for n in range(1, 25)},
}  # fmt: skip
PUNCTUATION = {
    "exclam": "!", "quotedbl": '"', "numbersign": "#", "dollar": "$", "percent": "%",
    "ampersand": "&", "apostrophe": "'", "quoteright": "'", "parenleft": "(",
    "parenright": ")", "asterisk": "*", "plus": "+", "comma": ",", "minus": "-",
    "period": ".", "slash": "/", "colon": ":", "semicolon": ";", "less": "<", "equal": "=",
    "greater": ">", "question": "?", "at": "@", "bracketleft": "[", "backslash": "\\",
    "bracketright": "]", "asciicircum": "^", "underscore": "_", "grave": "`",
    "quoteleft": "`", "braceleft": "{", "bar": "|", "braceright": "}", "asciitilde": "~",
}  # fmt: skip


def key_name(keysym: str) -> str | None:
    """The key name mm (and pyautogui) uses for an xdotool keysym; None if it has none."""
    if len(keysym) == 1 and keysym.isprintable() and keysym.isascii():
        return keysym
    low = keysym.lower()
    if low in MODIFIERS:
        return MODIFIERS[low]
    if low in NAMED_KEYS:
        return NAMED_KEYS[low]
    if keysym in PUNCTUATION:
        return PUNCTUATION[keysym]
    return None


# ---- parsing a command line -------------------------------------------------------------


class Op:
    """One piece of the chain: the argv that performs it, what to tell the recorder, and
    whether it is an input command (reported or deliberately folded into the next one)."""

    def __init__(
        self,
        argv: list[str],
        messages: list[dict[str, Any]] | None = None,
        recorded: bool = False,
    ) -> None:
        self.argv = argv
        self.messages = [] if messages is None else messages
        self.recorded = recorded


class Unsupported(Exception):
    """An input command mm cannot record (its text names it)."""


def _options(
    args: list[str], i: int, flags: set[str], valued: set[str]
) -> tuple[dict[str, str], int]:
    """Parse `--opt`, `--opt value`, `--opt=value` from args[i:]; stop at the first other
    word (after `--`, which is consumed). Returns the options and the next index."""
    found: dict[str, str] = {}
    while i < len(args):
        word = args[i]
        if word == "--":
            return found, i + 1
        if not word.startswith("-") or word == "-" or _is_number(word):
            break
        name, eq, value = word.partition("=")
        if not name.startswith("--") and len(name) > 2:
            name = "-" + name  # getopt_long_only: `-delay` is `--delay`
        if name in flags and not eq:
            found[name] = ""
            i += 1
        elif name in valued:
            if eq:
                found[name] = value
                i += 1
            elif i + 1 < len(args):
                found[name] = args[i + 1]
                i += 2
            else:
                raise Unsupported(f"{name} without a value")
        else:
            raise Unsupported(f"option {word}")
    return found, i


def _is_number(word: str) -> bool:
    try:
        int(word)
    except ValueError:
        return False
    return True


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise Unsupported(f"{what} {word!r}") from None


def _until_command(args: list[str], i: int) -> int:
    while i < len(args) and args[i] not in COMMANDS:
        i += 1
    return i


class _Chain:
    """What the chain knows while parsing: where the pointer was sent, whether a button
    is held down by an earlier command of the same line."""

    def __init__(self) -> None:
        self.at: tuple[int, int] | None = None
        self.pressed = False


def _act(action: dict[str, Any]) -> dict[str, Any]:
    return {"op": "act", "action": action}


def _parse_mousemove(args: list[str], i: int, chain: _Chain) -> tuple[Op, int]:
    opts, j = _options(
        args, i + 1, {"--sync", "--clearmodifiers", "--polar"}, {"--window", "--screen", "--delay"}
    )
    if "--window" in opts or "--polar" in opts:
        raise Unsupported("mousemove " + ("--window" if "--window" in opts else "--polar"))
    if j < len(args) and args[j] == "restore":
        raise Unsupported("mousemove restore")
    if j + 1 >= len(args):
        raise Unsupported("mousemove without X Y")
    x, y = _int(args[j], "mousemove x"), _int(args[j + 1], "mousemove y")
    chain.at = (x, y)
    op = Op(args[i : j + 2], recorded=True)
    if not chain.pressed:
        op.messages.append(_act({"kind": "move", "x": x, "y": y}))
    return op, j + 2


def _where(chain: _Chain) -> dict[str, int]:
    return {} if chain.at is None else {"x": chain.at[0], "y": chain.at[1]}


def _parse_click(args: list[str], i: int, chain: _Chain) -> tuple[Op, int]:
    opts, j = _options(args, i + 1, {"--clearmodifiers"}, {"--repeat", "--delay", "--window"})
    if "--window" in opts:
        raise Unsupported("click --window")
    if j >= len(args):
        raise Unsupported("click without a button")
    button = args[j]
    repeat = _int(opts.get("--repeat", "1"), "click --repeat")
    op = Op(args[i : j + 1], recorded=True)
    if chain.pressed:
        raise Unsupported("click while a button is held (mousedown)")
    if button in BUTTONS:
        op.messages.append(
            _act({"kind": "click", "button": BUTTONS[button], "clicks": repeat, **_where(chain)})
        )
    elif button in SCROLLS:
        amount = SCROLLS[button] * repeat
        op.messages.append(_act({"kind": "scroll", "amount": amount, **_where(chain)}))
    else:
        raise Unsupported(f"click {button} (horizontal scroll or extra button)")
    return op, j + 1


def _parse_button(args: list[str], i: int, chain: _Chain) -> tuple[Op, int]:
    command = args[i]
    opts, j = _options(args, i + 1, {"--clearmodifiers"}, {"--window"})
    if "--window" in opts:
        raise Unsupported(f"{command} --window")
    if j >= len(args) or args[j] not in BUTTONS:
        raise Unsupported(f"{command} {args[j] if j < len(args) else '(no button)'}")
    down = command == "mousedown"
    chain.pressed = down
    state = "down" if down else "up"
    message = {"op": "button", "state": state, "button": BUTTONS[args[j]], **_where(chain)}
    return Op(args[i : j + 1], [message], recorded=True), j + 1


def _parse_type(args: list[str], i: int, chain: _Chain) -> tuple[Op, int]:
    opts, j = _options(
        args,
        i + 1,
        {"--clearmodifiers", "--sync"},
        {"--delay", "--window", "--terminator", "--file", "--args"},
    )
    for bad in ("--window", "--file", "--terminator", "--args"):
        if bad in opts:
            raise Unsupported(f"type {bad}")
    if chain.pressed:
        raise Unsupported("type while a button is held (mousedown)")
    text = "".join(args[j:])
    delay = _int(opts["--delay"], "type --delay") if "--delay" in opts else TYPE_DELAY
    messages = [_act({"kind": "type", "text": text, "key_ms": delay})] if text else []
    return Op(args[i:], messages, recorded=True), len(args)


def _parse_key(args: list[str], i: int, chain: _Chain) -> tuple[list[Op], int]:
    command = args[i]
    opts, j = _options(
        args,
        i + 1,
        {"--clearmodifiers", "--sync"},
        {"--delay", "--repeat", "--repeat-delay", "--window"},
    )
    end = _until_command(args, j)
    if command != "key":
        raise Unsupported(f"{command} {' '.join(args[j:end])}".strip())
    if "--window" in opts:
        raise Unsupported("key --window")
    if chain.pressed:
        raise Unsupported("key while a button is held (mousedown)")
    if end == j:
        raise Unsupported("key without keys")
    repeat = _int(opts.get("--repeat", "1"), "key --repeat")
    prefix = args[i : i + 1] + [w for w in args[i + 1 : j] if w != "--"]
    ops: list[Op] = []
    for seq in args[j:end]:
        names = [key_name(k) for k in seq.split("+")] if seq != "+" else ["+"]
        if not seq or None in names:
            raise Unsupported(f"key {seq}")
        keys = [str(n) for n in names]
        if len(keys) > 1:
            action = {"kind": "hotkey", "keys": keys}
            messages = [_act(action) for _ in range(repeat)]
        else:
            messages = [_act({"kind": "press", "keys": keys, "clicks": repeat})]
        ops.append(Op([*prefix, "--", seq], messages, recorded=True))
    return ops, end


def parse(args: list[str]) -> list[Op]:
    """The chain on an xdotool command line, as ops in order.

    An input command that cannot be recorded becomes an op whose message says so; the
    rest of the line then passes through unparsed (it runs as the agent wrote it).
    """
    ops: list[Op] = []
    chain = _Chain()
    i = 0
    if args and args[0] not in COMMANDS:
        if args[0].startswith("-") and args[0] != "-":
            return [Op(list(args))]  # --version, --help
        return [Op(list(args), [_unsupported(f"a script ({args[0]})")])]
    while i < len(args):
        command = args[i]
        try:
            if command == "mousemove":
                op, i = _parse_mousemove(args, i, chain)
                ops.append(op)
            elif command == "click":
                op, i = _parse_click(args, i, chain)
                ops.append(op)
            elif command in ("mousedown", "mouseup"):
                op, i = _parse_button(args, i, chain)
                ops.append(op)
            elif command == "type":
                op, i = _parse_type(args, i, chain)
                ops.append(op)
            elif command in ("key", "keydown", "keyup"):
                more, i = _parse_key(args, i, chain)
                ops.extend(more)
            elif command == "mousemove_relative":
                raise Unsupported("mousemove_relative")
            else:
                end = _until_command(args, i + 1)
                ops.append(Op(args[i:end]))
                i = end
        except Unsupported as e:
            ops.append(Op(args[i:], [_unsupported(str(e))], recorded=True))
            break
    return _fold_moves(ops)


def _unsupported(what: str) -> dict[str, Any]:
    return {"op": "unsupported", "name": f"xdotool {what}"}


def _fold_moves(ops: list[Op]) -> list[Op]:
    """A move followed by a pointed action on the same line is that action's approach:
    only the action is recorded (it carries the move's point)."""
    for op, following in zip(ops, ops[1:], strict=False):  # noqa: RUF007 - no import
        if op.argv[0] != "mousemove" or not op.messages or not following.messages:
            continue
        nxt = following.messages[0]
        if nxt.get("op") == "button" or nxt.get("action", {}).get("kind") in ("click", "scroll"):
            op.messages = []
    return ops


# ---- running: report, then perform ------------------------------------------------------


def batches(ops: list[Op]) -> list[tuple[list[dict[str, Any]], list[str]]]:
    """(messages, argv) pairs: each batch's messages are sent, then its argv run, so that
    the screen the recorder captures before an action is the one its predecessor left.

    A line mixing input with window commands (`search ... windowactivate ... type`) may
    pass a window stack from one command to the next: it runs whole, after its reports.
    """
    if any(not op.recorded and op.argv[0] not in SPLITTABLE for op in ops) and any(
        op.recorded for op in ops
    ):
        return [([m for op in ops for m in op.messages], [w for op in ops for w in op.argv])]
    out: list[tuple[list[dict[str, Any]], list[str]]] = []
    messages: list[dict[str, Any]] = []
    argv: list[str] = []
    for op in ops:
        if op.messages and messages:
            out.append((messages, argv))
            messages, argv = [], []
        messages.extend(op.messages)
        argv.extend(op.argv)
    if argv or messages:
        out.append((messages, argv))
    return out


def _identity(path: str) -> tuple[int, int, int] | None:
    """A file's (device, inode, mode), following links; None if there is none."""
    try:
        st = posix.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mode


def getenv(name: str) -> str | None:
    value = posix.environ.get(name.encode())
    return None if value is None else value.decode("utf-8", "surrogateescape")


def real_xdotool(own_dir: str) -> str | None:
    """The next `xdotool` on PATH after the directory this one lives in."""
    own = _identity(own_dir)
    for entry in (getenv("PATH") or "").split(":"):
        here = _identity(entry) if entry else None
        if here is None or (own is not None and here[:2] == own[:2]):
            continue
        candidate = entry.rstrip("/") + "/xdotool"
        found = _identity(candidate)
        if found is not None and found[2] & 0o170000 == 0o100000 and posix.access(candidate, 1):
            return candidate
    return None


def dumps(value: Any) -> str:
    """`value` (str, int, bool, None, lists and dicts of them) as `json.dumps` writes it."""
    if isinstance(value, str):
        return str(_json.encode_basestring_ascii(value))
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"{type(value).__name__} is not sent to the recorder")


OK = b'{"ok": true}\n'
"""The recorder's answer to an action it has captured (`json.dumps({"ok": True})`)."""


class Link:
    def __init__(self, path: str) -> None:
        self._sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        self._sock.connect(path)

    def send(self, message: dict[str, Any]) -> None:
        self._sock.sendall(dumps(message).encode() + b"\n")
        line = b""
        while not line.endswith(b"\n"):  # one request at a time: one line answers it
            chunk = self._sock.recv(65536)
            if not chunk:
                raise RuntimeError("the recorder went away; stopping so no action goes unrecorded")
            line += chunk
        if line != OK:
            import json  # only to read why the recorder refused

            reply = json.loads(line)
            if not reply.get("ok"):
                raise RuntimeError(str(reply.get("error", "the recorder refused the action")))


def main(argv: list[str], own_dir: str) -> int:
    real = real_xdotool(own_dir)
    if real is None:
        print("xdotool: command not found (mm's recorder found no real xdotool on PATH)",
              file=sys.stderr)  # fmt: skip
        return 127
    path = getenv(SOCKET_ENV)
    if not path or not argv:
        posix.execv(real, [real, *argv])
    plan = batches(parse(argv))
    link: Link | None = None
    for n, (messages, args) in enumerate(plan):
        try:
            for message in messages:
                link = link or Link(path)
                link.send(message)
        except (OSError, RuntimeError, ValueError) as e:
            # Not the whole line: typed text may hold a secret.
            print(f"mm: error: xdotool {argv[0]}: {e}", file=sys.stderr)
            return 1
        if not args:
            continue
        if n == len(plan) - 1:
            sys.stdout.flush()
            posix.execv(real, [real, *args])
        sys.stdout.flush()
        pid = posix.posix_spawn(real, [real, *args], posix.environ)
        code = posix.waitstatus_to_exitcode(posix.waitpid(pid, 0)[1])
        if code != 0:
            return code if code > 0 else 128 - code
    return 0
