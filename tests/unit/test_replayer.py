"""Replay logic on the fake backend: order of actions, divergence, params, fail-safe."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from mmcli.backends import FakeBackend
from mmcli.errors import Aborted, DisplayError, Outcome, RecordingNotFound, UsageError
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions, ReplayReport
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.windows import StackedWindow, WindowRef
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import count_loads, form_screen, fp_of, thumbnail_png

NAME_FIELD = (250, 185)
SUBMIT = (160, 415)


def form_recording(name: str = "form") -> Recording:
    """click Name, type {{name}}, click Submit, on the synthetic form."""
    steps = [
        Step(
            0,
            None,
            Action(ActionKind.CLICK, x=NAME_FIELD[0], y=NAME_FIELD[1]),
            fp_of(form_screen(), NAME_FIELD),
        ),
        Step(1, 0, Action(ActionKind.TYPE, text="{{name}}"), fp_of(form_screen(), NAME_FIELD)),
        Step(
            2,
            1,
            Action(ActionKind.CLICK, x=SUBMIT[0], y=SUBMIT[1]),
            fp_of(form_screen(text="John"), SUBMIT),
        ),
    ]
    return Recording(name, steps, datetime.now(UTC), command=["agent"], params=["name"])


def typing_app(backend: FakeBackend, action: Action) -> None:
    """The fake app: typed text shows in the Name field."""
    if action.kind is ActionKind.TYPE:
        backend.screen = form_screen(text=action.text)


def run(backend: FakeBackend, values: dict[str, str] | None = None, **options: object):
    store = Store()
    if not store.exists("form"):
        store.save(form_recording())
    opts = ReplayOptions(timeout=0.3, **options)  # type: ignore[arg-type]
    return replay(
        store, backend, "form", Values(values if values is not None else {"name": "John"}), opts
    )


def test_replays_every_action_in_order_with_params_substituted() -> None:
    backend = FakeBackend(form_screen(), on_action=typing_app)
    report = run(backend, {"name": "John"})
    assert report.outcome is Outcome.FROM_MEMORY
    assert [a.kind for a in backend.performed] == ["click", "type", "click"]
    assert backend.performed[1].text == "John"


@pytest.mark.parametrize(
    ("screen", "dry_run", "outcome"),
    [
        ({}, False, Outcome.FROM_MEMORY),
        ({"popup": True}, False, Outcome.DIVERGED),
        ({}, True, Outcome.WOULD_REPLAY),
    ],
    ids=["replayed", "diverged", "dry-run"],
)
def test_a_replay_loads_its_recording_from_the_store_once(
    monkeypatch: pytest.MonkeyPatch, screen: dict[str, bool], dry_run: bool, outcome: Outcome
) -> None:
    """However many steps it walks and whichever part asks about the tree, one `replay`
    reads the recording's file once and parses it once."""
    store = Store()
    store.save(form_recording())
    loads, reads = count_loads(monkeypatch)
    backend = FakeBackend(form_screen(**screen), on_action=typing_app)
    options = ReplayOptions(timeout=0.3, dry_run=dry_run)
    report = replay(store, backend, "form", Values({"name": "John"}), options)
    assert report.outcome is outcome
    assert (loads, reads) == (["form"], ["form"])


def test_divergence_without_agent_acts_on_nothing() -> None:
    backend = FakeBackend(form_screen(popup=True), on_action=typing_app)
    report = run(backend)
    assert report.outcome is Outcome.DIVERGED
    assert report.exit_code == 3
    assert backend.performed == []
    assert report.divergence is not None and report.divergence.step == 0
    assert "tile" in report.divergence.reason


def test_divergence_mid_task_stops_before_the_action() -> None:
    def app(backend: FakeBackend, action: Action) -> None:
        if action.kind is ActionKind.TYPE:  # the app shows an error instead of the text
            backend.screen = form_screen(error=True)

    backend = FakeBackend(form_screen(), on_action=app)
    report = run(backend)
    assert report.outcome is Outcome.DIVERGED
    assert report.divergence is not None and report.divergence.step == 2
    assert [a.kind for a in backend.performed] == ["click", "type"]


