"""Input on an X11 display through XTEST, with python-xlib's protocol layer alone.

`mm act` outside a recorder gives its one action through `XTest` (`cli/fastact.py`). An
agent runs one `mm act` per action, so what the process loads is most of what the action
costs: this module loads neither pyautogui (whose package imports pyscreeze, Pillow,
pymsgbox and mouseinfo before its X11 layer: about 4.5x a bare Python start) nor
python-xlib's `Display` (which loads a module for every extension the server has) nor the
recording model.

The input is the one `xinput.XInput` (replay's input half, through pyautogui's X11 layer)
gives, with the same key names and pace: a click moves the pointer to its point before
the press and before the release; a scroll is wheel clicks (buttons 4 and 5) there; a drag
moves in `DRAG_STEPS` steps over `DRAG_SECONDS`; a key that needs shift is pressed with
shift held around its press. Typing differs where pyautogui gets it wrong: each character
is typed with the key that gives it at the unshifted or the shifted level ('<' with the
unshifted key that gives '<', not the shifted one pyautogui finds first, which gives
'>'), and a character on no key ('é', '€') through a spare keycode bound to it while it
is typed, as xdotool does (`xinput.type_unicode` does the same for replay).

Like `XInput`, it has no fail-safe of its own: the screen corner stops a replay between
two actions (`replay.look`), and one `mm act` is one action. Ctrl-C mid-action releases
what is held (a drag's button, a hotkey's keys) and unbinds the keycodes it bound.
"""

from __future__ import annotations

import os
import time

from mmcli.errors import DisplayError
from mmcli.pace import KEY_PAUSE_MIN, typing_pause

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from typing import Any

DRAG_SECONDS = 0.2
"""Apps need pointer motion between press and release to see a drag."""
DRAG_STEPS = 10


def drag_path(x: int, y: int, x2: int, y2: int) -> Iterator[tuple[int, int]]:
    """The points a drag moves the held pointer through, one every
    `DRAG_SECONDS / DRAG_STEPS` (the pause is taken before each)."""
    for i in range(1, DRAG_STEPS + 1):
        time.sleep(DRAG_SECONDS / DRAG_STEPS)
        yield round(x + (x2 - x) * i / DRAG_STEPS), round(y + (y2 - y) * i / DRAG_STEPS)


REMAP_SETTLE = 0.15
"""Seconds an app gets to take in a keyboard mapping change: before the keys come (else it
reads them with its old map), and after them before the mapping is undone."""

BUTTONS = {"left": 1, "middle": 2, "right": 3}
WHEEL_UP, WHEEL_DOWN = 4, 5

KEY_PRESS, KEY_RELEASE, BUTTON_PRESS, BUTTON_RELEASE, MOTION = 2, 3, 4, 5, 6
"""X event types, as XTEST's FakeInput takes them."""

