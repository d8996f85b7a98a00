"""Finding a moved window by the window system's account of it."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import TYPE_CHECKING

from PIL import Image

from mmcli.capture.steps import titles_kept
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import (
    Over,
    StackedWindow,
    TitleBar,
    WindowRef,
    described_over,
    new_over,
    new_own,
    relocation,
    title_band,
    titles_shown,
)

if TYPE_CHECKING:
    from mmcli.model import Recording
    from mmcli.store.recordings import Store

TASK = WindowRef("zenity.Zenity", Rect(80, 90, 400, 300))


def test_the_one_window_of_the_class_and_size_gives_the_offset() -> None:
    live = [
        WindowRef("xterm.XTerm", Rect(0, 0, 400, 300)),
        WindowRef("zenity.Zenity", Rect(140, 80, 400, 300)),
        WindowRef("zenity.Zenity", Rect(600, 90, 200, 100)),  # another size: another window
    ]
    assert relocation(TASK, live) == (60, -10)


def test_none_or_several_candidates_give_no_offset() -> None:
    assert relocation(TASK, [WindowRef("xterm.XTerm", TASK.rect)]) is None
    twins = [WindowRef("zenity.Zenity", Rect(x, 90, 400, 300)) for x in (140, 700)]
    assert relocation(TASK, twins) is None


def test_a_window_without_a_class_is_not_known_by_it() -> None:
    anonymous = WindowRef("", TASK.rect)
    assert relocation(anonymous, [WindowRef("", Rect(140, 90, 400, 300))]) is None


# ----- windows new over the task's window ------------------------------------------------

TASK_REF = WindowRef("gnumeric.Gnumeric", Rect(100, 100, 800, 600))
TASK_WIN = StackedWindow(TASK_REF, Rect(98, 78, 804, 624), "NORMAL")
TARGET_AT = [Rect(120, 150, 64, 64)]


def win(wm_class: str, at: Rect, kind: str = "NORMAL", **what: object) -> StackedWindow:
    return StackedWindow(WindowRef(wm_class, at), at, kind, **what)  # type: ignore[arg-type]


def test_a_window_over_the_task_the_recording_did_not_have_is_new() -> None:
    dialog = win("xmessage.Xmessage", Rect(600, 500, 200, 80), "DIALOG")
    below = win("xterm.XTerm", Rect(600, 500, 200, 80))
    far = win("xterm.XTerm", Rect(1200, 800, 200, 80))
    assert new_over([TASK_WIN, dialog], TASK_REF, (), (0, 0), {"gnumeric.Gnumeric"}, TARGET_AT) == [
        dialog
    ]
    assert new_over([below, TASK_WIN, far], TASK_REF, (), (0, 0), set(), TARGET_AT) == []


def test_windows_the_recording_had_over_the_task_are_expected_moved_or_not() -> None:
    own = win("gnumeric.Gnumeric", Rect(300, 300, 200, 100), "DIALOG", transient=True)
    panel = win("panel.Panel", Rect(0, 650, 1920, 30), "UTILITY")
    recorded = (Over.of(own), Over.of(panel))
    moved = [replace(TASK_WIN, ref=WindowRef(TASK_REF.wm_class, TASK_REF.rect.moved(60, 0)))]
    own_moved = replace(own, frame=own.frame.moved(60, 0))
    stack = [*moved, own_moved, panel]
    ref = moved[0].ref
    assert new_over(stack, ref, recorded, (60, 0), set(), TARGET_AT) == []
    assert new_over(stack, ref, (), (60, 0), set(), TARGET_AT) == [own_moved, panel]


def test_the_tasks_own_popups_and_harmless_windows_are_left_to_the_pixels() -> None:
    menu = win("gnumeric.Gnumeric", Rect(120, 120, 150, 300), "POPUP_MENU", override_redirect=True)
    note = win("dunst.Dunst", Rect(700, 100, 200, 60), "NOTIFICATION", override_redirect=True)
    on_target = replace(note, frame=Rect(110, 140, 200, 60))
    classes = {"gnumeric.Gnumeric"}
    assert new_over([TASK_WIN, menu, note], TASK_REF, (), (0, 0), classes, TARGET_AT) == []
    assert new_over([TASK_WIN, on_target], TASK_REF, (), (0, 0), classes, TARGET_AT) == [on_target]


def test_nothing_is_new_where_the_tasks_window_is_not_found() -> None:
    dialog = win("xmessage.Xmessage", Rect(600, 500, 200, 80), "DIALOG")
    assert new_over([dialog], TASK_REF, (), (0, 0), set(), TARGET_AT) == []
    assert described_over(dialog) == "a dialog window ('xmessage.Xmessage' at 600,500 200x80)"
    assert described_over(replace(dialog, kind="", transient=True)).startswith("a dialog window")


def test_a_new_window_of_the_tasks_app_anywhere_is_new() -> None:
    """A dialog of the task's app far from its window, a second window, a page's popup:
    the app is not in the state the step was recorded in. Its menus and tooltips (placed
    by itself) come and go with the pointer: not counted."""
    far = win("gnumeric.Gnumeric", Rect(1500, 900, 300, 120), "DIALOG")
    menu = win("gnumeric.Gnumeric", Rect(1500, 100, 150, 300), "POPUP_MENU", override_redirect=True)
    other = win("xterm.XTerm", Rect(1500, 500, 300, 200))
    stack = [TASK_WIN, far, menu, other]
    assert new_own(stack, TASK_REF, (), (0, 0)) == [far]
    assert new_own(stack, TASK_REF, (Over.of(far),), (0, 0)) == []  # there when recorded
    assert new_own([far], TASK_REF, (), (0, 0)) == []  # the task's window is gone: pixels


def test_the_tasks_app_is_told_by_its_process_where_the_windows_say_it() -> None:
    """A Tk toplevel calls itself 'toplevel.Toplevel': the process tells it is the app's;
    another app of the same class is not."""
    task = replace(TASK_WIN, pid=42)
    toplevel = win("mail.Toplevel", Rect(1500, 900, 220, 70), pid=42)
    stranger = win("gnumeric.Gnumeric", Rect(1500, 100, 300, 200), pid=7)
    assert new_own([task, toplevel, stranger], TASK_REF, (), (0, 0)) == [toplevel]


def test_the_tasks_app_is_told_by_its_connection_where_it_says_nothing() -> None:
    """Tk sets no `_NET_WM_PID`: its toplevel ('!toplevel.Toplevel') is the app's by the
    connection to the window system that made it. One of the task's class by another
    connection counts as the app's unless both processes say they differ."""
    task = replace(TASK_WIN, client=0x400000)
    toplevel = win("!toplevel.Toplevel", Rect(1500, 900, 220, 70), client=0x400000)
    stranger = win("gnumeric.Gnumeric", Rect(1500, 100, 300, 200), client=0x600000)
    assert new_own([task, toplevel, stranger], TASK_REF, (), (0, 0)) == [toplevel, stranger]
    stranger = replace(stranger, pid=7)
    assert new_own([replace(task, pid=42), toplevel, stranger], TASK_REF, (), (0, 0)) == [toplevel]