def test_missing_param_is_a_usage_error_before_any_action() -> None:
    backend = FakeBackend(form_screen())
    with pytest.raises(UsageError, match="--param name="):
        run(backend, {})
    assert backend.performed == []


def test_other_screen_size_is_refused_up_front() -> None:
    backend = FakeBackend(form_screen().resize((1280, 720)))
    with pytest.raises(DisplayError, match="1280x720"):
        run(backend)


def test_pointer_in_a_corner_aborts_between_actions() -> None:
    def app(backend: FakeBackend, action: Action) -> None:
        typing_app(backend, action)
        if action.kind is ActionKind.TYPE:
            backend.position = (0, 0)  # the user slams the mouse into a corner

    backend = FakeBackend(form_screen(), on_action=app)
    with pytest.raises(Aborted, match="fail-safe"):
        run(backend)
    assert len(backend.performed) == 2
    history = Store().runs.read("form")
    assert history[-1]["outcome"] == "aborted"


def test_dry_run_acts_on_nothing() -> None:
    backend = FakeBackend(form_screen())
    report = run(backend, dry_run=True)
    assert report.outcome is Outcome.WOULD_REPLAY
    assert backend.performed == []
    assert Store().runs.read("form") == []


def test_branch_matching_the_screen_is_followed() -> None:
    store = Store()
    rec = form_recording()
    # A branch at step 0 for the popup screen: press enter.
    rec.steps.append(
        Step(
            3,
            None,
            Action(ActionKind.PRESS, keys=("enter",)),
            fp_of(form_screen(popup=True), NAME_FIELD),
        )
    )
    store.save(rec)
    backend = FakeBackend(form_screen(popup=True))
    said: list[str] = []
    opts = ReplayOptions(timeout=0.3)
    report = replay(store, backend, "form", Values({"name": "John"}), opts, said.append)
    assert [a.kind for a in backend.performed] == ["press"]
    assert report.outcome is Outcome.FROM_MEMORY
    # The counter names the branch it walks: its total is that branch's.
    assert "step 1/1 (branch 3): press enter" in said


def test_unknown_recording_without_agent() -> None:
    with pytest.raises(RecordingNotFound):
        replay(Store(), FakeBackend(form_screen()), "nope", Values(), ReplayOptions())


def test_each_path_screen_knows_the_typing_between_it_and_the_step() -> None:
    """What the `seen state` rule may not excuse: for every other screen of the path,
    where the task types between that screen and the step checked."""
    from mmcli.replay.replayer import Replayer
    from mmcli.screen.fingerprint import Rect

    field = Rect(200, 175, 300, 20)
    from dataclasses import replace as with_

    recording = form_recording()
    recording.steps[1] = with_(recording.steps[1], effect=field)
    replayer = Replayer(
        Store(), FakeBackend(form_screen()), recording, Values({"name": "J"}), ReplayOptions()
    )
    step = recording.step

    def typed(at: int) -> dict[int, list[Rect]]:
        return {s.id: t for s, t in replayer.tree.path_through(step(at))}

    assert typed(0) == {1: [], 2: [field]}  # typing at step 1 lies between 0 and 2
    assert typed(1) == {0: [], 2: [field]}
    assert typed(2) == {1: [field], 0: [field]}


class DialogAtTheLastMoment(FakeBackend):
    """A dialog opens over the form after replay checked the screen, just before it acts
    (the first time the target is looked at again)."""

    def grab_rect(self, rect):  # type: ignore[no-untyped-def]
        from PIL import ImageDraw

        dialog = form_screen()
        ImageDraw.Draw(dialog).rectangle([200, 150, 500, 260], fill="#eeeeee", outline="black")
        self.screen = dialog
        return super().grab_rect(rect)


