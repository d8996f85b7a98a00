"""A new window judged by what it is and where it is: a notification, a dock or another
app's tooltip over no target is left out of the pixel check; a dialog, a transient
window, a window of the task's class or one over the target is judged by the pixels, as
before; where the window system says nothing, the pixels alone judge."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

import pytest
from PIL import Image, ImageDraw

from mmcli.backends import FakeBackend
from mmcli.errors import Outcome
from mmcli.model import ActionKind, EndScreen
from mmcli.params import Values
from mmcli.replay import outcome as outcome_step
from mmcli.replay.report import ReplayOptions, ReplayReport
from mmcli.screen.analysis import fingerprint_of
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Policy
from mmcli.screen.windows import (
    Over,
    StackedWindow,
    WindowRef,
    described,
    described_all,
    focus_taken,
    found_apart,
    left_out,
    revealed,
)
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen, thumbnail_png
from tests.unit.test_replayer import SUBMIT, form_recording, save_with_screens, typing_app

TASK = "loan_form.Tk"
FORM = StackedWindow(WindowRef(TASK, Rect(100, 100, 560, 420)), Rect(100, 100, 560, 420))
CARD = Rect(450, 230, 180, 60)
"""Over the form, away from its targets (the Name field, Submit) and its typed field."""
TARGET = Rect(218, 153, 64, 64)
OVER_NAME = Rect(400, 170, 120, 30)
"""Over the right of the Name field, where the name is typed, away from every target."""


def card(kind: str = "NOTIFICATION", at: Rect = CARD, **what: object) -> StackedWindow:
    fields = {"override_redirect": True, **what}
    return StackedWindow(WindowRef("notifier.Notifier", at), at, kind, **fields)  # type: ignore[arg-type]


def test_a_notification_or_a_dock_over_no_target_is_left_out() -> None:
    for window in (card(), card("DOCK", override_redirect=False), card("TOOLTIP")):
        assert left_out([FORM, window], [TARGET], {TASK}) == [window]


@pytest.mark.parametrize(
    "window",
    [
        card("DIALOG"),
        card("NORMAL"),
        card(""),  # says nothing of what it is
        card("POPUP_MENU"),  # an open menu takes the pointer
        card("TOOLTIP", override_redirect=False),
        card(transient=True),  # belongs to a window: an app's own
        card(focused=True),  # has the keyboard: keys would go there
        card(at=Rect(200, 150, 180, 60)),  # over the target
        StackedWindow(WindowRef(TASK, CARD), CARD, "NOTIFICATION", override_redirect=True),
        StackedWindow(WindowRef("", CARD), CARD, "NOTIFICATION", override_redirect=True),
    ],
    ids=[
        "dialog", "normal", "no-type", "menu", "managed-tooltip", "transient", "focused",
        "over-target", "task-class", "no-class",
    ],
)  # fmt: skip
def test_anything_else_is_left_to_the_pixels(window: StackedWindow) -> None:
    assert left_out([FORM, window], [TARGET], {TASK}) == []


FORM_CLIENT, FORM_PID = 0x1200000, 4242
"""The form's connection to the window system and its process (`same_app`)."""
BESIDE = Rect(10, 660, 160, 100)
"""Below and left of the form, touching none of it."""


def managed(kind: str = "NORMAL", at: Rect = BESIDE, **what: object) -> StackedWindow:
    return StackedWindow(WindowRef("xmessage.Xmessage", at), at, kind, **what)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["NORMAL", "DIALOG", "UTILITY", ""])
def test_another_apps_window_beside_the_task_s_windows_is_left_out(kind: str) -> None:
    """A window placed by the window manager hides nothing of the task and a click into
    the task raises the task over nothing, whatever it says it is."""
    window = managed(kind)
    # left out with its shadow's reach round it
    assert left_out([FORM, window], [TARGET], {TASK}) == [replace(window, frame=BESIDE.grow(12))]
    clear = managed(kind, Rect(FORM.frame.right + 12, 200, 100, 80))
    assert len(left_out([FORM, clear], [TARGET], {TASK})) == 1
    # touching the form's edge, its shadow would darken the form: the pixels judge
    touching = managed(kind, Rect(FORM.frame.right + 11, 200, 100, 80))
    assert left_out([FORM, touching], [TARGET], {TASK}) == []
    # with no window of the task's on the screen, nothing is beside it
    assert left_out([window], [TARGET], {TASK}) == []


