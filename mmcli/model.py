"""The recording model: actions, steps arranged as a tree, and the recording itself.

A recording's steps form a tree. Each step has an `id` and the `parent` it follows (None
for the first step of the task). The first successful run is the trunk; a run in which an
agent had to take over adds a branch: steps whose parent is the last step replayed before
the screen diverged. Replay walks from the root and, at each node, follows the child whose
fingerprint matches the live screen. A leaf ends the task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from mmcli.pace import typing_pause

if TYPE_CHECKING:
    from mmcli.screen.counts import CountLine
    from mmcli.screen.fingerprint import Fingerprint, Rect
    from mmcli.screen.windows import Over, TitleBar, WindowRef

SCREEN_KIND = "cli"
"""The kind of document a screen recording is (see `mmcli.inventory.kinds`)."""

SDK_KIND = "sdk"
"""The kind of document the Python SDK's `Engine` keeps its trajectories in."""

FORMAT_VERSION = 3
"""3: a literal `{{` in the agent's command is kept as `LITERAL_BRACES`, so that only
the placeholders `mm` wrote there are filled at a heal. A version-2 file reads as before:
every `{{key}}` in its command is taken for a placeholder (a version-2 file cannot tell).
2: a path's last step keeps the screen it ended on (`Step.outcome`), and a branch that
ended on a new outcome is `pending` until approved; a pointer step may keep the window it
acted in (`Step.window`), a typing step its pace (`Action.key_ms`). A version-1 file
reads as one whose paths have no recorded outcome. Optional fields added since (`cwd`,
`param_digests`) need no new version: a file without them reads as before, and an older
mm keeps them unread (`Recording.extra`) and runs the fallback as it always did."""


class ActionKind(StrEnum):
    CLICK = "click"
    TYPE = "type"
    PRESS = "press"
    HOTKEY = "hotkey"
    SCROLL = "scroll"
    MOVE = "move"
    DRAG = "drag"


BUTTONS = ("left", "middle", "right")
"""The mouse buttons an action may use."""

POINTED = {ActionKind.CLICK, ActionKind.SCROLL, ActionKind.MOVE, ActionKind.DRAG}
"""Actions that carry their own screen position; the others act where the focus is."""

PIECE_TEXT = 100
"""Characters typed between two checks for Ctrl-C (see `Action.pieces`)."""
PIECE_COUNT = 20
"""Key repeats or wheel steps performed between two checks for Ctrl-C."""

MAX_KEY_MS = 10_000
"""The longest pause between two typed keys a recording keeps, in ms."""

PLACEHOLDER = re.compile(r"\{\{([A-Za-z0-9_]+)\}\}")