def test_a_dialog_that_opens_between_the_check_and_the_action_is_not_clicked() -> None:
    backend = DialogAtTheLastMoment(form_screen())
    report = run(backend)
    assert backend.performed == []
    assert report.outcome is Outcome.DIVERGED
    assert report.divergence is not None and report.divergence.step == 0


FORM = WindowRef("form.Form", Rect(100, 100, 561, 421))
FAR = WindowRef("xterm.XTerm", Rect(1500, 800, 300, 200))
"""A terminal far from the form."""
OVER_FORM = WindowRef("zenity.Zenity", Rect(250, 250, 301, 131))
"""Another app's dialog over the form, but not over its Name field (form_screen's popup)."""


def stacked(*windows: WindowRef, focused: WindowRef | None = None) -> list[StackedWindow]:
    """A window stack, bottom to top, each window its own frame; `focused` has the focus."""
    ids = {FORM: 1, FAR: 2, OVER_FORM: 3}
    return [
        StackedWindow(w, w.rect, kind="NORMAL", focused=w == focused, xid=ids.get(w, 9))
        for w in windows
    ]


class FocusElsewhere(FakeBackend):
    """The form's window lost the focus to `others[-1]`: its styling dims. The window
    manager raises a window it activates (`activate`); `raised` says what the desktop shows
    then, and the screen as found comes back when the focus is given back."""

    def __init__(self, *others: WindowRef, raised: dict[str, object] | None = None) -> None:
        super().__init__(form_screen(button_color="#a0a0a0", **self.found_kw(others)))
        self.on_action = typing_app
        self.others = others
        self.raised = raised or {}
        self.stacked = stacked(FORM, *others, focused=others[-1])
        self.found = (self.screen, self.stacked)
        self.activations: list[WindowRef] = []

    @staticmethod
    def found_kw(others: tuple[WindowRef, ...]) -> dict[str, bool]:
        return {"popup": OVER_FORM in others}

    def activate(self, xid: int) -> bool:
        assert self.stacked is not None
        window = next(w for w in self.stacked if w.xid == xid)
        self.activations.append(window.ref)
        if window.ref == FORM:
            extra = self.raised.get("maps")
            others = [w for w in self.others if w != OVER_FORM]
            tops = [*others, FORM] if extra is None else [*others, FORM, extra]
            self.stacked = stacked(*tops, focused=FORM)  # type: ignore[arg-type]
            self.screen = form_screen(popup=extra is not None and not self.raised.get("unseen"))
        else:
            self.screen, self.stacked = self.found
        return True


def run_windowed(backend: FakeBackend) -> ReplayReport:
    """Replay the form with each pointer step knowing its window (`FORM`)."""
    Store().save(windowed_recording(), overwrite=True)
    return replay(Store(), backend, "form", Values({"name": "John"}), ReplayOptions(timeout=0.3))


def test_a_window_that_lost_the_focus_to_a_far_one_is_given_it_back_before_a_click() -> None:
    backend = FocusElsewhere(FAR)
    report = run_windowed(backend)
    assert report.outcome is Outcome.FROM_MEMORY
    assert backend.activations == [FORM]
    assert [a.kind for a in backend.performed] == ["click", "type", "click"]


class RedrawnLate(FocusElsewhere):
    """The window manager gives the form the focus at once; the app redraws it as active
    0.4 s later (GTK on a loaded machine)."""

    redraw_at: float | None = None

    def activate(self, xid: int) -> bool:
        done = super().activate(xid)
        if self.stacked is not None and any(w.focused and w.ref == FORM for w in self.stacked):
            self.active, self.screen = self.screen, self.found[0]
            self.redraw_at = time.monotonic() + 0.4
        return done

    def grab(self):  # type: ignore[no-untyped-def]
        if self.redraw_at is not None and time.monotonic() >= self.redraw_at:
            self.screen, self.redraw_at = self.active, None
        return super().grab()