def test_a_title_bar_naming_this_run_s_value_is_the_recorded_one() -> None:
    bar = TitleBar(Rect(80, 70, 400, 20), "Acme Loan Intake - {{name}}")
    titles = {(280, 80): "Acme Loan Intake - Grace", (300, 110): "Acme Loan Intake - Ada"}

    def title_at(x: int, y: int) -> str | None:
        return titles.get((x, y))

    assert titles_shown([bar], {"name": "Grace"}, title_at) == [bar.rect]
    assert titles_shown([bar], {"name": "Ada"}, title_at) == []  # names someone else
    assert titles_shown([bar], {}, title_at) == []  # no value: the placeholder stays
    assert titles_shown([bar], {"name": "Ada"}, title_at, (20, 30)) == [bar.rect]  # moved
    assert titles_shown([bar], {"name": "Grace"}, lambda x, y: None) == []  # none told


def test_every_title_is_kept_with_its_values_as_placeholders_never_a_piece_of_a_secret() -> None:
    rect = Rect(0, 0, 100, 20)
    titles = [(rect, "Acme - Ada"), (rect, "Acme"), (rect, "Acme - Ada - pass-w")]
    kept = titles_kept(titles, {"name": "Ada", "pin": "pass-word"}, {"pin"})
    assert kept == (TitleBar(rect, "Acme - {{name}}"), TitleBar(rect, "Acme"))


