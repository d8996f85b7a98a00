"""A click is judged on the screen as replay found it, and acted on by moving and pressing
at once, on the fake backend: a hover the pointer brings once it rests on the target
(Swing draws its Save button's rollover 20-400 ms after the pointer arrives, past the
recorder's wait) is never checked; a target recorded with its hover drawn is still
checked with the pointer on it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.errors import Outcome
from mmcli.model import Action, ActionKind, Recording
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions, ReplayReport
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import StackedWindow, WindowRef
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen, fp_of
from tests.unit.test_replayer import NAME_FIELD, SUBMIT, form_recording

HOVER = "#303030"


class HoveringApp(FakeBackend):
    """The form whose Submit button is drawn dark while the pointer rests on it; typed
    text shows in the Name field. Every move and click is logged in order."""

    def __init__(self) -> None:
        super().__init__(form_screen())
        self.text = ""
        self.inputs: list[tuple[str, tuple[int, int]]] = []

    def _draw(self) -> None:
        on = abs(self.position[0] - SUBMIT[0]) < 40 and abs(self.position[1] - SUBMIT[1]) < 15
        self.screen = form_screen(text=self.text, button_color=HOVER if on else "#d9d9d9")

    def move(self, x: int, y: int) -> None:
        super().move(x, y)
        self.inputs.append(("move", (x, y)))
        self._draw()

    def perform(self, action: Action) -> None:
        if action.kind is ActionKind.CLICK and action.x is not None and action.y is not None:
            self.inputs.append(("click", (action.x, action.y)))
            self.position = (action.x, action.y)
        if action.kind is ActionKind.TYPE:
            self.text = action.text
        super().perform(action)
        self._draw()


def show_an_error(app: HoveringApp) -> None:
    """Have `app` draw an error label the recording never showed once text is typed."""
    original = app._draw

    def with_error() -> None:
        original()
        if app.text:
            app.screen = form_screen(text=app.text, error=True)

    app._draw = with_error  # type: ignore[method-assign]


def recording(submit_screen: Image.Image) -> Recording:
    """click Name, type {{name}}, click Submit, each recorded with the pointer where it
    acted; Submit's screen as given."""
    rec = form_recording()
    pointers = [NAME_FIELD, NAME_FIELD, SUBMIT]
    screens = [form_screen(), form_screen(), submit_screen]
    rec.steps = [
        replace(s, fingerprint=replace(fp_of(screen, s.action.point or NAME_FIELD), pointer=p))
        for s, p, screen in zip(rec.steps, pointers, screens, strict=True)
    ]
    return rec


def run(rec: Recording) -> tuple[ReplayReport, HoveringApp]:
    Store().save(rec, overwrite=True)
    app = HoveringApp()
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    return report, app


def test_a_hover_the_recording_never_saw_is_not_checked_the_click_moves_and_presses_at_once() -> (
    None
):
    report, app = run(recording(form_screen(text="John")))  # Submit recorded plain
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert ("click", SUBMIT) in app.inputs
    assert ("move", SUBMIT) not in app.inputs  # the pointer never rested there first


def test_a_target_recorded_with_its_hover_is_checked_with_the_pointer_on_it() -> None:
    report, app = run(recording(form_screen(text="John", button_color=HOVER)))
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert app.inputs.index(("move", SUBMIT)) < app.inputs.index(("click", SUBMIT))


def test_a_screen_as_found_that_differs_is_still_refused() -> None:
    """The screen as found has an error label the recording never showed: no click."""
    rec = recording(form_screen(text="John"))
    Store().save(rec, overwrite=True)
    app = HoveringApp()
    show_an_error(app)
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED
    assert ("click", SUBMIT) not in app.inputs


# ----- the pointer already resting on the target -----------------------------------------

FORM_WINDOW = WindowRef("loan_form.Tk", Rect(100, 100, 560, 420))
FORM_STACKED = StackedWindow(FORM_WINDOW, Rect(96, 76, 568, 448))
LEFT = Rect(0, 300, 90, 300)
BESIDE_LEFT = StackedWindow(WindowRef("xterm.XTerm", LEFT), LEFT.grow(2))
"""A window left of the form, where the pointer would go aside."""


class RestingApp(HoveringApp):
    """The hovering form whose typing leaves the pointer resting on Submit (a person's
    hand on the mouse), the window system telling the form's window."""

    def __init__(self, rest: tuple[int, int]) -> None:
        super().__init__()
        self.rest = rest
        self.stacked = [FORM_STACKED]

    def perform(self, action: Action) -> None:
        super().perform(action)
        if action.kind is ActionKind.TYPE:
            self.position = self.rest
            self._draw()