def test_a_window_beside_the_task_under_another_beside_it_is_left_out_too() -> None:
    lower = managed(at=Rect(10, 660, 160, 100))
    upper = managed(at=Rect(100, 700, 160, 90))
    covered = left_out([FORM, lower, upper], [TARGET], {TASK})
    assert [w.ref for w in covered] == [lower.ref, upper.ref]


@pytest.mark.parametrize(
    "window",
    [
        managed(at=Rect(640, 400, 100, 100)),  # over the form's corner
        managed(focused=True),  # has the keyboard
        managed(transient=True),  # belongs to a window
        managed(override_redirect=True),  # placed itself: may be a menu, which grabs
        managed("DESKTOP"),
        StackedWindow(WindowRef(TASK, BESIDE), BESIDE, "NORMAL"),  # the task's own
        StackedWindow(WindowRef("", BESIDE), BESIDE, "NORMAL"),  # whose: not known
        # the task's app under another class (a Tk dialog is "Toplevel"): its own error
        managed(client=FORM_CLIENT),
        managed(pid=FORM_PID),
    ],
    ids=[
        "over-task",
        "focused",
        "transient",
        "override",
        "desktop",
        "task-class",
        "no-class",
        "task-connection",
        "task-process",
    ],
)
def test_a_window_beside_the_task_is_left_to_the_pixels_unless_all_holds(
    window: StackedWindow,
) -> None:
    form = replace(FORM, client=FORM_CLIENT, pid=FORM_PID)
    assert left_out([form, window], [TARGET], {TASK}) == []


def test_a_window_beside_one_of_the_task_s_windows_but_over_another_is_not_left_out() -> None:
    """The task's dialog stands elsewhere: a window over it is over the task."""
    dialog = StackedWindow(WindowRef(TASK, Rect(700, 600, 300, 150)), Rect(700, 600, 300, 150))
    window = managed(at=Rect(900, 700, 120, 60))
    assert not window.frame.intersects(FORM.frame)
    assert left_out([FORM, dialog, window], [TARGET], {TASK}) == []


DIALOG = StackedWindow(WindowRef(TASK, Rect(300, 200, 500, 400)), Rect(300, 200, 500, 400))
"""The task's dialog, over the form and past its right and bottom edges."""


def test_a_window_under_the_task_s_windows_is_left_out_where_it_shows() -> None:
    """Another app's window the task's dialog was raised over hides nothing of the
    dialog: what shows of it (and its shadow's reach) beside the dialog is left out, in
    pieces, and never a pixel of the dialog."""
    window = managed(at=Rect(760, 560, 160, 100))  # under the dialog's bottom-right corner
    assert not window.frame.grow(12).intersects(FORM.frame)
    pieces = left_out([window, FORM, DIALOG], [TARGET], {TASK})
    assert pieces and all(w.ref == window.ref for w in pieces)
    assert not any(w.frame.intersects(DIALOG.frame) for w in pieces)
    shown = sum(w.frame.w * w.frame.h for w in pieces)
    reach = window.frame.grow(12)
    hidden = reach.intersection(DIALOG.frame)
    assert hidden is not None and shown == reach.w * reach.h - hidden.w * hidden.h
    assert described_all(pieces) == described(replace(window, frame=reach))


@pytest.mark.parametrize(
    "stack",
    [
        # over the dialog: it hides part of the task
        lambda w: [FORM, DIALOG, w],
        # under the dialog but over the form: it hides part of the form
        lambda w: [FORM, w, DIALOG],
    ],
    ids=["over-the-dialog", "over-the-form"],
)
def test_a_window_over_any_of_the_task_s_windows_is_not_left_out(
    stack: Callable[[StackedWindow], list[StackedWindow]],
) -> None:
    window = managed(at=Rect(600, 500, 160, 100))  # meets the dialog and the form
    assert window.frame.intersects(DIALOG.frame) and window.frame.intersects(FORM.frame)
    assert left_out(stack(window), [TARGET], {TASK}) == []


