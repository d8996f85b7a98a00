"""`Backend.settle` on the fake backend: with change reports (as X11's DAMAGE gives them)
it waits for the screen to be quiet since its last change and the last input, and no
longer; without reports it samples the screen."""

from __future__ import annotations

import threading
import time

import pytest
from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.backends.base import ChangeLog
from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Frame, Rect, same_picture

QUIET = 0.05


def screen(colour: str = "white") -> Image.Image:
    return Image.new("RGB", (320, 200), colour)


def quiet_backend() -> FakeBackend:
    backend = FakeBackend(screen(), reports=True)
    assert backend.log is not None
    backend.log.changed_at -= 10  # nothing changed lately
    return backend


def timed(backend: FakeBackend, quiet: float = QUIET, limit: float = 5.0) -> tuple[float, bool]:
    started = time.monotonic()
    settled = backend.settle(quiet, limit)
    return time.monotonic() - started, settled.still


def test_a_screen_quiet_for_long_is_still_at_once() -> None:
    backend = quiet_backend()
    took, still = timed(backend)
    assert still and took < QUIET
    assert backend.grabs == 1


def test_settle_waits_quiet_after_the_last_repaint_and_no_longer() -> None:
    backend = quiet_backend()
    backend.repaint(screen("red"))
    took, still = timed(backend)
    assert still and QUIET - 0.005 <= took < QUIET + 0.2


def test_settle_counts_from_the_last_input() -> None:
    backend = quiet_backend()
    backend.move(10, 10)
    took, _ = timed(backend)
    assert took >= QUIET - 0.005
    backend.perform(Action(ActionKind.CLICK, x=5, y=5))
    took, _ = timed(backend)
    assert took >= QUIET - 0.005


def test_settle_counts_from_input_given_elsewhere() -> None:
    backend = quiet_backend()
    started = time.monotonic()
    backend.settle(QUIET, 5.0, since=time.monotonic())
    assert time.monotonic() - started >= QUIET - 0.005


def keep_repainting(backend: FakeBackend, seconds: float) -> threading.Thread:
    def run() -> None:
        until = time.monotonic() + seconds
        colours = ["red", "blue"]
        while time.monotonic() < until:
            backend.repaint(screen(colours[0]))
            colours.reverse()
            time.sleep(0.005)

    backend.repaint(screen("green"))  # under way before the caller settles
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_settle_waits_while_the_screen_keeps_changing() -> None:
    backend = quiet_backend()
    painter = keep_repainting(backend, 0.4)
    started = time.monotonic()
    settled = backend.settle(0.1, 5.0)  # far above the 5 ms between repaints, under load too
    took = time.monotonic() - started
    painter.join()
    assert settled.still and took >= 0.4
    assert backend.log is not None and time.monotonic() - backend.log.changed_at >= 0.1


def test_settle_gives_up_at_its_limit() -> None:
    backend = quiet_backend()
    painter = keep_repainting(backend, 0.5)
    took, still = timed(backend, limit=0.15)
    painter.join()
    assert not still and 0.14 <= took < 0.4


class RepaintsWhileGrabbed(FakeBackend):
    """The app repaints while the first grab is being taken: that frame may be torn."""

    def grab(self) -> Frame:
        frame = super().grab()
        if self.grabs == 1:
            self.repaint(screen("red"))
        return frame


def test_a_change_reported_during_the_grab_means_waiting_again() -> None:
    backend = RepaintsWhileGrabbed(screen(), reports=True)
    assert backend.log is not None
    backend.log.changed_at -= 10
    settled = backend.settle(QUIET, 5.0)
    assert settled.still and backend.grabs == 2
    assert settled.frame.pixels[0, 0, 2] == 255  # red, BGRX


def test_without_reports_two_grabs_quiet_apart_must_agree() -> None:
    backend = FakeBackend(screen())
    assert backend.changes() is None
    settled = backend.settle(QUIET, 5.0)
    assert settled.still and backend.grabs == 2


def test_wait_change_returns_at_the_next_change() -> None:
    log = ChangeLog()
    since = time.monotonic()
    threading.Timer(0.05, log.note).start()
    started = time.monotonic()
    assert log.wait_change(since, started + 5.0)
    assert time.monotonic() - started < 1.0
    assert not log.wait_change(time.monotonic(), time.monotonic() + 0.05)


def test_wait_still_needs_no_grab_with_reports() -> None:
    backend = quiet_backend()
    backend.repaint()
    started = time.monotonic()
    assert backend.wait_still(QUIET, 5.0)
    assert time.monotonic() - started >= QUIET - 0.005
    assert backend.grabs == 0


ZONE = Rect(200, 20, 100, 40)
"""A region the recording learned changes alone (a spinner, a clock)."""