def resting_run(
    rec: Recording, rest: tuple[int, int], stacked: list[StackedWindow] | None = None
) -> tuple[ReplayReport, RestingApp, list[str]]:
    rec.steps = [replace(s, window=FORM_WINDOW) for s in rec.steps]
    Store().save(rec, overwrite=True)
    app = RestingApp(rest)
    if stacked is not None:
        app.stacked = stacked
    lines: list[str] = []
    options = ReplayOptions(timeout=0.3)
    report = replay(Store(), app, "form", Values({"name": "John"}), options, lines.append)
    return report, app, lines


@pytest.mark.parametrize("rest", [SUBMIT, (SUBMIT[0] + 20, SUBMIT[1] + 5)], ids=["on", "near"])
def test_a_target_recorded_plain_under_a_resting_pointer_is_checked_with_the_pointer_aside(
    rest: tuple[int, int],
) -> None:
    """Submit recorded plain; the pointer rests on it when its step begins, so it is
    drawn hovered: the pointer is moved beside the form's window, the plain button
    checked, and the click moves and presses at once."""
    report, app, lines = resting_run(recording(form_screen(text="John")), rest)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert any("moved it aside to (80, 415)" in line for line in lines), lines
    aside = app.inputs.index(("move", (80, SUBMIT[1])))  # left of the frame, at the target's row
    assert app.inputs.index(("click", SUBMIT)) > aside
    assert ("move", SUBMIT) not in app.inputs[aside:]  # no rest on the target before it


def test_a_screen_that_differs_with_the_pointer_aside_is_still_refused() -> None:
    """Moved aside, the screen still shows an error the recording never did: no click,
    and the pointer goes back where it was."""
    rec = recording(form_screen(text="John"))
    rec.steps = [replace(s, window=FORM_WINDOW) for s in rec.steps]
    Store().save(rec, overwrite=True)
    app = RestingApp(SUBMIT)
    show_an_error(app)
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED
    assert ("click", SUBMIT) not in app.inputs
    assert ("move", (80, SUBMIT[1])) in app.inputs


def test_no_pointer_is_moved_aside_where_the_window_system_says_nothing() -> None:
    rec = recording(form_screen(text="John"))
    rec.steps = [replace(s, window=FORM_WINDOW) for s in rec.steps]
    Store().save(rec, overwrite=True)
    app = RestingApp(SUBMIT)
    app.stacked = None
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED
    assert ("move", (80, SUBMIT[1])) not in app.inputs


def test_the_pointer_goes_aside_over_no_window() -> None:
    """A window stands left of the form: the pointer goes right of it instead."""
    rec = recording(form_screen(text="John"))
    report, app, _ = resting_run(rec, SUBMIT, [FORM_STACKED, BESIDE_LEFT])
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert ("move", (80, SUBMIT[1])) not in app.inputs
    assert ("move", (FORM_STACKED.frame.right + 16, SUBMIT[1])) in app.inputs


def test_a_pointer_moved_aside_that_changes_the_windows_is_refused() -> None:
    """Moving the pointer aside brought a window over the task (a tooltip that places
    itself, a panel that slides in): the screen is no longer as found, nothing is clicked."""

    class Revealing(RestingApp):
        def move(self, x: int, y: int) -> None:
            super().move(x, y)
            if (x, y) == (80, SUBMIT[1]):
                tip = Rect(60, 400, 200, 30)
                self.stacked = [FORM_STACKED, StackedWindow(WindowRef("tip.Tip", tip), tip)]

    rec = recording(form_screen(text="John"))
    rec.steps = [replace(s, window=FORM_WINDOW) for s in rec.steps]
    Store().save(rec, overwrite=True)
    app = Revealing(SUBMIT)
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED
    assert ("move", (80, SUBMIT[1])) in app.inputs
    assert ("click", SUBMIT) not in app.inputs


def test_a_pointer_moved_aside_that_hides_a_window_is_refused() -> None:
    """Another app's notification beside the form went when the pointer moved aside (a
    popup that closes on the pointer's motion): the screen checked is not the one found."""
    card = Rect(420, 200, 180, 60)
    notification = StackedWindow(
        WindowRef("notifier.Notifier", card), card, "NOTIFICATION", override_redirect=True
    )

    class Hiding(RestingApp):
        def move(self, x: int, y: int) -> None:
            super().move(x, y)
            if (x, y) == (80, SUBMIT[1]):
                self.stacked = [FORM_STACKED]

    rec = recording(form_screen(text="John"))
    rec.steps = [replace(s, window=FORM_WINDOW) for s in rec.steps]
    Store().save(rec, overwrite=True)
    app = Hiding(SUBMIT)
    app.stacked = [FORM_STACKED, notification]
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    assert ("move", (80, SUBMIT[1])) in app.inputs
    assert report.outcome is Outcome.DIVERGED
    assert ("click", SUBMIT) not in app.inputs