def test_what_shows_of_a_window_under_the_task_guards_the_target_as_ever() -> None:
    """A target beside the dialog (in the form's part no other window covers) within
    what shows of the window: the pixels judge it."""
    window = managed(at=Rect(760, 560, 160, 100))
    target = Rect(860, 640, 32, 32)
    assert not target.intersects(DIALOG.frame)
    assert left_out([window, FORM, DIALOG], [target], {TASK}) == []
    # a notification under the dialog alike: what shows of it, less the dialog
    note = card(at=Rect(760, 560, 160, 100))
    assert left_out([note, FORM, DIALOG], [TARGET], {TASK}) == [
        replace(note, frame=p) for p in Rect(760, 560, 160, 100).minus(DIALOG.frame)
    ]


def test_nothing_is_left_out_without_the_task_s_classes_or_a_target() -> None:
    assert left_out([FORM, card()], [TARGET], set()) == []
    assert left_out([FORM, card()], None, {TASK}) == []
    # after the last action nothing is clicked: an empty list protects nothing
    assert left_out([FORM, card()], [], {TASK}) == [card()]


def test_a_notification_under_another_window_is_not_left_out() -> None:
    """It would leave out what the window above it shows."""
    above = StackedWindow(
        WindowRef("xterm.XTerm", Rect(500, 250, 300, 200)), Rect(500, 250, 300, 200)
    )
    assert left_out([FORM, card(), above], [TARGET], {TASK}) == []
    # Two notifications stacked: both are left out.
    other = card(at=Rect(470, 240, 180, 60))
    assert left_out([FORM, card(), other], [TARGET], {TASK}) == [card(), other]


def test_each_window_of_the_stack_is_judged_once_from_the_bottom_to_the_top() -> None:
    """A panel below every window, a tooltip and a notification away from the form, in
    the stack's order (bottom to top): each left out, once."""
    panel = card("DOCK", Rect(0, 770, 1280, 30), override_redirect=False)
    tip = card("TOOLTIP", Rect(700, 40, 120, 20))
    far = card(at=Rect(900, 600, 180, 60))
    assert left_out([panel, tip, FORM, far], [TARGET], {TASK}) == [panel, tip, far]


# ----- replay on the fake backend -------------------------------------------------------

WINDOW = WindowRef(TASK, Rect(100, 100, 560, 420))


def with_card(image: Image.Image, at: Rect = CARD) -> Image.Image:
    image = image.copy()
    d = ImageDraw.Draw(image)
    d.rectangle([at.x, at.y, at.right - 1, at.bottom - 1], fill="#3b4252")
    d.text((at.x + 10, at.y + 10), "New mail: 3 unread", fill="white")
    return image


def _replay(  # type: ignore[no-untyped-def]
    stacked: list[StackedWindow] | None,
    at: Rect | None = CARD,
    policy: Policy = Policy.DEFAULT,
    above: tuple[Over, ...] = (),
):
    """The synthetic form replayed with a card drawn `at` (None: none drawn) and the
    window system telling `stacked`; `above`: the windows each step had over its window
    when recorded."""
    store = Store()
    rec = form_recording()
    rec.steps = [replace(s, window=WINDOW, above=above) for s in rec.steps]
    rec.steps[1] = replace(rec.steps[1], effect=NAME_FIELD)  # where the name was typed
    save_with_screens(store, rec)

    def drawn(image: Image.Image) -> Image.Image:
        return image if at is None else with_card(image, at)

    def app(backend: FakeBackend, action) -> None:  # type: ignore[no-untyped-def]
        typing_app(backend, action)
        backend.screen = drawn(backend.screen)

    backend = FakeBackend(drawn(form_screen()), on_action=app)
    backend.stacked = stacked
    progress: list[str] = []
    options = ReplayOptions(timeout=0.3, policy=policy)
    report = replay(store, backend, "form", Values({"name": "John"}), options, progress.append)
    return report, [a.kind for a in backend.performed], progress


def test_replay_goes_on_past_a_notification_over_no_target() -> None:
    report, performed, progress = _replay([FORM, card()])
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert performed == ["click", "type", "click"]
    assert any(
        "a notification window ('notifier.Notifier' at 450,230 180x60)" in line
        and "left out of the check" in line
        for line in progress
    ), progress