SHIFT = 0xFFE1
NAMED_KEYS = {
    **dict.fromkeys(("enter", "return"), 0xFF0D),
    "tab": 0xFF09,
    "space": 0x20,
    "backspace": 0xFF08,
    **dict.fromkeys(("delete", "del"), 0xFFFF),
    **dict.fromkeys(("esc", "escape"), 0xFF1B),
    "left": 0xFF51,
    "up": 0xFF52,
    "right": 0xFF53,
    "down": 0xFF54,
    "home": 0xFF50,
    "end": 0xFF57,
    **dict.fromkeys(("pageup", "pgup"), 0xFF55),
    **dict.fromkeys(("pagedown", "pgdn"), 0xFF56),
    "insert": 0xFF63,
    **dict.fromkeys(("shift", "shiftleft"), SHIFT),
    "shiftright": 0xFFE2,
    **dict.fromkeys(("ctrl", "ctrlleft"), 0xFFE3),
    "ctrlright": 0xFFE4,
    **dict.fromkeys(("alt", "altleft"), 0xFFE9),
    "altright": 0xFFEA,
    **dict.fromkeys(("win", "winleft"), 0xFFEB),
    "winright": 0xFFEC,
    "capslock": 0xFFE5,
    "numlock": 0xFF7F,
    "scrolllock": 0xFF14,
    **dict.fromkeys(("printscreen", "print", "prtsc", "prtscr", "prntscrn"), 0xFF61),
    "pause": 0xFF13,
    "select": 0xFF60,
    "execute": 0xFF62,
    "help": 0xFF6A,
    "apps": 0xFF67,
    **{f"num{i}": 0xFFB0 + i for i in range(10)},
    "multiply": 0xFFAA,
    "add": 0xFFAB,
    "separator": 0xFFAC,
    "subtract": 0xFFAD,
    "decimal": 0xFFAE,
    "divide": 0xFFAF,
    **{f"f{i}": 0xFFBE + i - 1 for i in range(1, 25)},
}
"""The keysyms of the key names mm gives (pyautogui's names for the keys its X11 layer
has; a test checks them against python-xlib's keysym table)."""
CONTROL_CHARS = {"\n": 0xFF0D, "\r": 0xFF0D, "\t": 0xFF09, "\b": 0xFF08}
"""Characters typed with a key of their own, as pyautogui types them."""
SHIFTED = frozenset('~!@#$%^&*()_+{}|:"<>?')
"""What pyautogui presses with shift besides capitals: a key name given as one of these
(or as a capital) is pressed with shift held around its press."""


KEY_CHARS = frozenset("\t\n\r" + "".join(chr(c) for c in range(0x20, 0x7F) if not chr(c).isupper()))
"""The one-character key names pyautogui knows (`mm act` refuses others: text is typed)."""


def _known(keys: Sequence[str]) -> list[str]:
    """`keys` less the names no key has here (pyautogui's `volumeup`, `command`): as
    pyautogui's X11 layer, which the recorded agent used, gives them as nothing."""
    return [k for k in keys if len(k) == 1 or k.lower() in NAMED_KEYS]


def keysym_of(char: str) -> int:
    """The X keysym that types `char`: Latin-1 keysyms are the code points, others are
    0x01000000 + the code point."""
    code = ord(char)
    return code if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF else 0x01000000 | code


def char_keysym(char: str) -> int:
    """The keysym typing `char` presses: its own, or its key's (Return for a newline)."""
    return CONTROL_CHARS.get(char) or keysym_of(char)


def key_keysym(key: str) -> int:
    """The keysym of a key name (`enter`, `f5`) or a one-character key (`a`, `A`, `1`)."""
    named = NAMED_KEYS.get(key.lower()) if len(key) > 1 else None
    return named if named is not None else char_keysym(key)


def needs_shift(key: str) -> bool:
    """Whether pyautogui holds shift for this key name: a capital or a shifted sign."""
    return len(key) == 1 and (key.isupper() or key in SHIFTED)


class Keymap:
    """Where each keysym is on the keyboard: (keycode, level) at the unshifted (0) or
    shifted (1) level, the lowest level and keycode first; and the keycodes with no
    keysym at all (spare, to bind a character on no key to)."""

    def __init__(self, first: int, rows: Sequence[Sequence[int]]) -> None:
        self.width = max((len(row) for row in rows), default=1)
        self.at: dict[int, tuple[int, int]] = {}
        for level in (0, 1):
            for i, row in enumerate(rows):
                if level < len(row) and row[level] and row[level] not in self.at:
                    self.at[row[level]] = (first + i, level)
        self.spare = [first + i for i, row in enumerate(rows) if not any(row)]