def test_a_title_band_is_the_frame_above_the_client() -> None:
    framed = StackedWindow(TASK, Rect(79, 68, 402, 323))
    assert title_band(framed) == Rect(79, 68, 402, 22)
    assert title_band(StackedWindow(TASK, TASK.rect)) is None  # no decorations
    popup = StackedWindow(TASK, Rect(79, 68, 402, 323), override_redirect=True)
    assert title_band(popup) is None


def test_the_outcome_keeps_where_the_last_action_laid_the_desktop_bare() -> None:
    """The form's OK closed it: its frame is bare at the outcome, but where a panel or
    the app's other window stands; a window still there leaves nothing bare."""
    from mmcli.backends.fake import FakeBackend
    from mmcli.capture.windowing import around, vacated

    form = StackedWindow(TASK, Rect(79, 68, 402, 323), "NORMAL")
    other = StackedWindow(
        WindowRef("zenity.Zenity", Rect(600, 90, 200, 100)), Rect(599, 68, 202, 123)
    )
    panel = StackedWindow(
        WindowRef("panel.Panel", Rect(0, 0, 1920, 30)), Rect(0, 0, 1920, 30), "DOCK"
    )
    desktop = StackedWindow(
        WindowRef("desk.Desk", Rect(0, 0, 1920, 1080)), Rect(0, 0, 1920, 1080), "DESKTOP"
    )
    backend = FakeBackend(Image.new("RGB", (1920, 1080)))
    backend.stacked = [desktop, form, other, panel]
    above, own, frames = around(backend, TASK)
    assert above == ()  # the panel is over none of the form
    assert frames == (form.frame, other.frame) and own == (Over.of(other),)
    last = SimpleNamespace(frames=frames)
    backend.stacked = [desktop, other, panel]  # the form closed
    assert vacated(backend, last) == (form.frame.grow(12),)  # type: ignore[arg-type]
    backend.stacked = [desktop, other, replace(panel, frame=Rect(0, 0, 1920, 80))]
    assert vacated(backend, last) == (Rect(67, 80, 426, 323),)  # type: ignore[arg-type]
    backend.stacked = [desktop, form, other, panel]  # nothing closed
    assert vacated(backend, last) == ()  # type: ignore[arg-type]
    backend.stacked = None  # the window system says nothing
    assert vacated(backend, last) == ()  # type: ignore[arg-type]


def test_a_title_bar_a_click_acts_on_is_never_known_by_its_title_alone() -> None:
    """A step's title bars are let be by their titles (`titles_shown`), but the one a
    click lands on: its pixels are the target's."""
    from dataclasses import replace

    from mmcli.model import Action, ActionKind, Step
    from mmcli.replay.judge import off_target
    from tests.helpers import literal_fingerprint

    bar, other = TitleBar(Rect(0, 0, 200, 20), "Acme"), TitleBar(Rect(300, 0, 200, 20), "Help")
    fingerprint = replace(literal_fingerprint(0), pointer=(50, 10))
    click = Step(1, None, Action(ActionKind.CLICK, x=50, y=10), fingerprint, titles=(bar, other))
    assert off_target(click) == [other]
    keys = replace(click, action=Action(ActionKind.HOTKEY, keys=("ctrl", "s")))
    assert off_target(keys) == [bar, other]


def _titled_form(bars: tuple[TitleBar, ...]) -> tuple[Store, Recording]:
    """A store with the form recording, each step and its outcome (the form with the name
    typed: the Submit changes nothing) keeping `bars`; and the recording."""
    from mmcli.model import EndScreen
    from mmcli.store.recordings import Store
    from tests.helpers import form_screen, fp_of
    from tests.unit.test_replayer import form_recording, save_with_screens

    store = Store()
    rec = form_recording()
    rec.steps = [replace(s, titles=bars) for s in rec.steps]
    outcome = EndScreen(fp_of(form_screen(text="John"), None), "t-0002.png", bars)
    rec.steps[-1] = replace(rec.steps[-1], outcome=outcome)
    save_with_screens(store, rec)
    return store, rec