@pytest.mark.parametrize(
    ("stacked", "at", "policy"),
    [
        (None, CARD, Policy.DEFAULT),  # the window system says nothing: the pixels judge
        ([FORM, card("DIALOG")], CARD, Policy.DEFAULT),
        ([FORM, card(transient=True)], CARD, Policy.DEFAULT),
        ([FORM, StackedWindow(WindowRef(TASK, CARD), CARD, "NOTIFICATION")], CARD, Policy.DEFAULT),
        ([FORM, card(at=Rect(180, 150, 180, 60))], Rect(180, 150, 180, 60), Policy.DEFAULT),
        # over the field the task types into, away from every click's target
        ([FORM, card(at=OVER_NAME)], OVER_NAME, Policy.DEFAULT),
        ([FORM, card()], CARD, Policy.STRICT),
    ],
    ids=[
        "no-window-system",
        "dialog",
        "transient",
        "task-class",
        "over-target",
        "over-typed-field",
        "strict",
    ],
)
def test_replay_stops_where_the_window_is_not_known_harmless(
    stacked: list[StackedWindow] | None, at: Rect, policy: Policy
) -> None:
    report, performed, _ = _replay(stacked, at, policy)
    assert report.outcome is Outcome.DIVERGED
    assert performed == []


def test_a_window_that_took_the_input_focus_itself_gets_no_keys() -> None:
    """The window manager never makes an override-redirect window its active window:
    only the input focus says where keys go."""
    thief = card(focused=True)
    why = focus_taken(WINDOW, [FORM, thief])
    assert why is not None
    assert why.startswith("Another window has the keyboard: 'notifier.Notifier' at 450,230")
    # The task's own window with the focus, a managed window (the active window says),
    # nothing focused, or no window system: nothing to say.
    own = StackedWindow(WINDOW, WINDOW.rect, override_redirect=True, focused=True)
    managed = card("DIALOG", override_redirect=False, focused=True)
    for stack in ([FORM, own], [FORM, managed], [FORM, card()], None):
        assert focus_taken(WINDOW, stack) is None


FAR = Rect(900, 600, 180, 60)
"""Away from the form."""


def test_no_key_is_sent_while_such_a_window_has_the_focus() -> None:
    # Nothing of it shows in the pixels (no card drawn): only the input focus tells.
    report, performed, _ = _replay([FORM, card(at=FAR, focused=True)], at=None)
    assert report.outcome is Outcome.DIVERGED
    assert performed == ["click"]  # the click before; not the typing
    assert report.divergence is not None
    assert "took the input focus itself" in report.divergence.reason


@pytest.mark.parametrize(
    "window",
    [
        card(focused=True),
        card("DIALOG", override_redirect=False),
        card("", override_redirect=False),
    ],
    ids=["notification-with-the-focus", "dialog", "normal"],
)
def test_a_window_over_the_task_the_pixels_cannot_see_stops_replay_at_once(
    window: StackedWindow,
) -> None:
    """The window system says a window the recording did not have is over the task's
    window (nothing of it drawn: an input-only window, one drawn late): replay stops
    before the first action, naming it."""
    report, performed, _ = _replay([FORM, window], at=None)
    assert report.outcome is Outcome.DIVERGED and performed == []
    assert report.divergence is not None
    assert report.divergence.reason.startswith("Another window is over the task's window: a ")
    assert "('notifier.Notifier' at 450,230 180x60)" in report.divergence.reason


def test_a_new_window_of_the_tasks_app_far_from_it_stops_replay() -> None:
    """The task's own app opened a window far from the form (drawn nowhere the check
    looks): the window system says so, and replay stops before acting."""
    far = StackedWindow(WindowRef(TASK, FAR), FAR, "NORMAL")
    report, performed, _ = _replay([FORM, far], at=None)
    assert report.outcome is Outcome.DIVERGED and performed == []
    assert report.divergence is not None
    assert report.divergence.reason.startswith(
        "Another window of the task's app is open: a normal window ('loan_form.Tk' at 900,600"
    )


def test_a_window_over_the_task_when_it_was_recorded_is_expected_there() -> None:
    """The same window over the same place when each step was recorded: not new."""
    dialog = card("DIALOG", override_redirect=False)
    report, performed, _ = _replay([FORM, dialog], at=None, above=(Over.of(dialog),))
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert performed == ["click", "type", "click"]


SAVED = Rect(120, 440, 200, 40)
"""Where the synthetic form says "Saved" once Submit is clicked (inside the form)."""
NAME_FIELD = Rect(200, 175, 300, 20)
"""Where the name is typed (the typing step's effect)."""
BESIDE_SAVED = Rect(450, 440, 180, 60)
"""Over the form, beside the "Saved" line and away from every target and typed field."""