def test_a_window_given_the_focus_is_waited_on_while_the_app_redraws_it_as_active() -> None:
    backend = RedrawnLate(FAR)
    report = run_windowed(backend)
    assert backend.activations == [FORM]
    assert report.outcome is Outcome.FROM_MEMORY
    assert [a.kind for a in backend.performed] == ["click", "type", "click"]


def test_a_window_covered_by_another_apps_dialog_is_never_raised_over_it() -> None:
    """The dialog covers the form but not the Name field: raising the form would hide it,
    and the check after would pass on a screen replay changed itself."""
    backend = FocusElsewhere(OVER_FORM)
    report = run_windowed(backend)
    assert backend.activations == []
    assert report.outcome is Outcome.DIVERGED and backend.performed == []


def test_the_focus_is_given_back_and_replay_stops_when_it_changed_what_is_over_the_task() -> None:
    """The app opens a dialog as it gets the focus: the windows over the task changed."""
    dialog = WindowRef("form.Form", Rect(250, 250, 301, 131))
    backend = FocusElsewhere(FAR, raised={"maps": dialog})
    report = run_windowed(backend)
    assert backend.activations == [FORM, FAR]
    assert report.outcome is Outcome.DIVERGED and backend.performed == []
    assert backend.stacked == backend.found[1]  # the desktop as it was found


def test_a_window_the_pixels_cannot_see_mapped_as_the_focus_came_back_stops_replay() -> None:
    """Giving the focus mapped a window over the task that draws nothing (an input-only
    window that would take the click): the pixels match, the window system says no."""
    shield = WindowRef("", Rect(100, 100, 561, 421))
    backend = FocusElsewhere(FAR, raised={"maps": shield, "unseen": True})
    report = run_windowed(backend)
    assert backend.activations == [FORM, FAR]
    assert report.outcome is Outcome.DIVERGED and backend.performed == []


class MappedAtTheLastMoment(FakeBackend):
    """Another app's dialog is mapped over the form (not over the Name field) after the
    check's stack was asked for: the window system says so at the moment of acting."""

    def __init__(self) -> None:
        super().__init__(form_screen(), on_action=typing_app)
        self.stacked = stacked(FORM, focused=FORM)
        self.acting = False

    def perform_checked(self, action, unchanged):  # type: ignore[no-untyped-def]
        self.acting = True
        try:
            return super().perform_checked(action, unchanged)
        finally:
            self.acting = False

    def stack(self) -> list[StackedWindow] | None:
        if self.acting and not self.performed:
            self.stacked = stacked(FORM, OVER_FORM)
            self.screen = form_screen(popup=True)
        return super().stack()


def test_a_window_mapped_over_the_task_between_the_check_and_the_action_stops_it() -> None:
    backend = MappedAtTheLastMoment()
    report = run_windowed(backend)
    assert report.outcome is Outcome.DIVERGED
    assert backend.performed == []


def test_the_task_area_leaves_out_the_desktop_panels() -> None:
    from mmcli.replay.judge import task_area
    from mmcli.screen.fingerprint import Rect

    stretched = Rect(100, 100, 1700, 980)  # recorded while the panel clock ticked
    workarea = Rect(0, 0, 1920, 1050)  # a 30 px panel at the bottom
    # The work area's whole 4 px cells: 1050 is not on the grid regions are found on.
    assert task_area(stretched, workarea) == Rect(100, 100, 1700, 948)
    assert task_area(stretched, None) == stretched
    assert task_area(Rect(0, 1060, 50, 10), workarea) == Rect(0, 1060, 50, 10)  # all panel


def test_dry_run_needs_no_params() -> None:
    backend = FakeBackend(form_screen())
    report = run(backend, {}, dry_run=True)
    assert report.outcome is Outcome.WOULD_REPLAY
    assert backend.performed == []


def test_a_divergence_leads_with_one_plain_sentence() -> None:
    backend = FakeBackend(form_screen(popup=True), on_action=typing_app)
    report = run(backend)
    assert report.divergence is not None
    sentence, _, details = report.divergence.reason.partition(". ")
    assert sentence == "Part of the screen near the task looks different"
    assert details.startswith("grid: tile")