class XTest:
    """One X connection (python-xlib's protocol layer) and XTEST input through it."""

    def __init__(self, display: str | None = None, connection: Any = None) -> None:
        """On a connection of its own to `display` (default $DISPLAY), or on
        `connection` (a python-xlib protocol-level display another part holds)."""
        self._x = connection if connection is not None else _connect(display)
        from Xlib.ext.xtest import FakeInput
        from Xlib.protocol import request

        self._request = request
        self._fake_input = FakeInput
        reply = request.QueryExtension(display=self._x, name="XTEST")
        if not reply.present:
            raise DisplayError(f"display {self._x.get_display_name()} has no XTEST: no input")
        self._opcode = reply.major_opcode
        self._root = self._x.info.roots[self._x.default_screen].root
        info = self._x.info
        count = info.max_keycode - info.min_keycode + 1
        rows = request.GetKeyboardMapping(
            display=self._x, first_keycode=info.min_keycode, count=count
        ).keysyms
        self.keymap = Keymap(info.min_keycode, [list(row) for row in rows])

    def close(self) -> None:
        self._x.close()

    def __enter__(self) -> XTest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def valid_key(self, key: str) -> bool:
        """Whether `key` is a key name (`enter`, `f5`) or a key's character (pyautogui's
        names: lower-case letters, digits, ASCII signs, space, tab, newline)."""
        return key.lower() in NAMED_KEYS if len(key) > 1 else key in KEY_CHARS

    def on_keys(self, text: str) -> bool:
        """Whether every character of `text` is on a key: typed with no keymap change."""
        return all(char_keysym(c) in self.keymap.at for c in text)

    # ---- the actions ---------------------------------------------------------------------

    def give(self, action: Mapping[str, Any]) -> None:
        """Give `action`, in the recorder's JSON form (`kind` and its fields), at once."""
        kind = action["kind"]
        at = (action.get("x"), action.get("y"))
        if kind == "click":
            self.click(*self._at(*at), action.get("button", "left"), action.get("clicks", 1))
        elif kind == "type":
            self.type(action["text"], typing_pause(action.get("key_ms")))
        elif kind == "press":
            self.press(action["keys"], action.get("clicks", 1))
        elif kind == "hotkey":
            self.hotkey(action["keys"])
        elif kind == "scroll":
            self.scroll(action["amount"], *self._at(*at))
        elif kind == "move":
            self.move(*self._at(*at))
        elif kind == "drag":
            end = self._at(action.get("x2"), action.get("y2"))
            self.drag(self._at(*at), end, action.get("button", "left"))
        else:
            raise ValueError(f"unknown action {kind!r}")

    def click(self, x: int, y: int, button: str = "left", clicks: int = 1) -> None:
        """Click `clicks` times (no pause between: a double click is one gesture)."""
        for _ in range(clicks):
            self._button(x, y, BUTTONS[button])

    def move(self, x: int, y: int) -> None:
        self._fake(MOTION, 0, x, y)
        self._sync()

    def scroll(self, amount: int, x: int, y: int) -> None:
        """`amount` wheel clicks at (x, y): positive up, negative down."""
        for _ in range(abs(amount)):
            self._button(x, y, WHEEL_UP if amount > 0 else WHEEL_DOWN)

    def drag(self, start: tuple[int, int], end: tuple[int, int], button: str = "left") -> None:
        """Press, move in steps over `DRAG_SECONDS`, release: the app sees the motion."""
        (x, y), (x2, y2) = start, end
        code = BUTTONS[button]
        self.move(x, y)
        self._fake(BUTTON_PRESS, code)
        self._sync()
        try:
            for point in drag_path(x, y, x2, y2):
                self.move(*point)
        finally:  # never leave the button held down (Ctrl-C mid-drag)
            self.move(x2, y2)
            self._fake(BUTTON_RELEASE, code)
            self._sync()

    def press(self, keys: Sequence[str], clicks: int = 1) -> None:
        """Press and release each key in turn, `clicks` times."""
        keys = _known(keys)
        with self._bound({key_keysym(k) for k in keys}) as codes:
            for i in range(clicks):
                if i:  # a repeated key with no pause would read as auto-repeat
                    time.sleep(KEY_PAUSE_MIN)
                for key in keys:
                    self._key_down(key, codes)
                    self._key_up(key, codes)

    def hotkey(self, keys: Sequence[str]) -> None:
        """Press the keys in order, release them in reverse order."""
        keys = _known(keys)
        with self._bound({key_keysym(k) for k in keys}) as codes:
            held: list[str] = []
            try:
                for key in keys:
                    self._key_down(key, codes)
                    held.append(key)
            finally:  # never leave a key held down (Ctrl-C mid-chord)
                for key in reversed(held):
                    self._key_up(key, codes)

    def type(self, text: str, pause: float) -> None:
        """Type `text`, `pause` seconds between two keys: runs of characters on the
        keyboard with their keys, the others through keycodes bound to them (as many
        different characters at a time as there are spare keycodes: an app rereads its
        whole keymap at each change)."""
        for i, (on_keys, run) in enumerate(self._runs(text)):
            if i:
                time.sleep(pause)
            if on_keys:
                self._type_keys(run, pause, {})
                continue
            for j, segment in enumerate(self._segments(run)):
                if j:
                    time.sleep(pause)
                with self._bound({char_keysym(c) for c in segment}) as codes:
                    self._type_keys(segment, pause, codes)

    # ---- keys ----------------------------------------------------------------------------

    def _runs(self, text: str) -> Iterator[tuple[bool, str]]:
        """`text` in runs of characters on the keyboard (True) or on no key (False)."""
        run, on_keys = "", True
        for char in text:
            here = char_keysym(char) in self.keymap.at
            if run and here != on_keys:
                yield on_keys, run
                run = ""
            run, on_keys = run + char, here
        if run:
            yield on_keys, run

    def _segments(self, run: str) -> Iterator[str]:
        """`run` in pieces of at most as many different characters as spare keycodes."""
        room = len(self.keymap.spare)
        if not room:
            raise DisplayError("no free keycode to type non-ASCII text with")
        piece = ""
        for char in run:
            if char not in piece and len(set(piece)) == room:
                yield piece
                piece = ""
            piece += char
        if piece:
            yield piece

    def _type_keys(self, chars: str, pause: float, codes: dict[int, int]) -> None:
        """Type each character with its key, at its level ('<' unshifted, 'A' shifted)."""
        shift = self.keymap.at.get(SHIFT, (0, 0))[0]
        for i, char in enumerate(chars):
            if i:
                time.sleep(pause)
            keysym = char_keysym(char)
            code, level = (codes[keysym], 0) if keysym in codes else self.keymap.at[keysym]
            if level and shift:
                self._fake(KEY_PRESS, shift)
            self._fake(KEY_PRESS, code)
            self._fake(KEY_RELEASE, code)
            if level and shift:
                self._fake(KEY_RELEASE, shift)
            self._sync()

    def _key_down(self, key: str, codes: dict[int, int]) -> None:
        """A key name pressed as pyautogui presses it: with shift held around the press
        for a capital or a shifted sign."""
        code = self._keycode(key_keysym(key), codes)
        shift = needs_shift(key) and self.keymap.at.get(SHIFT, (0, 0))[0]
        if shift:
            self._fake(KEY_PRESS, shift)
        self._fake(KEY_PRESS, code)
        if shift:
            self._fake(KEY_RELEASE, shift)
        self._sync()

    def _key_up(self, key: str, codes: dict[int, int]) -> None:
        self._fake(KEY_RELEASE, self._keycode(key_keysym(key), codes))
        self._sync()

    def _keycode(self, keysym: int, codes: dict[int, int]) -> int:
        return codes[keysym] if keysym in codes else self.keymap.at[keysym][0]

    def _bound(self, keysyms: set[int]) -> _Binding:
        """The keysyms on no key bound to spare keycodes for a while (`with`)."""
        return _Binding(self, sorted(k for k in keysyms if k not in self.keymap.at))

    def _map(self, code: int, keysym: int) -> None:
        """Bind `keycode` to `keysym` at every level (else an app reads 'É' as 'é'); 0
        unbinds it."""
        self._request.ChangeKeyboardMapping(
            display=self._x, first_keycode=code, keysyms=[(keysym,) * self.keymap.width]
        )

    # ---- the wire ------------------------------------------------------------------------

    def _button(self, x: int, y: int, code: int) -> None:
        """Move there, press; move there, release (as pyautogui's `_click`)."""
        self.move(x, y)
        self._fake(BUTTON_PRESS, code)
        self._sync()
        self.move(x, y)
        self._fake(BUTTON_RELEASE, code)
        self._sync()

    def _fake(self, event: int, detail: int, x: int = 0, y: int = 0) -> None:
        self._fake_input(
            display=self._x,
            opcode=self._opcode,
            event_type=event,
            detail=detail,
            time=0,
            root=0,
            x=x,
            y=y,
        )

    def _sync(self) -> None:
        """Wait until the server has taken every request sent so far (one round trip)."""
        self._request.GetInputFocus(display=self._x)

    def pointer(self) -> tuple[int, int]:
        reply = self._request.QueryPointer(display=self._x, window=self._root)
        return (int(reply.root_x), int(reply.root_y))

    def _at(self, x: int | None, y: int | None) -> tuple[int, int]:
        """A point of an action, the pointer's where it has none (as pyautogui does)."""
        if x is None or y is None:
            here = self.pointer()
            return (here[0] if x is None else x, here[1] if y is None else y)
        return (x, y)


