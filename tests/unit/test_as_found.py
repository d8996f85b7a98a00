"""A click is judged on the screen as replay found it, and acted on by moving and pressing
at once, on the fake backend: a hover the pointer brings once it rests on the target
(Swing draws its Save button's rollover 20-400 ms after the pointer arrives, past the
recorder's wait) is never checked; a target recorded with its hover drawn is still
checked with the pointer on it."""

from __future__ import annotations

from dataclasses import replace

from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.errors import Outcome
from mmcli.model import Action, ActionKind, Recording
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions, ReplayReport
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
    original = app._draw

    def with_error() -> None:
        original()
        if app.text:
            app.screen = form_screen(text=app.text, error=True)

    app._draw = with_error  # type: ignore[method-assign]
    report = replay(Store(), app, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED
    assert ("click", SUBMIT) not in app.inputs