def _progress_of(recording: Recording, values: Values) -> list[str]:
    Store().save(recording, overwrite=True)
    said: list[str] = []
    backend = FakeBackend(form_screen(), on_action=typing_app)
    report = replay(
        Store(), backend, recording.name, values, ReplayOptions(timeout=0.3), said.append
    )
    assert report.outcome is Outcome.FROM_MEMORY, said
    return said


def test_progress_tells_the_params_value_typed() -> None:
    said = _progress_of(form_recording(), Values({"name": "John"}))
    assert "step 2/3: type 'John'" in said


@pytest.mark.parametrize(
    "values", [Values({}, {"name": "John"}), Values({"name": "John"})], ids=["secret", "as-param"]
)
def test_progress_never_tells_a_secrets_value(values: Values) -> None:
    recording = form_recording()
    recording.secrets = ["name"]
    said = _progress_of(recording, values)
    assert "step 2/3: type '{{name}}'" in said
    assert not [line for line in said if "John" in line]


class StillLoading(FakeBackend):
    """The app is still loading: a spinner turns (a small mark, within the tolerances) for
    `loading` seconds over a screen that matches the first step, then a popup shows."""

    def __init__(self, loading: float) -> None:
        super().__init__(form_screen())
        self.until = time.monotonic() + loading

    def grab(self):  # type: ignore[no-untyped-def]
        from PIL import ImageDraw

        if time.monotonic() < self.until:
            self.screen = form_screen()
            if self.grabs % 2:
                ImageDraw.Draw(self.screen).rectangle([1900, 1060, 1903, 1063], fill="white")
        else:
            self.screen = form_screen(popup=True)
        return super().grab()


def test_replay_acts_only_on_a_screen_that_has_settled() -> None:
    """While the screen keeps changing, a match is not acted on: once the app has settled,
    it shows a popup over the target."""
    Store().save(form_recording())
    backend = StillLoading(loading=0.6)
    report = replay(Store(), backend, "form", Values({"name": "J"}), ReplayOptions(timeout=1.5))
    assert backend.performed == []
    assert report.outcome is Outcome.DIVERGED


def windowed_recording(wm_class: str = "form.Form") -> Recording:
    """`form_recording` whose pointer steps know the window they acted in."""
    rec = form_recording()
    window = WindowRef(wm_class, Rect(100, 100, 561, 421))
    rec.steps = [replace(s, window=window) if s.action.point is not None else s for s in rec.steps]
    return rec


def relocate_run(backend: FakeBackend, rec: Recording):  # type: ignore[no-untyped-def]
    store = Store()
    store.save(rec, overwrite=True)
    opts = ReplayOptions(timeout=0.3, relocate=True)
    return replay(store, backend, "form", Values({"name": "John"}), opts)


def moved_typing_app(backend: FakeBackend, action: Action) -> None:
    """`typing_app` with its window 60 px right of where it was recorded."""
    if action.kind is ActionKind.TYPE:
        backend.screen = form_screen(text=action.text, offset=(60, 0))


def test_relocate_finds_the_moved_window_by_the_window_system() -> None:
    backend = FakeBackend(form_screen(offset=(60, 0)), on_action=moved_typing_app)
    backend.window_list = [WindowRef("form.Form", Rect(160, 100, 561, 421))]
    progress: list[str] = []
    store = Store()
    store.save(windowed_recording(), overwrite=True)
    opts = ReplayOptions(timeout=0.3, relocate=True)
    report = replay(store, backend, "form", Values({"name": "John"}), opts, progress.append)
    assert report.outcome is Outcome.FROM_MEMORY
    assert backend.performed[0].point == (NAME_FIELD[0] + 60, NAME_FIELD[1])
    assert any("by its window" in line for line in progress)