def render_text(text: str, values: Mapping[str, str]) -> str:
    """`text` with each `{{key}}` placeholder replaced by its value (unknown keys stay)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


LITERAL_BRACES = "{{=}}{"
"""What a literal `{{` is kept as where only `mm` writes placeholders (the agent's
recorded command, a model's request or answer): no placeholder can start there, so a
`{{pin}}` the user or the model wrote is given back as `{{pin}}`, never filled."""


def escape_braces(text: str) -> str:
    """`text` with each literal `{{` kept as `LITERAL_BRACES`, so none reads as a placeholder."""
    return text.replace("{{", LITERAL_BRACES)


def render_template(text: str, values: Mapping[str, str]) -> str:
    """Text kept with `escape_braces` made live: `mm`'s placeholders filled with `values`,
    each literal `{{` given back as it was."""
    if "{{" not in text:
        return text
    return render_text(text, values).replace(LITERAL_BRACES, "{{")


def shown_command(command: Sequence[str]) -> list[str]:
    """An agent command kept with `escape_braces`, as people read it: each literal `{{`
    as they typed it (mm's placeholders show as `{{key}}` too)."""
    return [arg.replace(LITERAL_BRACES, "{{") for arg in command]


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 step`, `2 steps` (`many`: an irregular plural: `1 branch`, `2 branches`)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


@dataclass(frozen=True)
class Action:
    """One input action. Fields not used by a kind keep their defaults."""

    kind: ActionKind
    x: int | None = None
    y: int | None = None
    x2: int | None = None
    y2: int | None = None
    button: str = "left"
    clicks: int = 1
    text: str = ""
    """For `type`: the text, with `{{key}}` placeholders where a param's value was typed."""
    keys: tuple[str, ...] = ()
    """For `press` (one key) and `hotkey` (the chord)."""
    amount: int = 0
    key_ms: int | None = None
    """For `type`: the pause between keys the agent typed with, in ms (None: unknown).
    Replay types at this pace within bounds (`typing_pause`): some apps drop keys that
    come faster than they were typed when recorded."""

    @property
    def point(self) -> tuple[int, int] | None:
        if self.x is None or self.y is None:
            return None
        return (self.x, self.y)

    def params_used(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.text)) if self.kind is ActionKind.TYPE else set()

    def typing_pause(self) -> float:
        """Seconds between two keys when replay types this action: the recorded pace,
        bounded (`pace.typing_pause`)."""
        return typing_pause(self.key_ms)

    def render(self, values: dict[str, str]) -> Action:
        """The action with its placeholders replaced by `values` (which must cover them)."""
        if self.kind is not ActionKind.TYPE or "{{" not in self.text:
            return self
        return replace(self, text=render_text(self.text, values))

    def pieces(self) -> list[Action]:
        """The action as short pieces that together do the same: long typing, many key
        repeats and long scrolls are performed piece by piece, so Ctrl-C (or the fail-safe
        corner) stops them between two pieces. Clicks stay whole (a double-click is one
        gesture)."""
        if self.kind is ActionKind.TYPE and len(self.text) > PIECE_TEXT:
            text = self.text
            return [
                replace(self, text=text[i : i + PIECE_TEXT])
                for i in range(0, len(text), PIECE_TEXT)
            ]
        if self.kind is ActionKind.PRESS and self.clicks > PIECE_COUNT:
            full, rest = divmod(self.clicks, PIECE_COUNT)
            counts = [PIECE_COUNT] * full + ([rest] if rest else [])
            return [replace(self, clicks=n) for n in counts]
        if self.kind is ActionKind.SCROLL and abs(self.amount) > PIECE_COUNT:
            sign = 1 if self.amount > 0 else -1
            full, rest = divmod(abs(self.amount), PIECE_COUNT)
            counts = [PIECE_COUNT] * full + ([rest] if rest else [])
            return [replace(self, amount=sign * n) for n in counts]
        return [self]

    def describe(self) -> str:
        """A short human description; placeholders stay as they are (never secret values)."""
        k = self.kind
        if k is ActionKind.CLICK:
            what = {1: "click", 2: "double-click", 3: "triple-click"}.get(
                self.clicks, f"{self.clicks}x click"
            )
            side = "" if self.button == "left" else f" {self.button}"
            return f"{what}{side} at ({self.x}, {self.y})"
        if k is ActionKind.TYPE:
            return f"type {self.text!r}"
        if k is ActionKind.PRESS:
            return f"press {'+'.join(self.keys)}" + (f" x{self.clicks}" if self.clicks > 1 else "")
        if k is ActionKind.HOTKEY:
            return f"hotkey {'+'.join(self.keys)}"
        if k is ActionKind.SCROLL:
            return f"scroll {self.amount} at ({self.x}, {self.y})"
        if k is ActionKind.MOVE:
            return f"move to ({self.x}, {self.y})"
        return f"drag ({self.x}, {self.y}) -> ({self.x2}, {self.y2})"


@dataclass(frozen=True)
class EndScreen:
    """The screen a path of the recording settled on after its last action: the task's
    outcome as recorded. Replay is done only when the live screen settles on it."""

    fingerprint: Fingerprint
    thumbnail: str | None = None
    titles: tuple[TitleBar, ...] = ()
    """The task's title bars then, with their titles (`Step.titles`)."""
    counts: tuple[CountLine, ...] = ()
    """The lines that counted what was typed then (`Step.counts`)."""
    vacated: tuple[Rect, ...] = ()
    """Where the task's windows stood before the last action and no window stood then:
    the desktop the last action laid bare (a form that closed), as the window system told
    it; empty where it told nothing. Another app's window found there at replay hides
    nothing the task showed (`windows.revealed`)."""
    under: WindowRef | None = None
    """The task's window under the pointer then (`fingerprint.pointer`), as the window
    system told it (None: it told nothing, or no window of the task's apps was there).
    Replay puts the pointer where it was over that window before the check: what the
    pointer's place shows (a hover, a readout of its coordinates) is then the same
    (`replay.pointer_place.outcome_pointer`)."""


@dataclass(frozen=True)
class Landed:
    """Where a typing step's text landed, as read back when it was recorded: replay reads
    the same field after typing and compares (`readback`)."""

    source: str
    """How the field was read: "accessibility" (its text, from the accessibility tree) or
    "ocr" (its pixels); "" when it could not be read at all."""
    text: str | None = None
    """The field's whole text after the typing, each param's value as its placeholder;
    None when it cannot be compared: not read, not holding what was typed, or holding
    something of a secret other than its placeholder."""
    box: Rect | None = None
    """The field on the screen: the accessible object's extents, or what OCR read."""
    redone: bool = False
    """The field held the typed text more than once: typed again into a field that
    already held it (work done twice)."""


MAX_LANDED_TEXT = 4096
"""The longest field text a recording keeps to compare with."""


@dataclass(frozen=True)
class Step:
    """An action and the screen as it was just before it was performed."""

    id: int
    parent: int | None
    action: Action
    fingerprint: Fingerprint
    thumbnail: str | None = None
    """File name of a small screenshot for humans, beside the recording."""
    effect: Rect | None = None
    """The screen region the action changed, as observed when it was recorded."""
    created: datetime | None = None
    outcome: EndScreen | None = None
    """On the last step of a run: the screen the task settled on after it."""
    pending: bool = False
    """On the first step of a branch a heal learned whose run ended on an outcome the
    recording did not know: not replayed unattended until `mm approve`."""
    window: WindowRef | None = None
    """For a pointer step: the application window under its target when it was recorded
    (None: not known, e.g. no window manager). `--relocate` finds a moved window by it."""
    above: tuple[Over, ...] = ()
    """The windows the window system showed above `window`, over part of it, when the
    step was recorded: replay expects these there, and no other (`windows.new_over`)."""
    own: tuple[Over, ...] = ()
    """The other windows of `window`'s app (its class) the window system showed when the
    step was recorded, anywhere: replay expects these, and no other (`windows.new_own`)."""
    landed: Landed | None = None
    """For a typing step: its field read back after it when recorded (None: not read,
    e.g. recorded before mm read fields back)."""
    titles: tuple[TitleBar, ...] = ()
    """The title bars of the task's windows and their titles, each param's value as its
    placeholder, on the step's screen (`windows.TitleBar`)."""
    counts: tuple[CountLine, ...] = ()
    """The lines off the typed fields that counted what was typed on the step's screen
    (a status bar's "30 characters", `screen.counts`)."""

    def thumbnails(self) -> list[str]:
        """The file names of this step's thumbnails (its screen, its outcome's)."""
        names = [self.thumbnail] if self.thumbnail else []
        if self.outcome is not None and self.outcome.thumbnail:
            names.append(self.outcome.thumbnail)
        return names


@dataclass
class Recording:
    name: str
    steps: list[Step]
    created: datetime
    command: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    """Names of the params (secrets included) the recorded actions use as placeholders."""
    secrets: list[str] = field(default_factory=list)
    """Names (never values) of params that are secrets."""
    ignore: list[Rect] = field(default_factory=list)
    """Screen regions the user declared out of every check (`--ignore-region`)."""
    volatile: list[Rect] = field(default_factory=list)
    """Regions seen changing on their own while recording (a clock): masked in every step."""
    area: Rect | None = None
    """The task area: where the recorded actions acted and what they changed. Changes
    wholly outside it (a notification in a far corner) do not block replay under the
    default policy."""
    policy: str = "default"
    cwd: str | None = None
    """The absolute folder the agent command was recorded in: a fallback runs it there
    (None: recorded before it was kept, or no command; the caller's folder)."""
    param_digests: dict[str, list[str]] = field(default_factory=dict)
    """For each param, a digest of each value runs were recorded with (never the value:
    `params.value_digest`): a heal that types one while the param has another value
    typed stale data and is not saved. None for secrets."""
    window_title: str | None = None
    """The title of the application window the task's first action went to, as recorded:
    it names the window a replay expected when no window of the app is on the screen."""
    commit_steps: int | None = None
    """How many actions at the end of each path commit the task (2: a Submit click and its
    confirmation's OK): a fleet's worker claims the row before the first of them (None:
    the last action alone, unless the worker says otherwise)."""
    format_version: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def step(self, step_id: int) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def children(self, parent: int | None) -> list[Step]:
        return [s for s in self.steps if s.parent == parent]

    def roots(self) -> list[Step]:
        return self.children(None)

    def trunk(self) -> list[Step]:
        """The first path from the root to a leaf (the first recorded run)."""
        path: list[Step] = []
        kids = self.roots()
        while kids:
            path.append(kids[0])
            kids = self.children(kids[0].id)
        return path

    def depth(self, step: Step) -> int:
        """0-based position of `step` on its path from the root."""
        d = 0
        parent = step.parent
        while parent is not None:
            d += 1
            parent = self.step(parent).parent
        return d

    def branch_of(self, step: Step) -> Step | None:
        """The first step of the innermost branch `step` is on: the nearest step from it
        back to the root that is not the first alternative after its parent (what `mm
        show` marks "branch id N"); None on the trunk."""
        first: dict[int | None, int] = {}
        by_id: dict[int, Step] = {}
        for s in self.steps:
            first.setdefault(s.parent, s.id)
            by_id[s.id] = s
        node: Step | None = step
        while node is not None:
            if first.get(node.parent) != node.id:
                return node
            node = by_id.get(node.parent) if node.parent is not None else None
        return None

    def step_label(self, step: Step) -> str:
        """A step as `mm show` numbers it: "step 7" on the trunk, "step 4 of branch 9" on
        a branch (its number on its own path from the root, and the branch's id)."""
        branch = self.branch_of(step)
        number = self.depth(step) + 1
        return f"step {number}" if branch is None else f"step {number} of branch {branch.id}"

    def branch_count(self) -> int:
        """Number of branches: the root-to-leaf paths other than the trunk (a recording
        that never diverged has none)."""
        parents = {s.parent for s in self.steps}
        return max(sum(1 for s in self.steps if s.id not in parents) - 1, 0)

    def thumbnail_names(self) -> set[str]:
        """Every thumbnail the recording's steps name (screens and outcomes)."""
        return {name for s in self.steps for name in s.thumbnails()}

    def branch_start(self, step: Step) -> Step | None:
        """The first step of the pending branch `step` is on, or None when every step
        from the root to it is trusted."""
        by_id = {s.id: s for s in self.steps}
        node: Step | None = step
        while node is not None:
            if node.pending:
                return node
            node = by_id.get(node.parent) if node.parent is not None else None
        return None

    def pending_branches(self) -> list[Step]:
        """The first steps of the branches awaiting `mm approve`."""
        return [s for s in self.steps if s.pending]

    def outcomes(self, trusted_only: bool = True) -> list[Step]:
        """The steps that end a path with a recorded outcome (those on a pending branch
        left out, unless `trusted_only` is False)."""
        ends = [s for s in self.steps if s.outcome is not None]
        if trusted_only and any(s.pending for s in self.steps):
            ends = [s for s in ends if self.branch_start(s) is None]
        return ends

    def next_id(self) -> int:
        return max((s.id for s in self.steps), default=-1) + 1