def test_a_change_inside_a_quiet_zone_is_not_a_change() -> None:
    backend = quiet_backend()
    log = backend.log
    assert log is not None
    before = backend.quiet_zones([ZONE])
    assert before == ()
    since, count = log.changed_at, log.count
    log.note(2, [Rect(210, 30, 20, 20), Rect(290, 22, 14, 10)])  # within the zone's margin
    assert (log.changed_at, log.count) == (since, count)
    took, still = timed(backend)
    assert still and took < QUIET


def test_a_change_reaching_out_of_the_zone_or_not_placed_is_a_change() -> None:
    for areas in ([Rect(210, 30, 20, 20), Rect(10, 10, 5, 5)], [Rect(150, 30, 80, 10)], None):
        backend = quiet_backend()
        assert backend.log is not None
        backend.quiet_zones([ZONE])
        since = backend.log.changed_at
        backend.log.note(1, areas)
        assert backend.log.changed_at > since, areas


def test_quiet_zones_are_put_back() -> None:
    backend = quiet_backend()
    backend.quiet_zones([ZONE])
    assert backend.quiet_zones(()) == (ZONE,)
    assert backend.log is not None and backend.log.quiet_zones == ()


def test_sampling_leaves_the_quiet_zones_out() -> None:
    """Without change reports, two grabs that differ only inside a zone agree."""
    a = Frame.from_image(screen())
    spun = screen()
    spun.paste("blue", (220, 28, 260, 52))
    b = Frame.from_image(spun)
    assert not same_picture(a, b)
    assert same_picture(a, b, leave_out=[ZONE])
    assert not same_picture(a, b, leave_out=[Rect(230, 20, 100, 40)])  # covers part of it


# ---- the outcome: still but for a blinking caret --------------------------------------------


def with_caret(on: bool, label: bool = False) -> Image.Image:
    """A field at (100, 50) whose caret is shown or not; `label`: a label drawn beside it."""
    from PIL import ImageDraw

    image = screen()
    draw = ImageDraw.Draw(image)
    draw.rectangle((90, 45, 250, 70), outline="grey")
    if on:
        draw.line((100, 50, 100, 65), fill="black")
    if label:
        draw.rectangle((120, 100, 200, 112), fill="red")
    return image


def blink(
    backend: FakeBackend,
    stop: threading.Event,
    every: float,
    label_at: int = -1,
    area: Rect | None = None,
) -> None:
    """Toggle the caret every `every` seconds until `stop`; from blink `label_at` on, the
    label shows too (another change than a caret's). `area`: where each repaint is
    reported (None: without a place)."""
    n = 0
    while not stop.wait(every):
        n += 1
        image = with_caret(n % 2 == 1, label=0 <= label_at <= n and n % 4 < 2)
        if area is None:
            backend.repaint(image)
        else:
            backend.screen = image.convert("RGB")
            assert backend.log is not None
            backend.log.note(1, [area])


def outcome(
    backend: FakeBackend,
    label_at: int = -1,
    area: Rect | None = None,
    before: float = 0.0,
    quiet: float = 0.5,
    limit: float = 2.0,
) -> tuple[float, bool]:
    """How long `outcome_settle` takes, and whether the screen was still, with the caret
    blinking (`blink`) for `before` seconds before it is asked, and on."""
    from mmcli.capture.settling import outcome_settle

    stop = threading.Event()
    thread = threading.Thread(target=blink, args=(backend, stop, 0.1, label_at, area))
    thread.start()
    try:
        time.sleep(before)
        started = time.monotonic()
        settled = outcome_settle(backend, quiet, limit)
        return time.monotonic() - started, settled.still
    finally:
        stop.set()
        thread.join()


def test_the_outcome_is_still_though_a_caret_blinks() -> None:
    backend = quiet_backend()
    backend.repaint(with_caret(False))
    took, still = outcome(backend)
    assert still and took < 1.5


def test_the_outcome_is_still_though_a_caret_blinks_without_reports() -> None:
    backend = FakeBackend(with_caret(False))
    took, still = outcome(backend)
    assert still and took < 1.5


def test_the_outcome_waits_for_a_change_other_than_a_caret() -> None:
    backend = quiet_backend()
    backend.repaint(with_caret(False))
    took, still = outcome(backend, label_at=0)
    assert not still and took >= 1.9


def test_the_outcome_counts_the_quiet_since_the_last_change() -> None:
    from mmcli.capture.settling import outcome_settle

    backend = quiet_backend()  # nothing changed for 10 s
    started = time.monotonic()
    assert outcome_settle(backend, 0.5, 2.0).still
    assert time.monotonic() - started < 0.25