def test_a_title_bar_is_asked_of_the_window_system_only_where_the_pixels_differ_on_it() -> None:
    """Asking a title costs about a grab: a check the pixels pass asks none, and one that
    fails on a bar asks for that bar; its title then decides (`judge.touched`). The same
    for a step's check and for the outcome's."""
    from PIL import ImageDraw

    from mmcli.backends import FakeBackend
    from mmcli.errors import Outcome
    from mmcli.params import Values
    from mmcli.replay.report import ReplayOptions
    from mmcli.verbs.replay import replay_named as replay
    from tests.helpers import form_screen
    from tests.unit.test_replayer import typing_app

    bar = TitleBar(Rect(100, 78, 561, 22), "Acme Loan Intake")
    far = TitleBar(Rect(1200, 78, 400, 22), "Notes")  # another of the task's windows

    def barred(image: Image.Image, fill: str) -> Image.Image:
        ImageDraw.Draw(image).rectangle([100, 78, 660, 99], fill=fill)
        return image

    def run(fill: str, title: str) -> tuple[Outcome, list[tuple[int, int]]]:
        store, _ = _titled_form((bar, far))
        asked: list[tuple[int, int]] = []

        class Titled(FakeBackend):
            def window_title_at(self, x: int, y: int) -> str | None:
                asked.append((x, y))
                return title

        def app(backend: FakeBackend, action) -> None:  # type: ignore[no-untyped-def]
            typing_app(backend, action)
            backend.screen = barred(backend.screen, fill)

        backend = Titled(barred(form_screen(), fill), on_action=app)
        report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(0.3))
        return report.outcome, asked

    assert run("black", "Acme Loan Intake") == (Outcome.FROM_MEMORY, [])  # as recorded
    outcome, asked = run("#3060c0", "Acme Loan Intake")  # drawn active: told by its title
    assert outcome is Outcome.FROM_MEMORY and asked and set(asked) == {(380, 89)}
    outcome, _ = run("#3060c0", "Acme Loan Intake - Ada")  # names something else
    assert outcome is Outcome.DIVERGED


def test_an_outcome_that_fails_on_a_title_bar_asks_each_bar_once_per_look() -> None:
    """The outcome's failure path asks every bar (what the last action changed is looked
    at outside the bars that show their titles) after the bars its pixels touched: a bar
    asked for the one is not asked again for the other."""
    from collections import Counter

    from PIL import ImageDraw

    from mmcli.backends import FakeBackend
    from mmcli.errors import Outcome
    from mmcli.model import ActionKind
    from mmcli.params import Values
    from mmcli.replay.report import ReplayOptions
    from mmcli.verbs.replay import replay_named as replay
    from tests.helpers import form_screen
    from tests.unit.test_replayer import typing_app

    bar = TitleBar(Rect(100, 78, 561, 22), "Acme Loan Intake")
    far = TitleBar(Rect(1200, 78, 400, 22), "Notes")
    store, rec = _titled_form((bar, far))
    asked: list[tuple[int, int]] = []

    class Titled(FakeBackend):
        def window_title_at(self, x: int, y: int) -> str | None:
            asked.append((x, y))
            return "Acme Loan Intake - Ada"  # names something else: the bar differs

    def app(backend: FakeBackend, action) -> None:  # type: ignore[no-untyped-def]
        typing_app(backend, action)
        if action.kind is ActionKind.CLICK and action.point == rec.steps[-1].action.point:
            ImageDraw.Draw(backend.screen).rectangle([100, 78, 660, 99], fill="#3060c0")

    backend = Titled(form_screen(), on_action=app)
    report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(0.3))
    assert report.outcome is Outcome.OUTCOME_DIFFERS, report.outcome
    counts = Counter(asked)
    assert counts[(380, 89)] and counts[(380, 89)] == counts[(1400, 89)], counts