def test_two_windows_of_the_class_and_size_are_not_guessed_between() -> None:
    backend = FakeBackend(form_screen(offset=(60, 0)), on_action=typing_app)
    twins = [Rect(160, 100, 561, 421), Rect(700, 300, 561, 421)]
    backend.window_list = [WindowRef("form.Form", r) for r in twins]
    report = relocate_run(backend, windowed_recording())
    assert report.outcome is Outcome.DIVERGED and backend.performed == []


def test_the_window_system_proposes_the_offset_the_pixels_still_judge() -> None:
    """The window is said to stand 60 px right, but a dialog covers the field there."""
    backend = FakeBackend(form_screen(offset=(60, 0), popup=True), on_action=typing_app)
    backend.window_list = [WindowRef("form.Form", Rect(160, 100, 561, 421))]
    report = relocate_run(backend, windowed_recording())
    assert report.outcome is Outcome.DIVERGED and backend.performed == []


def save_with_screens(store: Store, rec: Recording) -> None:
    """`rec` saved with each step's recorded screen as its thumbnail (the synthetic form,
    with the name typed before Submit): what the regions check and the pixel search use."""
    screens = [form_screen(), form_screen(), form_screen(text="John")]
    rec.steps = [replace(s, thumbnail=f"t-{i:04d}.png") for i, s in enumerate(rec.steps)]
    store.save(rec, {f"t-{i:04d}.png": thumbnail_png(screen) for i, screen in enumerate(screens)})


def test_a_recording_that_knows_no_windows_is_relocated_by_its_pixels() -> None:
    """Recorded where the window system said nothing (over VNC, no window manager),
    replayed where it knows the windows: the moved task is found by its pixels."""
    backend = FakeBackend(form_screen(offset=(60, 0)), on_action=moved_typing_app)
    backend.window_list = [WindowRef("form.Form", Rect(160, 100, 561, 421))]
    store = Store()
    rec = form_recording()
    rec.area = Rect(100, 100, 561, 421)  # where the actions acted: what is looked for
    save_with_screens(store, rec)
    progress: list[str] = []
    opts = ReplayOptions(timeout=0.3, relocate=True)
    report = replay(store, backend, "form", Values({"name": "John"}), opts, progress.append)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert backend.performed[0].point == (NAME_FIELD[0] + 60, NAME_FIELD[1])
    assert any("by its pixels" in line for line in progress), progress


def test_a_caret_like_mark_off_the_focused_field_passes_a_click_and_stops_the_keys() -> None:
    """A thin bar, a line tall, that no recorded screen shows (a caret blinking in another
    field, or a '|' that is more than that): at a click it is let be, as a caret blinking
    anywhere would be; at a keyboard step only a caret in the field that has the keyboard
    is, so the keys are not sent."""
    from PIL import ImageDraw

    def with_bar(image):  # type: ignore[no-untyped-def]
        image = image.copy()
        ImageDraw.Draw(image).line([480, 300, 480, 316], fill="black")  # off the Name line
        return image

    def app(backend: FakeBackend, action: Action) -> None:
        typing_app(backend, action)
        backend.screen = with_bar(backend.screen)

    store = Store()
    save_with_screens(store, form_recording())
    backend = FakeBackend(with_bar(form_screen()), on_action=app)
    options = ReplayOptions(timeout=0.3)
    report = replay(store, backend, "form", Values({"name": "John"}), options)
    assert report.outcome is Outcome.DIVERGED
    assert [a.kind for a in backend.performed] == ["click"]
    assert report.divergence is not None and report.divergence.step == 1


def test_the_closest_look_is_the_one_with_fewest_differences() -> None:
    """What a divergence reports: of the looks that did not match, the one with fewest
    differences (a look that could not be checked counts as farthest)."""
    from mmcli.replay.judge import Match, fewer
    from mmcli.screen.fingerprint import Frame
    from mmcli.screen.matcher import Difference, Verdict

    frame = Frame.from_image(form_screen())

    def look(n: int | None) -> Match:
        one = Difference("regions", Rect(0, 0, 4, 4), "changed region (px)", 16, 0)
        return Match(None, None if n is None else Verdict((one,) * n), frame)

    assert fewer(look(1), look(3)) and not fewer(look(3), look(1))
    assert not fewer(look(2), look(2))  # the first found stays
    assert fewer(look(40), look(None)) and not fewer(look(None), look(40))