def _saved(image: Image.Image) -> Image.Image:
    image = image.copy()
    ImageDraw.Draw(image).text((SAVED.x + 4, SAVED.y + 10), "Saved: John", fill="black")
    return image


PANEL = Rect(0, 0, 1920, 24)
"""A panel at the top of the screen, with a pager in it (`_replay_to_the_end`)."""
PAGER = Rect(640, 4, 60, 16)
"""The pager's miniature of the form, redrawn by the last action when recorded."""


def _paged(image: Image.Image) -> Image.Image:
    image = image.copy()
    ImageDraw.Draw(image).rectangle([PAGER.x, PAGER.y, PAGER.right, PAGER.bottom], fill="gray")
    return image


TASKBAR_BUTTON = Rect(100, 4, 600, 16)
"""The form's button in a taskbar along the panel, pressed by the last action."""
UNDER_PANEL = Rect(600, 24, 400, 12)
"""Something the last action changed right under the panel, touching the button."""


def _taskbar(image: Image.Image) -> Image.Image:
    image = image.copy()
    d = ImageDraw.Draw(image)
    for r in (TASKBAR_BUTTON, UNDER_PANEL):
        d.rectangle([r.x, r.y, r.right - 1, r.bottom - 1], fill="#202020")
    return image


def _replay_to_the_end(
    at: Rect,
    policy: Policy = Policy.DEFAULT,
    panel: bool = False,
    drawn: Callable[[Image.Image], Image.Image] = _paged,
    gone_after: float | None = None,
) -> Outcome:
    return _report_to_the_end(at, policy, panel, drawn, gone_after)[0].outcome


def _report_to_the_end(
    at: Rect,
    policy: Policy = Policy.DEFAULT,
    panel: bool = False,
    drawn: Callable[[Image.Image], Image.Image] = _paged,
    gone_after: float | None = None,
    kept_under: Callable[[Image.Image], Image.Image] | None = None,
    released: list[int] | None = None,
    quiet: bool = False,
) -> tuple[ReplayReport, list[str]]:
    """The form replayed to its recorded outcome ("Saved: John") with a notification
    shown only from the last action on, `at`, and the window system telling it (gone
    `gone_after` seconds after the last action). With `panel`, the last action also
    redrew a panel at the top when recorded (`drawn`: a pager's miniature).
    `kept_under`: the windows' own pixels are kept (a compositing manager), what they
    show under the notification made from what the app shows; `released` gets how many
    times what was kept was let go. `quiet`: the last action changes nothing on the
    screen (a save under a name the window already shows)."""
    store = Store()
    rec = form_recording()
    screens = [form_screen(), form_screen(), form_screen(text="John")]
    end = screens[-1] if quiet else _saved(form_screen())
    if panel:
        end = drawn(end)
    rec.steps = [
        replace(s, window=WINDOW, thumbnail=f"t-{i:04d}.png") for i, s in enumerate(rec.steps)
    ]
    rec.steps[1] = replace(rec.steps[1], effect=NAME_FIELD)
    last = rec.steps[-1]
    outcome = EndScreen(fingerprint_of(Frame.from_image(end), None), "t-end.png")
    rec.steps[-1] = replace(last, outcome=outcome)
    thumbnails = {f"t-{i:04d}.png": thumbnail_png(screen) for i, screen in enumerate(screens)}
    store.save(rec, {**thumbnails, "t-end.png": thumbnail_png(end)})

    def app(backend: FakeBackend, action) -> None:  # type: ignore[no-untyped-def]
        typing_app(backend, action)
        if action.kind is ActionKind.CLICK and (action.x, action.y) == SUBMIT:
            saved = drawn(_saved(form_screen())) if panel else _saved(form_screen())
            if quiet:
                saved = screens[-1]
            backend.screen = with_card(saved, at)
            backend.stacked = [FORM, card(at=at)]
            if kept_under is not None:
                backend.under = kept_under(saved)
            if gone_after is not None:

                def gone() -> None:
                    backend.screen, backend.stacked = saved, [FORM]

                threading.Timer(gone_after, gone).start()

    backend = FakeBackend(form_screen(), on_action=app)
    backend.stacked = [FORM]
    if panel:
        backend.work_area = Rect(0, PANEL.bottom, 1920, 1080 - PANEL.bottom)
    options = ReplayOptions(timeout=0.3, policy=policy)
    progress: list[str] = []
    report = replay(store, backend, "form", Values({"name": "John"}), options, progress.append)
    if released is not None:
        released.append(backend.released)
    return report, progress


