"""Keys go where the keyboard is: replay sends none while another window has it."""

from __future__ import annotations

from dataclasses import replace

from mmcli.backends import FakeBackend
from mmcli.errors import Outcome
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import WindowRef, keyboard_taken
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen
from tests.unit.test_replayer import form_recording, typing_app

FORM = WindowRef("loan_form.Tk", Rect(100, 100, 500, 400))
THIEF = WindowRef("thief.Thief", Rect(900, 500, 200, 40))


def test_the_window_the_recording_typed_into_may_have_the_keys() -> None:
    assert keyboard_taken(FORM, FORM) is None
    assert keyboard_taken(FORM, None) is None  # the window system says nothing
    moved = WindowRef(FORM.wm_class, Rect(160, 100, 500, 400))
    assert keyboard_taken(FORM, moved, (60, 0)) is None  # found moved (--relocate)


def test_another_window_with_the_keyboard_is_named() -> None:
    why = keyboard_taken(FORM, THIEF)
    assert why is not None
    assert why.startswith("Another window has the keyboard: 'thief.Thief' at 900,500 200x40")
    assert "'loan_form.Tk' at 100,100 500x400" in why
    # The same class elsewhere, or the same place at the task's offset, is another window.
    assert keyboard_taken(FORM, WindowRef(FORM.wm_class, Rect(700, 100, 500, 400)))
    assert keyboard_taken(FORM, FORM, (60, 0))


def _replay(keyboard: WindowRef | None):  # type: ignore[no-untyped-def]
    store = Store()
    rec = form_recording()
    rec.steps[1] = replace(rec.steps[1], window=FORM)  # the step that types {{name}}
    store.save(rec)
    backend = FakeBackend(form_screen(), on_action=typing_app)
    backend.keyboard = keyboard
    report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))
    return report, [a.kind for a in backend.performed]


def test_no_key_is_sent_while_another_window_has_the_keyboard() -> None:
    report, performed = _replay(THIEF)
    assert report.outcome is Outcome.DIVERGED
    assert performed == ["click"]  # the click before; not the typing, nor what follows
    assert report.divergence is not None and report.divergence.step == 1
    assert report.divergence.reason.startswith("Another window has the keyboard")


def test_keys_are_sent_to_the_window_that_typed_them_or_where_nothing_is_known() -> None:
    for keyboard in (FORM, None):
        report, performed = _replay(keyboard)
        assert report.outcome is Outcome.FROM_MEMORY
        assert performed == ["click", "type", "click"]
