"""The desktop's window structure, as the window system tells it, beside the pixel
matcher: which top-level window a step acted in, and where that window stands now.

The pixels judge what is inside the task's windows; the window system says where those
windows are. A recording keeps, per pointer step, the window under its target (its
class, `WM_CLASS`, and its client area on the screen), and per keyboard step the window
that had the keyboard. Replay types nothing while another window has the keyboard
(`keyboard_taken`): a window far from the task is harmless to the pixels, but keys go
where the focus is. `mm replay --relocate` then finds
a moved window exactly: the one live window of that class and size, moved by a whole
offset, with no template search over the screen (a blank text area matches in many
places; a window's identity does not). The screen, shifted back by that offset, is then
checked in full as always. Where the window system says nothing (no window manager, a
remote desktop shown as one window), the search over the pixels applies as before.

A window new on the screen is judged by what it is and where it is (`left_out`): a
desktop notification, a dock or another app's tooltip (EWMH `_NET_WM_WINDOW_TYPE`) that
covers nothing the task acts on or types into, that is not the task's own (its class,
transient for a window) and has not taken the keyboard is left out of the pixel check,
its rectangle exactly. Anything else new (a dialog, a window of the task's class, a
transient window, one over the target) stays for the pixels to judge, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from mmcli.model import render_template
from mmcli.screen.fingerprint import Rect

Offset = tuple[int, int]

MAX_CLASS = 256
"""The longest `WM_CLASS` a recording keeps (characters)."""
MAX_TITLE = 200
"""The longest window title kept (characters): it only names the window in messages."""


def sanitized(text: str, limit: int) -> str:
    """Text from the window system (a title, a class) as `mm` keeps and shows it: without
    control characters (a NUL, an escape sequence's ESC: any app may set them), at most
    `limit` characters. Never a reason to refuse a run."""
    kept = "".join(c for c in text if c.isprintable() or c == " ")
    return kept[:limit]


@dataclass(frozen=True)
class WindowRef:
    """A top-level application window: what identifies it from one run to the next, and
    where its client area stood on the screen."""

    wm_class: str
    """`WM_CLASS` as instance.class ("zenity.Zenity"); "" when the window sets none."""
    rect: Rect

    @property
    def size(self) -> tuple[int, int]:
        return (self.rect.w, self.rect.h)


@dataclass(frozen=True)
class StackedWindow:
    """A window on the screen as the window system stacks it: what `WindowRef` knows,
    and what it is (EWMH), for judging a window that is new since the recording."""

    ref: WindowRef
    """Its class and client area (for an override-redirect window, the window itself)."""
    frame: Rect
    """Everything it covers on the screen: the window manager's frame (title bar,
    borders) around the client, or the override-redirect window and its border."""
    kind: str = ""
    """Its EWMH window type, the part after `_NET_WM_WINDOW_TYPE_` ("NOTIFICATION",
    "DOCK", "DIALOG", "NORMAL", ...); "" when it says none."""
    transient: bool = False
    """It names a window it belongs to (`WM_TRANSIENT_FOR`): a dialog or a popup of an
    app."""
    override_redirect: bool = False
    """Placed by itself, not by the window manager (menus, tooltips, notifications)."""
    focused: bool = False
    """The X input focus is in it: keys typed now would go to it."""
    xid: int = field(default=0, compare=False)
    """The window system's id of its client (0: not known), to give it the focus back;
    not part of what it is."""
    pid: int = field(default=0, compare=False)
    """The process it says it belongs to (`_NET_WM_PID`; 0: it says none): the windows of
    one app, whatever classes they give themselves (a Tk toplevel's is "Toplevel")."""
    client: int = field(default=0, compare=False)
    """The window system's connection that made it (0: not known): the windows of one app
    even where they say nothing of their process (Tk sets no `_NET_WM_PID`)."""
    owner: int = field(default=0, compare=False)
    """The client its `WM_TRANSIENT_FOR` names (0: none): the window a dialog belongs to,
    of its app even when another process made the dialog (GIMP's plug-ins)."""
    top: int = field(default=0, compare=False)
    """The window system's id of the top-level window that holds it on the screen (the
    window manager's frame, or the override-redirect window itself; 0: not known)."""


@dataclass(frozen=True)
class Over:
    """A window the window system showed above a step's window, over part of it, when the
    step was recorded (a recording's own dialog over its main window, say): replay expects
    it there again, and no other (`new_over`)."""

    wm_class: str
    frame: Rect
    kind: str = ""

    @classmethod
    def of(cls, window: StackedWindow) -> Over:
        return cls(window.ref.wm_class, window.frame, window.kind)


MAX_OVER = 32
"""The most windows over a step's window a recording keeps."""


MAX_TITLES = 8
"""The most title bars a step keeps."""


@dataclass(frozen=True)
class TitleBar:
    """The title bar the window manager drew over one of the task's windows: where the
    bar stood and its title, each param's value as its placeholder (an editor naming its
    file, "Invoice - {{name}}"). Replay lets the bar's pixels differ when the window
    system's title there is this text filled with the run's values: the bar then shows
    the recorded title for this run's value, drawn as the window manager draws a window
    active or not (a focus cue, told by the window system, not a difference)."""

    rect: Rect
    text: str


def titles_shown(
    bars: Sequence[TitleBar],
    values: Mapping[str, str],
    title_at: Callable[[int, int], str | None],
    offset: Offset = (0, 0),
) -> list[Rect]:
    """The recorded title bars (`Step.titles`) whose window, asked at the bar's middle
    (moved by `offset`), has the recorded title with `values` filled in: the bar's pixels
    there are that title's, not a difference (active or not). A title that names anything
    else stays one, and so does a bar another window covers the middle of."""
    found = []
    for bar in bars:
        live = bar.rect.moved(*offset)
        title = title_at(live.x + live.w // 2, live.y + live.h // 2)
        if title is not None and sanitized(title, MAX_TITLE) == render_template(bar.text, values):
            found.append(bar.rect)
    return found


def title_band(window: StackedWindow) -> Rect | None:
    """The part of `window`'s frame above its client area: the window manager's title
    bar (None: it draws none, or the window places itself)."""
    top = window.ref.rect.y - window.frame.y
    if window.override_redirect or top <= 0:
        return None
    return Rect(window.frame.x, window.frame.y, window.frame.w, top)


def over_window(stack: Sequence[StackedWindow], ref: WindowRef) -> list[StackedWindow] | None:
    """The windows stacked above `ref` (found once in `stack`) that cover part of its
    frame, bottom to top; None when `ref` is not there once."""
    found = [i for i, w in enumerate(stack) if w.ref == ref]
    if len(found) != 1:
        return None
    frame = stack[found[0]].frame
    return [w for w in stack[found[0] + 1 :] if w.frame.intersects(frame)]


def new_over(
    stack: Sequence[StackedWindow],
    ref: WindowRef,
    recorded: Sequence[Over],
    offset: Offset,
    task_classes: set[str],
    protected: Sequence[Rect],
) -> list[StackedWindow]:
    """The windows over the task's window `ref` (where it stands now) that were not over
    it when the step was recorded (`recorded`, moved by `offset`), whatever the pixels
    show (another app's dialog, a terminal in front, one drawn outside the task area or
    drawing nothing): each is a divergence. Left to the pixels: the task's own windows
    that place themselves (its menus, tooltips, popups), and the harmless ones
    `left_out` would leave out (a notification over no target). None known when `ref`
    is not found (the pixels judge: moved, closed)."""
    above = over_window(stack, ref)
    if not above:
        return []
    # Moved with the task (its own dialog), or where it was (a panel over its corner).
    known = {Over(o.wm_class, o.frame.moved(*offset), o.kind) for o in recorded} | set(recorded)
    new = []
    for window in above:
        if Over.of(window) in known:
            continue
        if window.override_redirect and window.ref.wm_class in task_classes:
            continue
        if _harmless(window, task_classes) and not any(
            window.frame.intersects(r) for r in protected
        ):
            continue
        new.append(window)
    return new


def own_windows(stack: Sequence[StackedWindow], ref: WindowRef) -> list[StackedWindow]:
    """The other windows of `ref`'s app that the window manager places (not its menus and
    tooltips, which come and go with the pointer), anywhere on the screen: those made by
    its connection to the window system, those of its process where the windows say it,
    else those of its class; and the windows these belong to or that belong to them
    (`same_app`), to any depth."""
    task = next((w for w in stack if w.ref == ref), None)
    if task is None or not ref.wm_class:
        return []
    app = [task]  # and each window of the app's: a dialog's dialog belongs to it too
    rest = [w for w in stack if w.ref != ref and not w.override_redirect]
    while True:
        more = [w for w in rest if any(same_app(a, w) for a in app)]
        if not more:
            return [w for w in stack if w in app[1:]]
        app.extend(more)
        rest = [w for w in rest if w not in more]


def same_app(task: StackedWindow, window: StackedWindow) -> bool:
    """Whether `window` is of `task`'s app: made by the same connection to the window
    system, or one of them the other's dialog (`owner`: GIMP's PNG options, made by its
    plug-in's process, belong to the image window); else of the same process where both
    say it; else of the same class."""
    if task.client and window.client == task.client:
        return True
    if (task.owner and task.owner == window.xid) or (window.owner and window.owner == task.xid):
        return True
    if task.pid and window.pid:
        return window.pid == task.pid
    return window.ref.wm_class == task.ref.wm_class


def new_own(
    stack: Sequence[StackedWindow],
    ref: WindowRef,
    recorded: Sequence[Over],
    offset: Offset,
) -> list[StackedWindow]:
    """The windows of the task's own app (`ref`'s class) on the live screen, anywhere, that
    were not there when the step was recorded (`recorded`, moved by `offset` or where they
    were): a dialog far from the task, a second window, the popup a page opened. The app
    is not in the state the step was recorded in: each is a divergence. None when `ref`
    is not on the screen (the pixels judge)."""
    if not any(w.ref == ref for w in stack):
        return []
    known = {Over(o.wm_class, o.frame.moved(*offset), o.kind) for o in recorded} | set(recorded)
    return [w for w in own_windows(stack, ref) if Over.of(w) not in known]


def described_over(window: StackedWindow) -> str:
    """A window new over the task, as a divergence names it: what the window system says
    it is."""
    kind = window.kind.lower() if window.kind else ""
    if window.transient and kind in ("", "normal"):
        kind = "dialog"
    what = f"a {kind} window" if kind else "a window"
    if window.override_redirect:
        what += " that placed itself"
    return f"{what} ({_named(WindowRef(window.ref.wm_class, window.frame))})"


MAX_VACATED = 64
"""The most pieces of laid-bare desktop an outcome keeps (`EndScreen.vacated`)."""


def revealed(
    stack: Sequence[StackedWindow],
    task_classes: set[str],
    seen: Mapping[int, Sequence[Rect]],
    vacated: Sequence[Rect],
    changed: Sequence[Rect],
    protected: Sequence[Rect],
) -> list[StackedWindow]:
    """The windows of `stack` (bottom to top) that the task's windows going away at its
    end revealed, each in the pieces that show of it: another app's window (as
    `left_out` has it, by the same kinds) that an earlier check of this run left out
    (`seen`: what showed of it then, by its window system's id) and that shows now only
    there, where the recording's outcome laid the desktop bare (`vacated`: a form that
    closed over it) or under the task's windows; over nothing else the last action
    changed when recorded (`changed`: a confirmation it showed), over none of
    `protected` but where it lies bare (a closed form's fields), over no window of the
    task's, and under no other window. What it
    covers is what the outcome showed as the desktop: nothing of the task's. It may
    hold the keyboard: the window manager gives it the focus the closed window had, and
    no key follows the last action."""
    if not task_classes or not seen or not vacated:
        return []
    task = [w for w in stack if w.ref.wm_class in task_classes]
    guarded = [q for r in protected for q in shown(r, vacated)]  # a closed form's fields: gone
    out: list[StackedWindow] = []
    for i, window in enumerate(stack):
        if window.xid not in seen:
            continue
        above = stack[i + 1 :]
        over_it = [t for t in task if t in above]
        unfocused = replace(window, focused=False)  # the closed window's focus, handed on
        if _harmless(unfocused, task_classes) and not any(same_app(t, window) for t in task):
            reach = window.frame
        elif _placed_apart(unfocused, task, task_classes, over_it):
            reach = window.frame.grow(SHADOW)
        else:
            continue
        if any(reach.intersects(t.frame) for t in task if t not in over_it):
            continue  # over a window of the task's
        pieces = shown(reach, [t.frame for t in over_it])
        if shown_beyond(pieces, [*seen[window.xid], *vacated]):
            continue  # it shows where the run showed something else
        if shown_beyond(_within(pieces, changed), vacated):
            continue  # over something the last action showed
        if any(p.intersects(r) for p in pieces for r in guarded):
            continue
        if any(o.frame.intersects(p) for o in above for p in pieces if o not in over_it):
            continue
        out.extend(replace(window, frame=p) for p in pieces)
    return out


def _within(pieces: Sequence[Rect], places: Sequence[Rect]) -> list[Rect]:
    """The parts of `pieces` inside `places`."""
    return [c for p in pieces for r in places if (c := p.intersection(r)) is not None]


def found_apart(stack: Sequence[StackedWindow], task_classes: set[str]) -> list[StackedWindow]:
    """The windows of `stack` known to be other apps' (`_another_apps`, whatever holds the
    keyboard) and of no app of the task's windows there (`same_app`): what stood apart
    from the task when a run began, shown or hidden under its windows."""
    task = [w for w in stack if w.ref.wm_class in task_classes]
    return [
        w
        for w in stack
        if w.xid
        and _another_apps(replace(w, focused=False), task_classes)
        and not any(same_app(t, w) for t in task)
    ]


def shown_beyond(pieces: Sequence[Rect], places: Sequence[Rect]) -> bool:
    """Whether any part of `pieces` lies outside every one of `places`."""
    return any(shown(p, places) for p in pieces)


def described_all(windows: Sequence[StackedWindow]) -> str:
    """`described` for each window once: the pieces `left_out` gives of one window told
    as the rectangle round them."""
    whole: dict[WindowRef, StackedWindow] = {}
    for w in windows:
        held = whole.get(w.ref)
        whole[w.ref] = w if held is None else replace(held, frame=held.frame.union(w.frame))
    return ", ".join(described(w) for w in whole.values())


HARMLESS_KINDS = frozenset({"NOTIFICATION", "DOCK"})
"""Window types that never take part in another app's task: a desktop notification, a
dock or panel."""
HARMLESS_OVERRIDE_KINDS = frozenset({"TOOLTIP"})
"""... and these when the window places itself (override-redirect): a tooltip. Menus are
not among them: an open menu takes the pointer, and a click would only close it."""


def left_out(
    stack: Sequence[StackedWindow], protected: Sequence[Rect] | None, task_classes: set[str]
) -> list[StackedWindow]:
    """The windows of `stack` (bottom to top) whose rectangle the pixel check may leave
    out: of a class other than the task's (`task_classes`, the classes the recording
    acted and typed in; a window with no class is not known to be another app's), not
    transient for any window, not holding the keyboard, covering none of `protected` (the
    action's target, the fields the task types into), with no other window stacked above
    it over any part of it (it would show through), and either a notification, a dock or
    (override-redirect) a tooltip, or a window the window manager placed that covers no
    window of the task's classes (`beside`). Nothing when the task's classes are not
    known, or what to protect is not (None; after the last action, nothing is).

    A window under some of the task's windows hides nothing of them: what shows of it
    beside them is left out, one entry for each piece (`shown`), and the task's windows
    over it are judged by the pixels as ever (GIMP's export dialog opened over a small
    window in the screen's corner)."""
    if not task_classes or protected is None:
        return []
    task = [w for w in stack if w.ref.wm_class in task_classes]
    kept: list[StackedWindow] = []
    out: list[StackedWindow] = []
    for i in range(len(stack) - 1, -1, -1):
        window = stack[i]
        above = stack[i + 1 :]
        over_it = [t for t in task if t in above]
        if _harmless(window, task_classes):
            reach = window.frame
        elif beside(window, task, task_classes, over_it):
            reach = window.frame.grow(SHADOW)
        else:
            continue
        pieces = shown(reach, [t.frame for t in over_it])
        if not pieces or any(p.intersects(r) for p in pieces for r in protected):
            continue
        if any(o.frame.intersects(p) and o not in kept for o in above for p in pieces):
            continue
        kept.append(window)
        out.extend(replace(window, frame=p) for p in pieces[::-1])
    return out[::-1]


def shown(reach: Rect, over: Sequence[Rect]) -> list[Rect]:
    """What of `reach` the rectangles `over` leave uncovered, in pieces (none: all of
    it is covered)."""
    pieces = [reach]
    for cut in over:
        pieces = [p for piece in pieces for p in piece.minus(cut)]
    return pieces


def _harmless(window: StackedWindow, task_classes: set[str]) -> bool:
    kind_harmless = window.kind in HARMLESS_KINDS or (
        window.override_redirect and window.kind in HARMLESS_OVERRIDE_KINDS
    )
    return kind_harmless and _another_apps(window, task_classes)


def _another_apps(window: StackedWindow, task_classes: set[str]) -> bool:
    """Whether `window` is known to be another app's, on its own (no window's dialog or
    popup), and does not hold the keyboard."""
    return (
        bool(window.ref.wm_class)
        and window.ref.wm_class not in task_classes
        and not window.transient
        and not window.focused
    )


SHADOW = 12
"""How far past its frame a window the window manager placed may darken the screen:
Xfce's window manager composites by default and draws a shadow 6-8 px below and beside
each window (measured on xfwm4 4.18 at its defaults)."""


def beside(
    window: StackedWindow,
    task: Sequence[StackedWindow],
    task_classes: set[str],
    over_it: Sequence[StackedWindow] = (),
) -> bool:
    """Whether `window` is another app's window beside the task: placed by the window
    manager (a window that places itself may be a menu, which takes the pointer), of any
    type but the desktop's, of no app of the task's windows (`task`) whatever its class
    (a Tk dialog's class is "Toplevel": the app's own error beside its form is the
    task's), and standing clear of their frames by its shadow's reach (`SHADOW`) — so it
    hides nothing of the task, and a click into the task raises the task over nothing.
    Left out with that reach round it. A small window in a corner near a task that fills
    most of the screen (GIMP's export dialog) is near the task's area, not in it. The
    task's windows stacked over it (`over_it`) it may meet: they hide it, not it them."""
    return bool(task) and _placed_apart(window, task, task_classes, over_it)


def _placed_apart(
    window: StackedWindow,
    task: Sequence[StackedWindow],
    task_classes: set[str],
    over_it: Sequence[StackedWindow],
) -> bool:
    """`beside` but that the task need have a window on the screen."""
    reach = window.frame.grow(SHADOW)
    return (
        _another_apps(window, task_classes)
        and not window.override_redirect
        and window.kind != "DESKTOP"
        and not any(same_app(t, window) for t in task)
        and not any(reach.intersects(t.frame) for t in task if t not in over_it)
    )


def over(stack: Sequence[StackedWindow], scope: Rect | None) -> tuple[StackedWindow, ...]:
    """The windows of `stack` that cover part of `scope` (all of them when None), bottom
    to top: what the window system says is over the task."""
    return tuple(w for w in stack if scope is None or w.frame.intersects(scope))


Layout = tuple[tuple[WindowRef, Rect, str, bool, bool], ...]


def layout(
    stack: Sequence[StackedWindow], scope: Rect | None, leave: WindowRef | None = None
) -> Layout:
    """The windows over `scope` as they are laid out, bottom to top: what each is and where,
    not which has the focus (`leave`: a window left aside). Replay acts only while this is
    what it was at the check that permitted the action."""
    return tuple(
        (w.ref, w.frame, w.kind, w.transient, w.override_redirect)
        for w in over(stack, scope)
        if w.ref != leave
    )


def uncovered(stack: Sequence[StackedWindow], ref: WindowRef) -> int | None:
    """Where the window `ref` stands in `stack` (bottom to top) when it is there once and
    no window above it covers any part of its frame; else None. Raising such a window
    hides nothing and reveals nothing."""
    found = [i for i, w in enumerate(stack) if w.ref == ref]
    if len(found) != 1:
        return None
    i = found[0]
    frame = stack[i].frame
    if any(w.frame.intersects(frame) for w in stack[i + 1 :]):
        return None
    return i


def same_over(
    before: Sequence[StackedWindow],
    after: Sequence[StackedWindow],
    scope: Rect | None,
    ref: WindowRef,
) -> bool:
    """After the focus was given to `ref` (a window nothing covered), the windows over the
    task are the same ones as before in the same order, `ref` left aside (raised, it may
    now be above windows that never overlapped it), and nothing covers `ref` still: no
    window was hidden or revealed."""
    return layout(before, scope, ref) == layout(after, scope, ref) and (
        uncovered(after, ref) is not None
    )


def described(window: StackedWindow) -> str:
    """A window left out, as the replay's progress names it."""
    kind = f"{window.kind.lower()} " if window.kind else ""
    return f"a {kind}window ({_named(WindowRef(window.ref.wm_class, window.frame))})"


def relocation(recorded: WindowRef, live: Sequence[WindowRef]) -> Offset | None:
    """How far the window a step acted in has moved: the offset of the one live window of
    its class and size. None when there is no such window, or several (which one is meant
    cannot be told), or the window has no class to know it by."""
    if not recorded.wm_class:
        return None
    same = [w for w in live if w.wm_class == recorded.wm_class and w.size == recorded.size]
    if len(same) != 1:
        return None
    return (same[0].rect.x - recorded.rect.x, same[0].rect.y - recorded.rect.y)


def keyboard_taken(
    recorded: WindowRef, live: WindowRef | None, offset: Offset = (0, 0)
) -> str | None:
    """Why keys must not be sent now: the window that has the keyboard is not the one the
    recording typed into (its class, and its client area moved by `offset`, where replay
    found the task). None when it is, or when the window system does not say (`live`
    None: the pixels judge alone, as without a window manager)."""
    if live is None:
        return None
    expected = WindowRef(recorded.wm_class, recorded.rect.moved(*offset))
    if live == expected:
        return None
    return (
        f"Another window has the keyboard: {_named(live)}, where the recording typed into "
        f"{_named(expected)}. The keys would go there"
    )


def focus_taken(recorded: WindowRef, stack: Sequence[StackedWindow] | None) -> str | None:
    """Why keys must not be sent now: a window that placed itself (override-redirect,
    which the window manager never makes its active window, so `keyboard_taken` cannot
    see it) holds the X input focus, and it is not of the class the recording typed
    into. None when none does, or the window system does not say (`stack` None)."""
    for window in stack or ():
        if window.focused and window.override_redirect and window.ref.wm_class != recorded.wm_class:
            return (
                f"Another window has the keyboard: {_named(window.ref)} took the input focus "
                f"itself, where the recording typed into {_named(recorded)}. The keys would "
                "go there"
            )
    return None


def _named(window: WindowRef) -> str:
    name = repr(window.wm_class) if window.wm_class else "a window with no class"
    r = window.rect
    return f"{name} at {r.x},{r.y} {r.w}x{r.h}"


def over_the_keyboard(stack: Sequence[StackedWindow]) -> list[Rect]:
    """The frames of the windows stacked above the one with the input focus (a
    notification that may cover the end of the field typed into); none when no window
    has the focus."""
    focused = [i for i, w in enumerate(stack) if w.focused]
    if not focused:
        return []
    return [w.frame for w in stack[focused[-1] + 1 :]]