def test_a_notification_at_the_end_beside_what_the_task_changed_is_left_out() -> None:
    assert _replay_to_the_end(BESIDE_SAVED) is Outcome.FROM_MEMORY


def test_what_the_last_action_changed_in_a_panel_is_not_the_tasks() -> None:
    """Xfce's pager redraws its miniature of the window a dialog closed in: a notification
    over it and over the form beside "Saved" is left out of the outcome's check (exit 6
    when the pager's change counted as the task's)."""
    over_pager_and_form = Rect(600, 0, 200, 140)
    assert over_pager_and_form.intersects(PAGER)
    assert _replay_to_the_end(over_pager_and_form, panel=True) is Outcome.FROM_MEMORY


def test_a_panel_change_joins_nothing_the_task_changed() -> None:
    """The taskbar button (in the panel) and a change right under the panel touch: found
    as one region, it would take in the 500 px left of what the task changed, and a
    notification there would count as over the task's outcome (exit 6)."""
    left_of_the_change = Rect(150, 30, 120, 50)
    assert left_of_the_change.intersects(Rect(100, 24, 900, 12))  # the joined box
    assert not left_of_the_change.intersects(UNDER_PANEL)
    outcome = _replay_to_the_end(left_of_the_change, panel=True, drawn=_taskbar)
    assert outcome is Outcome.FROM_MEMORY


@pytest.mark.parametrize(
    ("at", "policy"),
    [(SAVED, Policy.DEFAULT), (OVER_NAME, Policy.DEFAULT), (BESIDE_SAVED, Policy.STRICT)],
    ids=["over-what-changed", "over-typed-field", "strict"],
)
def test_a_notification_at_the_end_over_what_the_task_changed_is_not(
    at: Rect, policy: Policy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outcome_step, "COVER_WAIT", 0.5)
    report, progress = _report_to_the_end(at, policy)
    assert report.outcome is Outcome.OUTCOME_DIFFERS
    assert report.divergence is not None
    covers = "covers part of what the last action changed or a field typed into"
    if policy is Policy.DEFAULT:  # waited out for a while, then said why it was not seen
        assert any(covers in line and "waiting up to 0.5s" in line for line in progress)
        assert "could not be seen whole" in report.divergence.reason
    else:
        assert not any(covers in line for line in progress)


def test_a_notification_over_what_the_task_changed_is_waited_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Gone a while after the last action: the outcome is then seen whole (exit 0),
    never judged without what it hid."""
    monkeypatch.setattr(outcome_step, "COVER_WAIT", 5.0)
    report, progress = _report_to_the_end(SAVED, gone_after=1.0)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert any("waiting up to 5s for it to go" in line for line in progress)


def _upload_failed(image: Image.Image) -> Image.Image:
    """The app's own pixels with an error where "Saved: John" shows."""
    image = image.copy()
    d = ImageDraw.Draw(image)
    d.rectangle([SAVED.x, SAVED.y, SAVED.right - 1, SAVED.bottom - 1], fill="white")
    d.text((SAVED.x + 4, SAVED.y + 10), "Upload failed", fill="red")
    return image


def test_a_notification_over_what_the_task_changed_is_seen_under_where_windows_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A compositing manager keeps each window's own pixels whole: the outcome is judged
    under the notification at once, never waited out (exit 0, saying so)."""
    monkeypatch.setattr(outcome_step, "COVER_WAIT", 5.0)
    started = time.monotonic()
    released: list[int] = []
    report, progress = _report_to_the_end(SAVED, kept_under=lambda saved: saved, released=released)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert released == [1]  # what was kept for the look is let go once it ends
    assert time.monotonic() - started < 3.0
    assert not any("waiting up to" in line for line in progress)
    assert any("seen under a notification window" in line for line in progress), progress


def test_a_notification_at_the_end_of_a_task_whose_last_action_changed_nothing_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl+S in Wine's notepad on a file it already names changes nothing on the screen:
    a notification then covers nothing the last action changed (and no typed field), and
    is left out as in a step's check (exit 0; it was exit 6, "does not show the recorded
    outcome" on the card's place)."""
    monkeypatch.setattr(outcome_step, "COVER_WAIT", 0.5)
    report, _ = _report_to_the_end(BESIDE_SAVED, quiet=True)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence


