"""The DevTools backend: a browser's page as the display (`--display cdp://HOST:PORT`).

The screen is the page's viewport as the browser renders it (`Page.captureScreenshot`,
in CSS pixels: a page scaled for a high-density screen is captured at scale 1), headless
or not. Input is DevTools input events (`Input.dispatchMouseEvent`,
`Input.dispatchKeyEvent`): a click moves, presses and releases at once; text is typed key
by key, each character as the key that gives it. A page's own dialog (`alert`, `confirm`,
`prompt`) is not in a screenshot, and a page behind one answers nothing: while one is
open the screen is the last one with the dialog drawn over its middle (its message as
the browser told it), so every check refuses it; Enter accepts it and Escape dismisses
it, as on a desktop. A typed field is read back from the page itself (the focused
element's value, as exact as an accessibility tree). The browser tells nothing of
windows: the pixel rules apply, as on a VNC desktop.
"""

from __future__ import annotations

import base64
import contextlib
import io
import threading
import time
from typing import Any

from PIL import Image, ImageDraw

from mmcli.backends.base import Backend, BrowserPage
from mmcli.backends.devtools import DevTools, Superseded, Unanswered, page_socket
from mmcli.desktop.display import CdpAddress
from mmcli.errors import DisplayError, DisplayLost
from mmcli.model import Action, ActionKind
from mmcli.pace import KEY_PAUSE_MIN
from mmcli.readback.field import FieldText, NotRead
from mmcli.screen.fingerprint import Frame, Rect

Key = tuple[str, str, int, str]
"""A key as DevTools dispatches it: its `key`, `code`, Windows key code and the text it
types ("" for none)."""

NAMED_KEYS: dict[str, Key] = {
    "enter": ("Enter", "Enter", 13, "\r"), "return": ("Enter", "Enter", 13, "\r"),
    "\n": ("Enter", "Enter", 13, "\r"), "\r": ("Enter", "Enter", 13, "\r"),
    "tab": ("Tab", "Tab", 9, ""), "\t": ("Tab", "Tab", 9, ""),
    "esc": ("Escape", "Escape", 27, ""), "escape": ("Escape", "Escape", 27, ""),
    "backspace": ("Backspace", "Backspace", 8, ""), "\b": ("Backspace", "Backspace", 8, ""),
    "delete": ("Delete", "Delete", 46, ""), "del": ("Delete", "Delete", 46, ""),
    "insert": ("Insert", "Insert", 45, ""), "home": ("Home", "Home", 36, ""),
    "end": ("End", "End", 35, ""), "pageup": ("PageUp", "PageUp", 33, ""),
    "pgup": ("PageUp", "PageUp", 33, ""), "pagedown": ("PageDown", "PageDown", 34, ""),
    "pgdn": ("PageDown", "PageDown", 34, ""), "left": ("ArrowLeft", "ArrowLeft", 37, ""),
    "up": ("ArrowUp", "ArrowUp", 38, ""), "right": ("ArrowRight", "ArrowRight", 39, ""),
    "down": ("ArrowDown", "ArrowDown", 40, ""), "space": (" ", "Space", 32, " "),
    **{f"f{n}": (f"F{n}", f"F{n}", 111 + n, "") for n in range(1, 13)},
}  # fmt: skip
"""mm's key names (pyautogui's) as DevTools keys."""
MODIFIERS: dict[str, tuple[Key, int]] = {
    "alt": (("Alt", "AltLeft", 18, ""), 1), "altleft": (("Alt", "AltLeft", 18, ""), 1),
    "altright": (("Alt", "AltRight", 18, ""), 1), "option": (("Alt", "AltLeft", 18, ""), 1),
    "ctrl": (("Control", "ControlLeft", 17, ""), 2),
    "ctrlleft": (("Control", "ControlLeft", 17, ""), 2),
    "ctrlright": (("Control", "ControlRight", 17, ""), 2),
    "win": (("Meta", "MetaLeft", 91, ""), 4), "winleft": (("Meta", "MetaLeft", 91, ""), 4),
    "command": (("Meta", "MetaLeft", 91, ""), 4), "cmd": (("Meta", "MetaLeft", 91, ""), 4),
    "super": (("Meta", "MetaLeft", 91, ""), 4),
    "shift": (("Shift", "ShiftLeft", 16, ""), 8),
    "shiftleft": (("Shift", "ShiftLeft", 16, ""), 8),
    "shiftright": (("Shift", "ShiftRight", 16, ""), 8),
}  # fmt: skip
"""Modifier keys and their bit in DevTools' `modifiers` (Alt 1, Ctrl 2, Meta 4, Shift 8)."""
WHEEL_STEP = 100
"""Pixels one scroll click moves (a wheel notch, as a browser takes it)."""
DRAG_STEPS = 10
ENABLE_WAIT = 5.0
"""The most the page may take to answer when mm connects: a page held by a dialog of its
own that opened before mm connected answers nothing until it is closed."""
NAVIGATION_WAIT = 10.0
"""The most a screenshot waits for the page's next document (a form posted, a link)."""
NAVIGATION_POLL = 0.05
CAPTURE_TRY = 3.0
"""The most one `Page.captureScreenshot` is waited for (a healthy one answers within
0.1 s): a headless page whose compositor went idle may never answer it; it is woken
(`Page.startScreencast`, then stopped) and asked again, up to `CAPTURE_TRIES` times."""
CAPTURE_TRIES = 4
WAKE_WAIT = 0.25
DIALOG_SIZE = (420, 140)
"""The box drawn over the screen's middle while a page's own dialog is open."""

