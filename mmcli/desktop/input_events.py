"""Input seen on the display, as events: accounted for against what the channels reported,
and turned into actions where no channel reported them.

The display's input is watched (see `input_watch`) while an agent runs or a person
demonstrates. Each button press and key press is either accounted for by an action a
recording channel reported (pyautogui hook, `mm act`, ...) -- the `Ledger` -- or it came
through a channel `mm` does not record. `ActionBuilder` turns such events into actions:
clicks (double clicks, drags), scrolls, typed text (printable keys merged), special keys
as presses and modifier chords as hotkeys. Both are pure: fed with `InputEvent`s, they
need no display and are unit-tested with synthetic event lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from enum import StrEnum

from mmcli.model import Action, ActionKind

BUTTON_NUMBERS = {"left": 1, "middle": 2, "right": 3}
BUTTON_NAMES = {n: name for name, n in BUTTON_NUMBERS.items()}
SCROLL_UP, SCROLL_DOWN = 4, 5
"""X buttons of the wheel (pyautogui's `scroll(n)` presses 4 n times, `scroll(-n)` 5)."""

MODIFIERS = frozenset(
    {
        *("shift", "shiftleft", "shiftright", "ctrl", "ctrlleft", "ctrlright"),
        *("alt", "altleft", "altright", "option", "optionleft", "optionright", "altgr"),
        *("win", "winleft", "winright", "command", "super", "fn", "capslock", "numlock"),
    }
)
"""Key names (pyautogui's) that only modify other keys: pressed alone they do nothing
that is recorded or accounted for."""

CHORD_ORDER = ("ctrl", "alt", "shift", "win")

NEAR = 8
"""A reported click accounts for an observed press this close (px) to its point."""
HOLD = 30.0
"""A reported action's input is expected within this many seconds of its report (or of
the last input it accounted for); after that what is left of it no longer counts."""
DOUBLE_CLICK = 0.5
"""Two presses of a button this close in time (s) and place (`NEAR`) are a double click."""
DRAG_MIN = 5
"""A button released this far (px) from where it was pressed makes a drag."""


class EventKind(StrEnum):
    PRESS = "press"
    RELEASE = "release"
    KEY = "key"
    KEY_UP = "key-up"
    MOTION = "motion"
    SENT = "sent"
    """A key or button event a client sent to a window with XSendEvent (pynput's
    `type()`, `xdotool type --window`): not device input, and not replayable as such."""


@dataclass(frozen=True)
class InputEvent:
    """One device event on the display, with the pointer position when it happened."""

    kind: EventKind
    x: int
    y: int
    at: float = 0.0
    """Monotonic time when it was seen."""
    button: int = 0
    key: str = ""
    """pyautogui's name of the key, unshifted ('a', '1', 'enter', 'shift'); '' if unknown."""
    char: str = ""
    """The character the key types with the modifiers held ('A' with shift), or ''."""

    @property
    def is_modifier(self) -> bool:
        return self.key in MODIFIERS

    @property
    def needs_account(self) -> bool:
        """Presses are what an action is made of; releases, motion and modifiers are not."""
        if self.kind in (EventKind.PRESS, EventKind.SENT):
            return not (self.kind is EventKind.SENT and self.is_modifier)
        return self.kind is EventKind.KEY and not self.is_modifier

    @property
    def key_name(self) -> str:
        """The key's name for messages; characters are not named (they may spell a
        secret, key by key)."""
        if not self.key:
            return "unnamed key"
        return "a character" if len(self.key) == 1 or self.char else self.key

    def describe(self) -> str:
        if self.kind is EventKind.PRESS:
            if self.button in (SCROLL_UP, SCROLL_DOWN):
                way = "up" if self.button == SCROLL_UP else "down"
                return f"a scroll {way} at ({self.x}, {self.y})"
            if self.button in (6, 7):
                return f"a horizontal scroll at ({self.x}, {self.y})"
            return f"a click at ({self.x}, {self.y}) (button {self.button})"
        if self.kind is EventKind.KEY:
            return f"a key press ({self.key_name})"
        if self.kind is EventKind.SENT:
            what = f"button {self.button}" if self.button else f"key press ({self.key_name})"
            return f"a {what} sent to a window with XSendEvent"
        return f"{self.kind} at ({self.x}, {self.y})"


# ---- accounting: every press seen against what the channels reported ------------------------


@dataclass
class Credit:
    """Presses a reported action is expected to produce, not yet seen."""

    action: Action
    count: int
    button: int = 0
    """0 for key presses."""
    point: tuple[int, int] | None = None
    last: float = 0.0
    spelled: list[str] | None = None
    """For typed text: the character each key press it accounted for typed, in order."""


TYPED_KEYS = {"enter": "\n", "return": "\n", "tab": "\t", "space": " "}
"""Keys that type a character the keymap does not give as one."""
UNKNOWN_CHAR = "\ufffd"
"""What a key press that typed no known character spells."""


def typed_char(event: InputEvent) -> str:
    """The character a key press typed, as the display received it."""
    return event.char or TYPED_KEYS.get(event.key, UNKNOWN_CHAR)


def misspelling(action: Action, spelled: str) -> str | None:
    """Why the keys that reached the display for `action` (typed text) are not its text:
    how many characters arrived and how many differ, never which (they may be a secret's);
    None when they spell it. A key whose character the keymap does not tell
    (`UNKNOWN_CHAR`) stands for whatever was typed there."""
    text = action.text
    if len(spelled) == len(text):
        differ = sum(s not in (t, UNKNOWN_CHAR) for s, t in zip(spelled, text, strict=True))
    else:
        blocks = SequenceMatcher(None, text, spelled, autojunk=False).get_matching_blocks()
        differ = len(text) - sum(b.size for b in blocks)
    if differ == 0 and len(spelled) == len(text):
        return None
    hint = ""
    if not text.isascii():
        hint = (
            " (pyautogui cannot type characters outside ASCII on X11: type them with "
            "xdotool or mm act type, or paste them)"
        )
    lost = f": {differ} of its characters did not arrive as the agent typed them" if differ else ""
    return (
        f"typed text of {len(text)} characters reached the display as {len(spelled)} key "
        f"presses{lost}{hint}"
    )


def expected_presses(action: Action) -> tuple[int, int]:
    """(X button or 0 for keys, how many presses) an action produces when performed."""
    k = action.kind
    if k is ActionKind.CLICK:
        return BUTTON_NUMBERS.get(action.button, 1), max(action.clicks, 1)
    if k is ActionKind.DRAG:
        return BUTTON_NUMBERS.get(action.button, 1), 1
    if k is ActionKind.SCROLL:
        return (SCROLL_UP if action.amount > 0 else SCROLL_DOWN), abs(action.amount)
    if k is ActionKind.TYPE:
        return 0, len(action.text)
    if k is ActionKind.PRESS:
        keys = [key for key in action.keys if key.lower() not in MODIFIERS]
        return 0, len(keys) * max(action.clicks, 1)
    if k is ActionKind.HOTKEY:
        return 0, len([key for key in action.keys if key.lower() not in MODIFIERS])
    return 0, 0  # a move presses nothing


@dataclass
class Ledger:
    """Matches each observed press to an action a channel reported, count by count.

    A channel reports an action before its input happens (the recorder captures the
    screen, answers, and only then is the input injected), so a press is matched against
    actions reported before it and not used up yet. Keys are matched by count alone
    (keymaps differ: what pyautogui types as '<' may arrive as another key); buttons by
    button and, where both are known, by position.
    """

    hold: float = HOLD
    credits: list[Credit] = field(default_factory=list)
    typing: list[Credit] = field(default_factory=list)
    """Every typed text reported, with what its key presses spelled (`misspelled`)."""

    def report(self, action: Action, now: float) -> None:
        button, count = expected_presses(action)
        if count > 0:
            point = action.point if action.kind is not ActionKind.SCROLL else None
            typed = action.kind is ActionKind.TYPE
            credit = Credit(action, count, button, point, now, [] if typed else None)
            self.credits.append(credit)
            if typed:
                self.typing.append(credit)

    def misspelled(self) -> list[str]:
        """For each typed text whose key presses did not spell it (a character dropped,
        altered, or another key counted in its place), why (`misspelling`)."""
        found = []
        for credit in self.typing:
            why = misspelling(credit.action, "".join(credit.spelled or ()))
            if why is not None:
                found.append(why)
        return found

    def account(self, event: InputEvent, now: float) -> bool:
        """True if `event` needs no accounting or a reported action accounts for it."""
        if not event.needs_account:
            return True
        self.credits = [c for c in self.credits if c.count > 0 and now - c.last <= self.hold]
        button = event.button if event.kind is not EventKind.KEY else 0
        for credit in self.credits:
            if credit.button != button:
                continue
            far = (
                credit.point is not None
                and event.kind is not EventKind.SENT  # sent events carry no position
                and math.dist(credit.point, (event.x, event.y)) > NEAR
            )
            if button and far:
                continue
            credit.count -= 1
            credit.last = now
            if credit.spelled is not None:
                credit.spelled.append(typed_char(event))
            return True
        return False


# ---- building actions from events -------------------------------------------------------------


@dataclass
class Built:
    """An action made from observed events, and the event it started with."""

    action: Action
    start: InputEvent


def is_stop_chord(event: InputEvent, held: list[str]) -> bool:
    """The key that ends a demonstration: Pause, or Ctrl+Alt+End."""
    if event.kind is not EventKind.KEY:
        return False
    return event.key == "pause" or (event.key == "end" and {"ctrl", "alt"} <= set(held))


STOP_CHORD = "Ctrl+Alt+End (or Pause)"


@dataclass
class ActionBuilder:
    """Feeds on input events in order; `actions` holds what they amount to.

    `feed` returns True when the event starts a new action: that is when the screen
    "just before" it must be taken. Later events may still change that action (more
    typed characters, the second click of a double click, the release that makes a drag).
    Events that a channel reported (`accounted`) are not turned into actions; they only
    end a run of typing. With `stop_chord`, the chord ends the run and is not recorded.
    """

    stop_chord: bool = False
    apart: Callable[[InputEvent, InputEvent], bool] | None = None
    """Asked of (the last press, a press that would be the next click of its double
    click): True when the screen since the last press says it is a click of its own (a
    dialog the first click closed, a menu it opened: the second press went to another
    window)."""
    actions: list[Built] = field(default_factory=list)
    unrecordable: list[str] = field(default_factory=list)
    stopped: bool = False
    held: list[str] = field(default_factory=list)
    _typing: bool = False
    _pressed: dict[int, tuple[int, InputEvent]] = field(default_factory=dict)
    _last_click: InputEvent | None = None
    _mine: bool = False
    """The last action is still open to merging (nothing else happened since)."""

    def feed(self, event: InputEvent, accounted: bool = False) -> bool:
        if self.stopped or event.kind is EventKind.MOTION:
            return False
        if event.kind in (EventKind.KEY, EventKind.KEY_UP) and event.is_modifier:
            name = _modifier(event.key)
            if event.kind is EventKind.KEY and name not in self.held:
                self.held.append(name)
            elif event.kind is EventKind.KEY_UP and name in self.held:
                self.held.remove(name)
            return False
        if self.stop_chord and is_stop_chord(event, self.held):
            self.stopped = True
            return False
        if event.kind is EventKind.KEY_UP:
            return False
        if event.kind is EventKind.RELEASE:
            self._release(event)
            return False
        if event.kind is EventKind.SENT and not accounted:
            # Apps may ignore sent events (Tk does): replaying them as real input would
            # not repeat what happened.
            self.unrecordable.append(event.describe())
            self._mine = self._typing = False
            return False
        if accounted:
            self._mine = self._typing = False
            self._last_click = None
            return False
        if event.kind is EventKind.KEY:
            return self._key(event)
        return self._press(event)

    # ---- keys

    def _key(self, event: InputEvent) -> bool:
        chord = [m for m in CHORD_ORDER if m in self.held]
        if not event.key:
            self.unrecordable.append(event.describe())
            return False
        if any(m != "shift" for m in chord) or (chord and not event.char):
            return self._open(Action(ActionKind.HOTKEY, keys=(*chord, event.key)), event)
        if event.char and event.char.isprintable():
            if self._typing and self._mine:
                run = self.actions[-1]
                run.action = replace(run.action, text=run.action.text + event.char)
                return False
            opened = self._open(Action(ActionKind.TYPE, text=event.char), event)
            self._typing = True
            return opened
        last = self.actions[-1].action if self.actions else None
        again = last is not None and last.kind is ActionKind.PRESS and last.keys == (event.key,)
        if self._mine and last is not None and again:  # the same key again: one more press
            self.actions[-1].action = replace(last, clicks=last.clicks + 1)
            return False
        return self._open(Action(ActionKind.PRESS, keys=(event.key,)), event)

    # ---- buttons

    def _press(self, event: InputEvent) -> bool:
        b = event.button
        if b in (SCROLL_UP, SCROLL_DOWN):
            step = 1 if b == SCROLL_UP else -1
            last = self.actions[-1].action if self.actions else None
            if (
                self._mine
                and last is not None
                and last.kind is ActionKind.SCROLL
                and (last.amount > 0) == (step > 0)
                and last.point is not None
                and math.dist(last.point, (event.x, event.y)) <= NEAR
            ):
                self.actions[-1].action = replace(last, amount=last.amount + step)
                return False
            return self._open(Action(ActionKind.SCROLL, x=event.x, y=event.y, amount=step), event)
        if b not in BUTTON_NAMES:
            self.unrecordable.append(event.describe())
            self._mine = self._typing = False
            return False
        chord = [m for m in CHORD_ORDER if m in self.held]
        if chord:
            self.unrecordable.append(f"{event.describe()} with {'+'.join(chord)} held")
            self._mine = self._typing = False
            return False
        prev = self._last_click
        if (
            self._mine
            and prev is not None
            and prev.button == b
            and event.at - prev.at <= DOUBLE_CLICK
            and math.dist((prev.x, prev.y), (event.x, event.y)) <= NEAR
            and b not in self._pressed
            and not (self.apart is not None and self.apart(prev, event))
        ):
            last = self.actions[-1].action
            self.actions[-1].action = replace(last, clicks=last.clicks + 1)
            self._last_click = event
            self._pressed[b] = (len(self.actions) - 1, event)
            return False
        opened = self._open(
            Action(ActionKind.CLICK, x=event.x, y=event.y, button=BUTTON_NAMES[b]), event
        )
        self._last_click = event
        self._pressed[b] = (len(self.actions) - 1, event)
        return opened

    def _release(self, event: InputEvent) -> None:
        pressed = self._pressed.pop(event.button, None)
        if pressed is None:
            return
        index, down = pressed
        if math.dist((down.x, down.y), (event.x, event.y)) < DRAG_MIN:
            return
        built = self.actions[index]
        if built.action.clicks > 1:
            self.unrecordable.append(f"a drag from ({down.x}, {down.y}) after a double click")
            return
        built.action = Action(
            ActionKind.DRAG, x=down.x, y=down.y, x2=event.x, y2=event.y, button=built.action.button
        )
        self._last_click = None

    def _open(self, action: Action, event: InputEvent) -> bool:
        self.actions.append(Built(action, event))
        self._mine = True
        self._typing = False
        self._last_click = None
        return True

    def finish(self) -> list[Action]:
        """The actions, in order. A button still held at the end cannot be replayed."""
        for _, down in self._pressed.values():
            self.unrecordable.append(f"a mouse button held down at ({down.x}, {down.y})")
        self._pressed.clear()
        return [b.action for b in self.actions]


def _modifier(key: str) -> str:
    """The chord name of a modifier key ('shiftleft' -> 'shift', 'command' -> 'win')."""
    for base in ("shift", "ctrl", "alt", "win"):
        if key.startswith(base):
            return base
    return {"option": "alt", "optionleft": "alt", "optionright": "alt"}.get(
        key, "win" if key in ("command", "super") else key
    )


def summarize(descriptions: list[str], limit: int = 3) -> str:
    """'a click at (1, 2) (button 1), a key press (a character) (x5) and 4 more': the
    first few kinds of input, in order, each with how often it came."""
    counts: dict[str, int] = {}
    for d in descriptions:
        counts[d] = counts.get(d, 0) + 1
    shown = [d if n == 1 else f"{d} (x{n})" for d, n in list(counts.items())[:limit]]
    more = sum(list(counts.values())[limit:])
    text = ", ".join(shown)
    return f"{text} and {more} more" if more else text