def test_a_notification_over_a_typed_field_at_the_end_is_seen_under_too() -> None:
    """Over the field the task typed into (as a tooltip over Wine's notepad stayed):
    judged under it where the windows' pixels are kept (exit 0; it was exit 6 at once)."""
    report, progress = _report_to_the_end(OVER_NAME, kept_under=lambda saved: saved)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert any("seen under a notification window" in line for line in progress), progress


def test_an_error_under_the_notification_is_seen_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the app shows under the notification is judged, not left out: its error there
    is an outcome that differs (exit 6), told as seen under the notification, with
    nothing waited out (it hides nothing)."""
    monkeypatch.setattr(outcome_step, "COVER_WAIT", 5.0)
    started = time.monotonic()
    report, progress = _report_to_the_end(SAVED, kept_under=_upload_failed)
    assert report.outcome is Outcome.OUTCOME_DIFFERS
    assert time.monotonic() - started < 3.0
    assert not any("waiting up to" in line for line in progress)
    assert report.divergence is not None
    assert report.divergence.reason.startswith(
        "the screen after the last step does not show the recorded outcome, seen under a "
        "notification window"
    ), report.divergence.reason


def test_a_dialog_another_process_made_for_the_task_is_the_tasks_own_to_any_depth() -> None:
    """GIMP: the PNG options (its plug-in's process and class, "file-png.Gimp") belong to
    the export dialog (`WM_TRANSIENT_FOR`), which belongs to the image window."""
    from mmcli.screen.windows import own_windows, same_app

    main = StackedWindow(WindowRef("gimp.Gimp", Rect(0, 0, 900, 560)), Rect(0, 0, 900, 594),
                         "NORMAL", xid=0x100, pid=10)  # fmt: skip
    export = StackedWindow(WindowRef("gimp.Gimp", Rect(100, 20, 900, 600)),
                           Rect(96, 0, 908, 640), "DIALOG", transient=True, xid=0x200,
                           pid=10, owner=0x100)  # fmt: skip
    png = StackedWindow(WindowRef("file-png.Gimp", Rect(240, 130, 330, 440)),
                        Rect(236, 110, 338, 473), "DIALOG", transient=True, xid=0x300,
                        pid=11, owner=0x200)  # fmt: skip
    other = StackedWindow(WindowRef("xterm.XTerm", Rect(0, 600, 400, 200)),
                          Rect(0, 580, 404, 224), "NORMAL", xid=0x400, pid=12)  # fmt: skip
    stack = [main, export, png, other]
    assert same_app(png, export) and same_app(export, png) and not same_app(png, main)
    assert own_windows(stack, png.ref) == [main, export]
    assert own_windows(stack, main.ref) == [export, png]
    assert other not in own_windows(stack, png.ref)
    alone = replace(png, owner=0)
    assert own_windows([main, export, alone, other], alone.ref) == []


def test_a_transient_for_of_another_format_is_transient_and_names_no_owner() -> None:
    from mmcli.backends.x11windows import _first_long

    assert _first_long((32, [0x200])) == (True, 0x200)
    assert _first_long((8, b"ab")) == (True, 0)  # malformed: still transient, no owner
    assert _first_long((32, [])) == (False, 0)
    assert _first_long(None) == (False, 0)


def _under_the_form() -> tuple[StackedWindow, dict[int, list[Rect]]]:
    """Another app's window under the form's right edge, and what showed of it beside the
    form while the task ran (left out of each check)."""
    window = replace(managed(at=Rect(600, 300, 160, 100)), xid=0x3200007)
    assert window.frame.intersects(FORM.frame)
    pieces = left_out([window, FORM], [TARGET], {TASK})
    assert pieces
    return window, {window.xid: [p.frame for p in pieces]}


def test_a_window_the_closing_form_laid_bare_is_left_out_of_the_outcome() -> None:
    """The form closed at the end (its frame `vacated` as recorded): what shows now of
    the window that was under it is where it showed beside the form, or where the
    recorded outcome showed the desktop."""
    window, seen = _under_the_form()
    bare = revealed([window], {TASK}, seen, [FORM.frame], [FORM.frame], [])
    assert [w.frame for w in bare] == [window.frame.grow(12)]
    assert described_all(bare) == described(replace(window, frame=window.frame.grow(12)))
    # the window manager gave it the focus the form had: no key follows the last action
    focused = replace(window, focused=True)
    assert revealed([focused], {TASK}, seen, [FORM.frame], [FORM.frame], []) != []


@pytest.mark.parametrize(
    "why",
    [
        "not-seen",  # never left out of a check of this run
        "moved",  # stands elsewhere than where it was left out
        "form-stayed",  # the recorded outcome laid nothing bare
        "over-what-changed",  # the last action showed something there (a confirmation)
        "over-the-task",  # a window of the task's is under it
        "under-another",  # another window over it
        "over-typed",  # over a field the task typed into
        "strict-kind",  # placed itself: it may be a menu
    ],
)
def test_a_window_the_outcome_did_not_lay_bare_is_left_to_the_pixels(why: str) -> None:
    window, seen = _under_the_form()
    stack: list[StackedWindow] = [window]
    vacated, changed, protected = [FORM.frame], [FORM.frame], []
    if why == "not-seen":
        seen = {}
    elif why == "moved":
        stack = [replace(window, frame=window.frame.moved(0, 40))]
    elif why == "form-stayed":
        vacated = []
    elif why == "over-what-changed":
        changed = [FORM.frame, Rect(700, 380, 100, 40)]  # beside the form, under the window
    elif why == "over-the-task":
        stack = [
            StackedWindow(WindowRef(TASK, Rect(700, 380, 80, 60)), Rect(700, 380, 80, 60)),
            window,
        ]
    elif why == "under-another":
        stack = [window, managed(at=Rect(740, 380, 100, 60))]
    elif why == "over-typed":
        protected = [Rect(650, 320, 40, 20)]
    elif why == "strict-kind":
        stack = [replace(window, override_redirect=True)]
    assert revealed(stack, {TASK}, seen, vacated, changed, protected) == []


def test_a_window_hidden_under_the_form_from_the_start_is_laid_bare_only_where_it_stood() -> None:
    """Never shown while the task ran (under the form, wholly): known from the stack as
    the run began, it is left out of the outcome where the form's place holds all of it."""
    hidden = replace(managed(at=Rect(300, 200, 160, 100)), xid=0x3400002)
    assert hidden.frame.grow(12).inside(FORM.frame)
    form = replace(FORM, client=FORM_CLIENT)
    assert found_apart([hidden, form], {TASK}) == [hidden]
    seen: dict[int, list[Rect]] = {w.xid: [] for w in found_apart([hidden, form], {TASK})}
    bare = revealed([hidden], {TASK}, seen, [FORM.frame], [FORM.frame], [])
    assert [w.frame for w in bare] == [hidden.frame.grow(12)]
    # over the closed form's typed field: nothing is there any more
    typed = Rect(320, 220, 80, 20)
    assert revealed([hidden], {TASK}, seen, [FORM.frame], [FORM.frame], [typed]) == bare
    # past the form's place: it shows where the outcome showed the desktop unseen
    wider = replace(hidden, frame=Rect(300, 200, 400, 100))
    assert revealed([wider], {TASK}, seen, [FORM.frame], [FORM.frame], []) == []
    # a window of the task's app when the run began is never apart from it
    own = replace(hidden, client=FORM_CLIENT)
    assert found_apart([own, form], {TASK}) == []


def test_a_run_knows_the_windows_apart_from_it_at_its_start_and_each_piece_it_left_out() -> None:
    from mmcli.replay.bystanders import Bystanders

    window, seen = _under_the_form()
    run = Bystanders(Policy.DEFAULT, {TASK})
    run.begin([window, FORM])
    run.begin([])  # asked once: the first screen's
    assert run.known == {window.xid: []}
    pieces = left_out([window, FORM], [TARGET], {TASK})
    run.passed(pieces)
    run.passed(pieces)  # the same pieces at the next step: kept once
    assert run.known == seen
    assert not Bystanders(Policy.STRICT, {TASK}).active
    assert not Bystanders(Policy.DEFAULT, set()).active
    assert Bystanders(Policy.STRICT, {TASK}).left_out([window, FORM], [TARGET]) == []