def striped(text: str = "", offset: tuple[int, int] = (0, 0)):  # type: ignore[no-untyped-def]
    """The synthetic form over a wallpaper of diagonal lines (as Xfce's default is)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (1920, 1080), "#3a6ea5")
    d = ImageDraw.Draw(image)
    for x in range(-1080, 1920, 12):
        d.line([(x, 0), (x + 1080, 1080)], fill="#5b8fc7", width=3)
    ox, oy = 100 + offset[0], 100 + offset[1]
    form = form_screen(text=text, offset=offset).crop((ox, oy, ox + 561, oy + 421))
    image.paste(form, (ox, oy))
    return image


def test_a_window_moved_right_and_down_over_a_patterned_wallpaper_is_relocated() -> None:
    """Shifted back by its window's offset, the live screen drags the wallpaper along and
    brings black strips in at two edges: not the task. Only the task's window is judged."""
    screens = [striped(), striped(), striped(text="John")]
    points = [NAME_FIELD, NAME_FIELD, SUBMIT]
    rec = form_recording()
    rec.steps = [
        replace(s, fingerprint=fp_of(screen, point), window=FORM, thumbnail=f"t-{i:04d}.png")
        for i, (s, screen, point) in enumerate(zip(rec.steps, screens, points, strict=True))
    ]
    rec.area = Rect(100, 100, 561, 421)
    Store().save(rec, {f"t-{i:04d}.png": thumbnail_png(s) for i, s in enumerate(screens)})

    moved = WindowRef("form.Form", FORM.rect.moved(60, 40))

    def app(backend: FakeBackend, action: Action) -> None:
        if action.kind is ActionKind.TYPE:
            backend.screen = striped(text=action.text, offset=(60, 40))

    backend = FakeBackend(striped(offset=(60, 40)), on_action=app)
    backend.window_list = [moved]
    backend.stacked = stacked(moved, focused=moved)
    opts = ReplayOptions(timeout=0.3, relocate=True)
    report = replay(Store(), backend, "form", Values({"name": "John"}), opts)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence
    assert backend.performed[0].point == (NAME_FIELD[0] + 60, NAME_FIELD[1] + 40)


def test_a_few_glyphs_changed_off_the_target_name_the_region_to_leave_out() -> None:
    """An app's gauge in its status bar shows another value than when recorded (jEdit's
    memory, "182/388Mb"): replay refuses, and says which region to leave out if it
    changes on its own; replayed with it left out, the task is done."""
    from PIL import ImageDraw

    from mmcli.screen.fingerprint import Rect as R

    def gauge(backend: FakeBackend, action) -> None:  # type: ignore[no-untyped-def]
        typing_app(backend, action)
        ImageDraw.Draw(backend.screen).text((560, 490), "87", fill="black")

    def screen() -> object:
        image = form_screen()
        ImageDraw.Draw(image).text((560, 490), "87", fill="black")
        return image

    store = Store()
    save_with_screens(store, form_recording())
    backend = FakeBackend(screen(), on_action=gauge)  # type: ignore[arg-type]
    report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(0.3))
    assert report.outcome is Outcome.DIVERGED and report.divergence is not None
    said = report.divergence.next or ""
    assert "changes on its own" in said and "--ignore-region" in said, said
    where = R.parse(said.split("--ignore-region ")[1].split(";")[0])
    assert where.holds(565, 495) and where.w <= 200, where

    backend = FakeBackend(screen(), on_action=gauge)  # type: ignore[arg-type]
    options = ReplayOptions(0.3, ignore=[where])
    report = replay(store, backend, "form", Values({"name": "John"}), options)
    assert report.outcome is Outcome.FROM_MEMORY, report.divergence