READ_FOCUSED = """(() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  if (!e) return null;
  const r = e.getBoundingClientRect();
  const box = [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)];
  if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA')
    return {text: e.value, password: e.type === 'password', box};
  if (e.isContentEditable) return {text: e.innerText, password: false, box};
  return null;
})()"""
"""The focused field's text and where it stands (None when no text field has the focus)."""


def key_of(name: str) -> Key | None:
    """The DevTools key for a key name or a single character; None for an unknown name."""
    lowered = name.lower()
    if lowered in NAMED_KEYS:
        return NAMED_KEYS[lowered]
    if lowered in MODIFIERS:
        return MODIFIERS[lowered][0]
    if len(name) == 1:
        char = name
        if char.isascii() and char.isalpha():
            return (char, f"Key{char.upper()}", ord(char.upper()), char)
        if char.isdigit() and char.isascii():
            return (char, f"Digit{char}", ord(char), char)
        return (char, "", 0, char)
    return None


class CdpBackend(Backend):
    takes_local_input = False

    def __init__(self, address: CdpAddress) -> None:
        self.address = address
        socket = page_socket(address)
        self._devtools = DevTools(socket)
        self._dialog: str | None = None
        """The message of the page's own dialog, while one is open."""
        self._last: Frame | None = None
        self._lock = threading.Lock()
        self._page = BrowserPage(address, socket.rsplit("/", 1)[-1], [])
        """The page driven: its DevTools id (its socket URL's last part), its navigations."""
        self._devtools.on("Page.javascriptDialogOpening", self._dialog_opened)
        self._devtools.on("Page.javascriptDialogClosed", self._dialog_closed)
        self._devtools.on("Page.frameNavigated", self._navigated)
        try:
            self._devtools.call("Page.enable", timeout=ENABLE_WAIT)
            metrics = self._devtools.call("Page.getLayoutMetrics", timeout=ENABLE_WAIT)
        except DisplayError:
            self._devtools.close()
            raise DisplayError(
                f"{address}: the page does not answer DevTools; a dialog of its own (alert, "
                "confirm) opened before mm connected holds it: close it, then run again"
            ) from None
        viewport = metrics.get("cssLayoutViewport") or metrics.get("layoutViewport") or {}
        self._size = (int(viewport.get("clientWidth", 0)), int(viewport.get("clientHeight", 0)))
        found = self._evaluate("window.devicePixelRatio")
        self._ratio = float(found) if isinstance(found, int | float) and found > 0 else 1.0
        """Device pixels per CSS pixel: screenshots are taken at scale 1."""
        self._pointer = (self._size[0] // 2, self._size[1] // 2)
        """Where mm's events last put the page's pointer (DevTools tells no other): at
        first the middle of the page, away from the fail-safe corners."""

    # ---- the screen --------------------------------------------------------------------

    def size(self) -> tuple[int, int]:
        return self._size

    def grab(self) -> Frame:
        with self._lock:
            if self._dialog is not None and self._last is not None:
                return self._with_dialog(self._last, self._dialog)
            params: dict[str, Any] = {"format": "png", "captureBeyondViewport": False}
            ratio = self._ratio
            if ratio != 1:
                w, h = self._size
                params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": 1 / ratio}
            shot = self._screenshot(params)
            if shot is None:  # a dialog of the page's own opened meanwhile
                return self._with_dialog(self._last or self._blank(), self._dialog or "")
            image: Image.Image = Image.open(io.BytesIO(base64.b64decode(shot["data"])))
            if image.size != self._size:
                image = image.resize(self._size)
            self._last = Frame.from_image(image.convert("RGB"))
            return self._last

    def _screenshot(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """`Page.captureScreenshot`, asked again while the page is between two documents
        (a form posted, a link followed: "Not attached to an active page"), for at most
        `NAVIGATION_WAIT`; None when a dialog of the page's own opened before it was
        answered (a page held by one answers nothing until it is closed)."""
        deadline = time.monotonic() + NAVIGATION_WAIT
        tries = 0
        while True:
            try:
                return self._devtools.call(
                    "Page.captureScreenshot",
                    params,
                    timeout=CAPTURE_TRY,
                    until=lambda: self._dialog is not None,
                )
            except Superseded:
                return None
            except Unanswered:
                tries += 1
                if tries >= CAPTURE_TRIES:
                    raise DisplayError(
                        f"the browser did not answer Page.captureScreenshot {tries} times "
                        f"({CAPTURE_TRY:g}s each, its compositor woken between)"
                    ) from None
                self._wake_compositor()
            except DisplayError as e:
                if "Not attached" not in str(e) or time.monotonic() >= deadline:
                    raise
                time.sleep(NAVIGATION_POLL)

    def _wake_compositor(self) -> None:
        """Make an idle headless page draw a frame again: a screencast started and
        stopped (it changes nothing the page or a screenshot shows)."""
        with contextlib.suppress(DisplayError):
            self._devtools.call(
                "Page.startScreencast",
                {"format": "jpeg", "quality": 10, "maxWidth": 64, "maxHeight": 64},
                timeout=CAPTURE_TRY,
            )
            time.sleep(WAKE_WAIT)
            self._devtools.call("Page.stopScreencast", timeout=CAPTURE_TRY)

    def _blank(self) -> Frame:
        return Frame.from_image(Image.new("RGB", self._size, "white"))

    @staticmethod
    def _with_dialog(frame: Frame, message: str) -> Frame:
        """`frame` with a page's dialog drawn over its middle: a box no recorded screen
        shows, so no check passes while it is open."""
        image = Image.fromarray(frame.pixels[..., 2::-1].copy())
        w, h = DIALOG_SIZE
        x, y = (image.width - w) // 2, (image.height - h) // 2
        draw = ImageDraw.Draw(image)
        draw.rectangle([x, y, x + w, y + h], fill="#f0f0f0", outline="#202020", width=3)
        draw.text((x + 16, y + 16), "The page asks:", fill="#202020")
        draw.text((x + 16, y + 44), message[:60], fill="#202020")
        draw.text((x + 16, y + h - 32), "Enter: OK    Escape: Cancel", fill="#202020")
        return Frame.from_image(image)

    def page(self) -> BrowserPage:
        return self._page

    def _navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame")
        if isinstance(frame, dict) and not frame.get("parentId"):
            self._page.navigations.append(time.monotonic())

    def _dialog_opened(self, params: dict[str, Any]) -> None:
        self._dialog = str(params.get("message", ""))

    def _dialog_closed(self, params: dict[str, Any]) -> None:
        self._dialog = None

    def window_title_at(self, x: int, y: int) -> str | None:
        return None

    def read_field(
        self, box: Rect | None, frame: Frame | None = None, prefer: str = ""
    ) -> FieldText | NotRead:
        """The focused field's text, from the page itself (exact, as an accessibility tree
        gives it): an input's or a text area's value, an editable element's text."""
        try:
            found = self._evaluate(READ_FOCUSED)
        except DisplayLost:
            raise
        except Superseded:
            return NotRead("accessibility", "a dialog of the page's own holds the page")
        except DisplayError as e:  # between two documents, say
            return NotRead("accessibility", f"the page did not tell its focused field ({e})")
        if not isinstance(found, dict):
            return NotRead("accessibility", "no text field of the page has the focus")
        x, y, w, h = (int(v) for v in found.get("box", (0, 0, 0, 0)))
        role = "password text" if found.get("password") else "entry"
        text = str(found.get("text", ""))
        return FieldText(text, "accessibility", rect=Rect(x, y, w, h), role=role)

    def _evaluate(self, expression: str) -> Any:
        """`expression`'s value in the page; `Superseded` when a dialog of the page's own
        holds it (no script runs until it is closed)."""
        reply = self._devtools.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            until=lambda: self._dialog is not None,
        )
        return (reply.get("result") or {}).get("value")

    # ---- input -------------------------------------------------------------------------

    def pointer(self) -> tuple[int, int]:
        return self._pointer

    def move(self, x: int, y: int) -> None:
        self._mouse("mouseMoved", x, y)
        self.input_at = time.monotonic()

    def valid_key(self, key: str) -> bool:
        return key_of(key) is not None

    def perform(self, action: Action) -> None:
        try:
            self._perform(action)
        finally:
            self.input_at = time.monotonic()

    def _perform(self, action: Action) -> None:
        k = action.kind
        if k in (ActionKind.CLICK, ActionKind.SCROLL, ActionKind.MOVE, ActionKind.DRAG):
            x, y = action.point or self._pointer
            self._mouse("mouseMoved", x, y)
        if k is ActionKind.CLICK:
            for n in range(1, action.clicks + 1):
                self._mouse("mousePressed", x, y, action.button, n)
                self._mouse("mouseReleased", x, y, action.button, n)
        elif k is ActionKind.SCROLL:
            self._mouse("mouseWheel", x, y, delta=-action.amount * WHEEL_STEP)
        elif k is ActionKind.DRAG and action.x2 is not None and action.y2 is not None:
            self._mouse("mousePressed", x, y, action.button, 1)
            for i in range(1, DRAG_STEPS + 1):
                mx = x + (action.x2 - x) * i // DRAG_STEPS
                my = y + (action.y2 - y) * i // DRAG_STEPS
                self._mouse("mouseMoved", mx, my, action.button)
            self._mouse("mouseReleased", action.x2, action.y2, action.button, 1)
        elif k is ActionKind.TYPE:
            pause = action.typing_pause()
            for char in action.text:
                self._tap(key_of(char) or (char, "", 0, char), 0)
                if pause:
                    time.sleep(pause)
        elif k is ActionKind.PRESS:
            for i in range(action.clicks):
                if i:
                    time.sleep(KEY_PAUSE_MIN)
                self._chord(action.keys)
        elif k is ActionKind.HOTKEY:
            self._chord(action.keys)

    def _chord(self, names: tuple[str, ...]) -> None:
        """Modifiers held down in order, the other keys tapped with them, then released."""
        held: list[Key] = []
        bits = 0
        others: list[Key] = []
        for name in names:
            if name.lower() in MODIFIERS:
                key, bit = MODIFIERS[name.lower()]
                self._key("rawKeyDown", key, bits | bit)
                held.append(key)
                bits |= bit
            else:
                key_ = key_of(name)
                if key_ is None:
                    raise ValueError(f"unknown key {name!r}")
                others.append(key_)
        for key in others:
            self._tap(key, bits)
        for key in reversed(held):
            bits &= ~next(b for k, b in MODIFIERS.values() if k == key)
            self._key("keyUp", key, bits)

    def _tap(self, key: Key, modifiers: int) -> None:
        if self._dialog is not None and key[0] in ("Enter", "Escape"):
            # The page's own dialog has the keyboard: Enter accepts it, Escape dismisses.
            self._devtools.call("Page.handleJavaScriptDialog", {"accept": key[0] == "Enter"})
            return
        types_text = bool(key[3]) and not modifiers & 0b0111  # no Alt, Ctrl or Meta held
        self._key("keyDown" if types_text else "rawKeyDown", key, modifiers, types_text)
        self._key("keyUp", key, modifiers)

    def _key(self, kind: str, key: Key, modifiers: int, text: bool = False) -> None:
        name, code, keycode, typed = key
        params: dict[str, Any] = {"type": kind, "key": name, "modifiers": modifiers}
        if code:
            params["code"] = code
        if keycode:
            params["windowsVirtualKeyCode"] = keycode
        if text:
            params["text"] = params["unmodifiedText"] = typed
        self._devtools.call("Input.dispatchKeyEvent", params)

    def _mouse(
        self,
        kind: str,
        x: int,
        y: int,
        button: str | None = None,
        clicks: int = 0,
        delta: int = 0,
    ) -> None:
        params: dict[str, Any] = {"type": kind, "x": x, "y": y}
        if button is not None:
            params["button"] = button
            params["buttons"] = {"left": 1, "right": 2, "middle": 4}.get(button, 0)
            params["clickCount"] = clicks
        if kind == "mouseWheel":
            params["deltaX"], params["deltaY"] = 0, delta
        self._devtools.call("Input.dispatchMouseEvent", params)
        self._pointer = (x, y)

    def close(self) -> None:
        self._devtools.close()