def test_the_first_change_after_a_moment_and_at_a_point() -> None:
    """`ChangeLog.first_after`: a caret blinking in another field is not a hover effect at
    the pointer; a change reported without an area may be anywhere, so it counts."""
    log = ChangeLog()
    since = time.monotonic()
    assert log.first_after(since) is None
    log.note(1, [Rect(300, 170, 300, 23)])  # a field elsewhere
    elsewhere = log.changed_at
    assert log.first_after(since) == elsewhere
    assert log.first_after(since, (40, 40)) is None
    log.note(1, [Rect(20, 30, 100, 30)])
    at_point = log.changed_at
    assert log.first_after(since, (40, 40)) == at_point
    assert log.first_after(elsewhere) == at_point
    log.note()
    assert log.first_after(at_point, (900, 900)) == log.changed_at


# ---- the outcome: the quiet before the wait, once a blink was seen where ------------------

FIELD = Rect(90, 45, 161, 26)
"""Where the field's caret blink is reported: the whole field, as Tk repaints its entry."""


def outcome_after(
    backend: FakeBackend, area: Rect, before: float = 0.25, quiet: float = 0.6
) -> tuple[float, bool]:
    """`outcome` with each blink reported at `area`, blinking `before` the wait."""
    return outcome(backend, area=area, before=before, quiet=quiet, limit=3.0)


def blinking_backend() -> FakeBackend:
    backend = quiet_backend()
    backend.screen = with_caret(False).convert("RGB")
    backend.input_at = time.monotonic() - 10
    return backend


def test_blinks_before_the_wait_are_told_by_where_the_blink_was_seen() -> None:
    """Counting the quiet from the last blink, the wait would last the whole quiet; once
    a blink is seen, the earlier changes at its place are blinks too."""
    took, still = outcome_after(blinking_backend(), FIELD)
    assert still and took < 0.35


def test_a_change_elsewhere_before_the_wait_still_counts() -> None:
    backend = blinking_backend()
    assert backend.log is not None
    backend.log.note(1, [Rect(120, 100, 81, 13)])  # a label drawn: 0.25 s before the wait
    took, still = outcome_after(backend, FIELD)
    assert still and took >= 0.3


def test_the_quiet_still_counts_from_the_last_input() -> None:
    backend = blinking_backend()
    backend.input_at = time.monotonic()  # the agent's last input: 0.25 s before the wait
    took, still = outcome_after(backend, FIELD)
    assert still and took >= 0.3


def test_a_blink_reported_over_a_taller_area_tells_nothing() -> None:
    """A blink seen with a whole window repainted (as it was) is no caret's area."""
    took, still = outcome_after(blinking_backend(), Rect(0, 0, 320, 200))
    assert still and took >= 0.45


# ---- the screen an action is given on -------------------------------------------------------


def test_a_screen_changed_before_the_action_is_given_is_kept_again() -> None:
    """An app's timed update (Calc's toolbar, half a second after the first key in a
    cell) drawn after the screen was kept and before the action held for it is given:
    the screen the action is given on is kept."""
    from mmcli.capture.settling import as_given, settle

    backend = quiet_backend()
    backend.repaint(with_caret(True))
    backend.log.changed_at -= 10  # type: ignore[union-attr]
    kept = settle(backend, since=0.0, quiet=QUIET)
    backend.repaint(with_caret(True, label=True))  # the update, while the recorder reads
    given = as_given(backend, kept, QUIET)
    assert same_picture(given, Frame.from_image(with_caret(True, label=True)))


def test_a_caret_s_blink_or_no_change_keeps_the_screen_as_kept() -> None:
    from mmcli.capture.settling import as_given, settle

    backend = quiet_backend()
    backend.repaint(with_caret(True))
    backend.log.changed_at -= 10  # type: ignore[union-attr]
    kept = settle(backend, since=0.0, quiet=QUIET)
    grabs = backend.grabs
    assert as_given(backend, kept, QUIET) is kept.frame
    assert backend.grabs == grabs  # nothing reported since: not grabbed again
    backend.repaint(with_caret(False))  # the caret's other phase
    assert as_given(backend, kept, QUIET) is kept.frame
    assert backend.grabs == grabs + 1


def test_a_recording_keeps_the_screen_its_action_was_given_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the recorder: the screen changes while the last typing is read back; the
    step keeps the changed screen, not the one from before the read."""
    from mmcli.capture import recorder as recorder_module
    from mmcli.capture.recorder import Recorder

    backend = FakeBackend(with_caret(True), reports=True)
    reads = 0

    def read_back(*args: object) -> None:
        nonlocal reads
        reads += 1
        if reads == 2:  # the press after the typing: the update comes as it is read
            backend.repaint(with_caret(True, label=True))

    monkeypatch.setattr(recorder_module, "read_back", read_back)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.TYPE, text="5000"))
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
    updated = Frame.from_image(with_caret(True, label=True)).small
    assert (r.captures[1].small == updated).all()