def test_a_few_glyphs_in_a_field_the_task_types_into_name_no_region() -> None:
    """Text already in a field a later step types into, away from the step's target
    (Wine's notepad, the page's first line prefilled, the click below it): not a gauge
    to leave out, whatever its size; the same glyphs outside it still are."""
    from PIL import ImageDraw

    from mmcli.model import Landed
    from mmcli.screen.fingerprint import Rect as R

    def screen() -> object:
        image = form_screen()
        ImageDraw.Draw(image).text((560, 490), "87", fill="black")
        return image

    for field, named in ((R(540, 484, 300, 20), False), (R(540, 200, 300, 20), True)):
        rec = form_recording()
        rec.steps[1] = replace(rec.steps[1], landed=Landed("ocr", "{{name}}", field))
        store = Store()
        save_with_screens(store, rec)
        backend = FakeBackend(screen(), on_action=typing_app)  # type: ignore[arg-type]
        report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(0.3))
        assert report.outcome is Outcome.DIVERGED and report.divergence is not None
        said = report.divergence.next or ""
        assert ("--ignore-region" in said) is named, (field, said)


def test_a_change_on_or_near_the_target_or_bigger_than_a_few_glyphs_names_no_region() -> None:
    from PIL import ImageDraw

    from mmcli.screen.matcher import target_rect

    on_target = form_screen()
    ImageDraw.Draw(on_target).text((NAME_FIELD[0] - 6, NAME_FIELD[1] - 6), "87", fill="black")
    # Beside the target's patch, as a hover of its own widget may be drawn past it.
    patch = form_recording().steps[0].fingerprint.patch
    assert patch is not None
    beside = form_screen()
    right = target_rect(patch).right
    ImageDraw.Draw(beside).rectangle(
        [right + 12, NAME_FIELD[1] - 8, right + 18, NAME_FIELD[1] + 8], fill="black"
    )
    for live in (on_target, beside, form_screen(button_color="#ff0000")):
        store = Store()
        save_with_screens(store, form_recording())
        backend = FakeBackend(live, on_action=typing_app)
        report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(0.3))
        assert report.outcome is Outcome.DIVERGED and report.divergence is not None
        assert "--ignore-region" not in (report.divergence.next or "")


def test_a_refusal_tells_the_screen_that_stayed_not_a_redraw_it_passed_through() -> None:
    """The app first redraws a large part of the form, then settles on a screen that
    differs from the recorded one in a few glyphs alone (GIMP redrew its tool options
    after the click, then showed its ruler's pointer mark elsewhere): the refusal names
    those glyphs (and the region to leave out), not the redraw of the first look."""
    from PIL import Image, ImageDraw

    def settled() -> Image.Image:
        image = form_screen(text="John")
        ImageDraw.Draw(image).text((560, 490), "87", fill="black")
        return image

    class Redrawing(FakeBackend):
        until = 0.0  # the redraw shows, still, until then

        def grab(self) -> Frame:
            if time.monotonic() < self.until:
                self.grabs += 1
                redraw = form_screen(text="John")
                ImageDraw.Draw(redraw).rectangle([300, 240, 640, 480], fill="#808080")
                return Frame.from_image(redraw)
            return super().grab()

    def app(backend: Redrawing, action: Action) -> None:
        if action.kind is ActionKind.TYPE:
            backend.screen, backend.until = settled(), time.monotonic() + 0.3

    store = Store()
    save_with_screens(store, form_recording())
    backend = Redrawing(form_screen(), on_action=app)  # type: ignore[arg-type]
    report = replay(store, backend, "form", Values({"name": "John"}), ReplayOptions(1.0))
    assert report.outcome is Outcome.DIVERGED and report.divergence is not None
    assert report.divergence.step == 2, report.divergence
    said = report.divergence.next or ""
    assert "--ignore-region" in said, (report.divergence, said)