class _Binding:
    """Keysyms bound to spare keycodes while in `with`; unbound on the way out, with a
    pause on each side for apps to reread the keymap (`REMAP_SETTLE`)."""

    def __init__(self, xtest: XTest, keysyms: list[int]) -> None:
        self._xtest = xtest
        spare = xtest.keymap.spare
        if len(keysyms) > len(spare):
            raise DisplayError("no free keycode to bind a character on no key to")
        self.codes = dict(zip(keysyms, spare, strict=False))

    def __enter__(self) -> dict[int, int]:
        if self.codes:
            try:  # Ctrl-C before the `with` body is entered: no `__exit__` unbinds them
                for keysym, code in self.codes.items():
                    self._xtest._map(code, keysym)
                self._xtest._sync()
                time.sleep(REMAP_SETTLE)
            except BaseException:
                self._unbind()
                raise
        return self.codes

    def __exit__(self, *exc: object) -> None:
        if not self.codes:
            return
        try:
            time.sleep(REMAP_SETTLE)
        finally:
            self._unbind()

    def _unbind(self) -> None:
        for code in self.codes.values():
            self._xtest._map(code, 0)
        self._xtest._sync()


def _connect(display: str | None) -> Any:
    """python-xlib's protocol-level connection to `display` (default $DISPLAY); its
    failures as `DisplayError`."""
    name = display or os.environ.get("DISPLAY")
    if not name:
        raise DisplayError("no display: DISPLAY is not set (start Xvfb, or see `mm doctor`)")
    _ensure_xauthority()
    try:
        from Xlib.protocol.display import Display

        class Connection(Display):
            def __init__(self, name: str) -> None:
                self.resource_classes: dict[str, Any] = {}  # windows stay plain numbers
                super().__init__(name)

        return Connection(name)
    except Exception as e:  # python-xlib raises several types when X is unreachable
        raise DisplayError(f"cannot use display {name}: {e}") from None


def _ensure_xauthority() -> None:
    """python-xlib takes a missing Xauthority file for no authorization, silently, but
    prints a warning on stdout when the file is empty: only then is XAUTHORITY pointed at
    a file with an entry (`desktop.display.ensure_xauthority`, a module that loads ~40 ms
    more than this one)."""
    home = os.environ.get("HOME", "")
    path = os.environ.get("XAUTHORITY") or os.path.join(home, ".Xauthority")
    try:
        if os.stat(path).st_size > 0:
            return
    except OSError:
        return
    from mmcli.desktop.display import ensure_xauthority

    ensure_xauthority()
