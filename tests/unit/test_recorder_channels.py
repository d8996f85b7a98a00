"""The recorder's side of the channels: chunks of typed text joined, pastes read from the
clipboard, a button press and release made a drag, `mm act` performed by the recorder."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mmcli.backends.fake import FakeBackend
from mmcli.capture import answers
from mmcli.capture import recorder as recorder_module
from mmcli.capture.recorder import Recorder
from mmcli.capture.steps import build_steps
from mmcli.model import Action, ActionKind
from tests.helpers import form_screen


@pytest.fixture
def rec() -> Iterator[Recorder]:
    backend = FakeBackend(form_screen())
    with Recorder(backend, learn=False) as r:
        yield r


def send(r: Recorder, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    replies = []
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(r.channel.socket_path)
        f = s.makefile("rwb")
        for m in messages:
            f.write(json.dumps(m).encode() + b"\n")
            f.flush()
            replies.append(json.loads(f.readline()))
    return replies


def act(**action: Any) -> dict[str, Any]:
    return {"op": "act", "action": action}


def kinds(r: Recorder) -> list[str]:
    return [str(c.action.kind) for c in r.captures]


def test_text_typed_in_chunks_is_one_step_and_a_param_in_it_is_found(rec: Recorder) -> None:
    said: list[tuple[int, str]] = []
    rec.on_action = lambda i, a, note: said.append((i, a.describe()))
    send(rec, act(kind="click", x=300, y=185), act(kind="type", text="Ada Lo"))
    send(rec, act(kind="type", text="velace"), act(kind="type", text=" <ada@x.org>"))
    send(rec, act(kind="press", keys=["enter"]), act(kind="type", text="next"))
    rec.finish()
    assert kinds(rec) == ["click", "type", "press", "type"]
    assert rec.captures[1].action.text == "Ada Lovelace <ada@x.org>"
    assert said == [
        (0, "click at (300, 185)"),
        (1, "type 'Ada Lovelace <ada@x.org>'"),  # said once, whole: never a secret's piece
        (2, "press enter"),
        (3, "type 'next'"),
    ]
    built = build_steps(rec.captures, None, {"name": "Ada Lovelace"}, 0, None, [])
    assert built.steps[1].action.text == "{{name}} <ada@x.org>"


def test_text_that_left_its_field_ends_its_step(rec: Recorder) -> None:
    """Cells filled by calls of their own (`write('12\\n')` after `write('7\\n')`): each
    call's text is a step of its own, checked before it is typed."""
    send(rec, act(kind="click", x=300, y=185), act(kind="type", text="7\n"))
    send(rec, act(kind="type", text="12\t"), act(kind="type", text="Ada "))
    send(rec, act(kind="type", text="Lovelace\n"))
    rec.finish()
    assert [c.action.text for c in rec.captures[1:]] == ["7\n", "12\t", "Ada Lovelace\n"]


def test_click_and_scroll_without_a_point_act_at_the_pointer(rec: Recorder) -> None:
    rec.backend.move(42, 43)
    send(rec, act(kind="click", button="right", clicks=1), act(kind="scroll", amount=-3))
    assert [c.action.point for c in rec.captures] == [(42, 43), (42, 43)]
    assert rec.captures[0].action.button == "right"


def test_a_pointer_already_on_target_is_not_moved(rec: Recorder) -> None:
    # A move is input: the screen would have to be still for 20 ms after it again.
    rec.backend.move(42, 43)
    moved_at = rec.backend.input_at
    send(rec, act(kind="click", button="left"), act(kind="click", x=42, y=43, clicks=2))
    send(rec, {"op": "button", "state": "down", "button": "left"})
    assert rec.backend.input_at == moved_at
    assert [c.action.point for c in rec.captures] == [(42, 43), (42, 43)]


def test_press_and_release_elsewhere_is_a_drag_captured_before_the_press(rec: Recorder) -> None:
    send(rec, {"op": "button", "state": "down", "button": "left", "x": 100, "y": 110})
    rec.backend.move(200, 210)  # the agent's own mousemove, in another xdotool
    send(rec, act(kind="move", x=200, y=210), {"op": "button", "state": "up", "button": "left"})
    rec.finish()
    assert [c.action for c in rec.captures] == [
        Action(ActionKind.DRAG, x=100, y=110, x2=200, y2=210, button="left")
    ]
    assert not rec.unsupported


def test_press_and_release_in_place_is_a_click(rec: Recorder) -> None:
    send(rec, {"op": "button", "state": "down", "button": "left", "x": 7, "y": 8})
    send(rec, {"op": "button", "state": "up", "button": "left", "x": 7, "y": 8})
    assert [c.action for c in rec.captures] == [Action(ActionKind.CLICK, x=7, y=8)]


def test_the_screen_is_kept_with_the_pointer_on_target_and_the_pointer_put_back(
    rec: Recorder,
) -> None:
    # The agent's own input then moves the pointer: `xdotool mousemove --sync` waits
    # for a move, and would wait out its timeout on a pointer already there.
    rec.backend.move(5, 6)
    send(rec, act(kind="click", x=300, y=185))
    send(rec, {"op": "button", "state": "down", "button": "left", "x": 100, "y": 110})
    assert rec.held is not None
    assert [c.pointer for c in [*rec.captures, rec.held]] == [(300, 185), (100, 110)]
    assert rec.backend.pointer() == (5, 6)


def test_a_button_left_held_or_released_unpressed_is_unsupported(rec: Recorder) -> None:
    send(rec, {"op": "button", "state": "up", "button": "left"})
    send(rec, {"op": "button", "state": "down", "button": "left"})
    rec.finish()
    assert len(rec.unsupported) == 2 and not rec.captures


def test_a_paste_is_recorded_as_the_clipboard_text(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    rec.on_action = lambda i, a, note: said.append(f"{a.describe()} ({note})")
    monkeypatch.setattr(recorder_module, "read_clipboard", lambda: "Zoë Ada")
    send(rec, act(kind="type", text="Name: "), act(kind="hotkey", keys=["ctrl", "v"]))
    send(rec, act(kind="hotkey", keys=["shift", "insert"]))
    rec.finish()
    assert [c.action for c in rec.captures] == [
        Action(ActionKind.TYPE, text="Name: Zoë AdaZoë Ada")
    ]
    assert said == ["type 'Name: Zoë AdaZoë Ada' (pasted from the clipboard)"]


def test_a_paste_of_an_empty_clipboard_stays_a_chord_with_a_warning(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    warnings: list[str] = []
    rec.on_warning = warnings.append
    monkeypatch.setattr(recorder_module, "read_clipboard", lambda: None)
    send(rec, act(kind="hotkey", keys=["ctrl", "v"]))
    assert [c.action for c in rec.captures] == [Action(ActionKind.HOTKEY, keys=("ctrl", "v"))]
    assert "clipboard is empty" in warnings[0]


def test_perform_records_then_acts_through_the_recorder_backend(rec: Recorder) -> None:
    assert send(rec, {"op": "perform", "action": {"kind": "click", "x": 5, "y": 6}}) == [
        {"ok": True}
    ]
    assert kinds(rec) == ["click"]
    assert rec.backend.performed == [Action(ActionKind.CLICK, x=5, y=6)]  # type: ignore[attr-defined]
    assert rec.backend.pointer() == (5, 6)  # acted for here: no need to put it back


def test_the_agent_gets_a_recording_xdotool_first_on_path(rec: Recorder) -> None:
    first = rec.env()["PATH"].split(":")[0]
    shim = f"{first}/xdotool"
    with open(shim) as f:
        assert "_mm_xdotool" in f.read()


def test_the_recording_xdotool_reports_then_runs_the_real_one_with_its_output_and_code(
    rec: Recorder, tmp_path: Path
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    log = tmp_path / "ran"
    (real / "xdotool").write_text(f'#!/bin/sh\necho "$@" >> {log}\necho "X=1"\nexit 3\n')
    (real / "xdotool").chmod(0o755)
    env = {**os.environ, **rec.env()}
    env["PATH"] = env["PATH"].split(":")[0] + f":{real}:/usr/bin:/bin"
    done = subprocess.run(
        ["xdotool", "mousemove", "--sync", "5", "6", "click", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert (done.returncode, done.stdout) == (3, "X=1\n"), done.stderr
    assert log.read_text() == "mousemove --sync 5 6 click 1\n"
    assert [c.action for c in rec.captures] == [Action(ActionKind.CLICK, x=5, y=6)]

    done = subprocess.run(["xdotool", "getmouselocation"], env=env, capture_output=True)
    assert done.returncode == 3 and len(rec.captures) == 1  # passed through, unrecorded


# ---- the screen kept once the app has answered the last input --------------------------


def _later(backend: FakeBackend, *paints: tuple[float, Any]) -> None:
    """Repaint `backend` with each screen after its delay (s), as an app answers late; a
    first delay of 0 is drawn at once, here (a thread's start can take tens of ms on a
    loaded machine, which the waits under test would learn as the app's pace)."""
    import threading
    import time

    while paints and paints[0][0] == 0:
        backend.repaint(paints[0][1])
        paints = paints[1:]

    def run() -> None:
        start = time.monotonic()
        for delay, screen in paints:
            time.sleep(max(start + delay - time.monotonic(), 0))
            backend.repaint(screen)

    threading.Thread(target=run, daemon=True).start()


def _small(screen: Any) -> Any:
    from mmcli.screen.fingerprint import Frame

    return Frame.from_image(screen).small


def test_a_late_answer_to_a_key_is_waited_for() -> None:
    """Calc draws the cell Tab went to 80-110 ms after the key: an agent's next action
    10 ms after the key must find that screen kept, not the one before the key."""
    backend = FakeBackend(form_screen(), reports=True)
    answered = form_screen(text="moved on")
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        _later(backend, (0.08, answered))
        r.capture(Action(ActionKind.TYPE, text="x"))
    assert (r.captures[1].small == _small(answered)).all()


def test_an_answer_to_keys_drawn_in_stages_is_waited_for_whole() -> None:
    """Typed text drawn in its cell at once and in the input line 40 ms later."""
    from PIL import Image, ImageDraw

    screen = Image.new("RGB", (320, 200), "white")  # small: a grab takes 1 ms, not 30
    cell, whole = screen.copy(), screen.copy()
    ImageDraw.Draw(cell).rectangle([40, 120, 80, 130], fill="black")
    ImageDraw.Draw(whole).rectangle([40, 120, 80, 130], fill="black")
    ImageDraw.Draw(whole).rectangle([40, 40, 80, 50], fill="black")
    backend = FakeBackend(screen, reports=True)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.TYPE, text="Ann"))
        _later(backend, (0.005, cell), (0.045, whole))
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
    assert (r.captures[1].small == _small(whole)).all()


def test_typed_text_drawn_past_the_answer_wait_is_waited_for() -> None:
    """Wine's notepad over VNC on a loaded machine drew the typed text after
    `ANSWER_WAIT`, a caret's blink first: the next step is kept with the text shown."""
    from PIL import Image, ImageDraw

    screen = Image.new("RGB", (320, 200), "white")
    blink, typed = screen.copy(), screen.copy()
    ImageDraw.Draw(blink).line([20, 40, 20, 52], fill="black")
    ImageDraw.Draw(typed).rectangle([20, 40, 120, 52], fill="black")
    backend = FakeBackend(screen, reports=True)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.TYPE, text="Ada Lovelace"))
        _later(backend, (0.05, blink), (answers.ANSWER_WAIT + 0.2, typed))
        r.capture(Action(ActionKind.HOTKEY, keys=["ctrl", "s"]))
    assert (r.captures[1].small == _small(typed)).all()


def _screens(n: int) -> list[Any]:
    """`n` small screens (a grab takes 1 ms), each with one more bar of 'text' drawn."""
    from PIL import Image, ImageDraw

    screen = Image.new("RGB", (320, 200), "white")
    out = []
    for i in range(n):
        screen = screen.copy()
        ImageDraw.Draw(screen).rectangle([20 + 30 * i, 40, 40 + 30 * i, 52], fill="black")
        out.append(screen)
    return out


def _waits(
    backend: FakeBackend, monkeypatch: pytest.MonkeyPatch, starts: list[float] | None = None
) -> list[float]:
    """The timeouts the recorder waits for an answer with (the wait itself still runs);
    `starts`: filled with the moment each wait looks for a change after."""
    waited: list[float] = []
    wait = backend.wait_change

    def spy(since: float, timeout: float) -> None:
        waited.append(timeout)
        if starts is not None:
            starts.append(since)
        wait(since, timeout)

    monkeypatch.setattr(backend, "wait_change", spy)
    return waited


def _key(r: Recorder, backend: FakeBackend, screen: Any | None) -> None:
    """A key (or a button) as the input watch sees it: its press, what the app draws at
    once (None: nothing), its release."""
    r.note_activity(pressed=True)
    if screen is not None:
        backend.repaint(screen)
    r.note_activity()


def test_a_key_answered_before_its_release_is_not_waited_on_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An app draws a typed letter before the key is released: the next change after the
    release is the caret's blink, 0.25 s away. The answer is looked for from the press
    (the wait for it starts there, and the letter drawn since ends it), not from the
    release."""
    import time

    first, typed = _screens(2)
    backend = FakeBackend(first, reports=True)
    looked: list[float] = []
    _waits(backend, monkeypatch, looked)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.TYPE, text="a"))
        r.note_activity(pressed=True)
        pressed = time.monotonic()
        backend.repaint(typed)
        r.note_activity()
        looked.clear()
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
    assert (r.captures[1].small == _small(typed)).all()
    assert looked and looked[0] <= pressed  # from the press, before the letter was drawn


@pytest.mark.parametrize("late", [0.0, 0.1], ids=["answered-at-once", "answered-late"])
def test_keys_that_change_nothing_wait_as_long_as_the_app_has_needed(
    late: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An app that answered Tab at once twice is waited on for `ANSWER_FLOOR` when a Tab
    changes nothing, not for `ANSWER_WAIT`; one that answered it ~100 ms late (Calc
    draws the cell a Tab went to then) still gets all of `ANSWER_WAIT`."""
    screens = _screens(3)
    backend = FakeBackend(screens[0], reports=True)
    waited = _waits(backend, monkeypatch)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        for screen in (*screens[1:], None):
            _key(r, backend, None)
            if screen is not None:
                _later(backend, (late, screen))
            r.capture(Action(ActionKind.PRESS, keys=["tab"]))
    assert (r.captures[2].small == _small(screens[2])).all()
    if late:
        assert waited[-1] > answers.ANSWER_WAIT - 0.05
    else:
        # Learned from two answers drawn "at once" (a thread's repaint: a few ms, more on
        # a loaded machine): the third wait is what they needed, not the whole wait.
        slowest = r.waits.answer_times().slowest[ActionKind.PRESS, ""]
        assert [w > answers.ANSWER_FLOOR for w in waited[:2]] == [True, True]
        assert waited[2] <= max(answers.ANSWER_FLOOR, answers.ANSWER_MARGIN * slowest) + 1e-3
        assert waited[2] < answers.ANSWER_WAIT - 0.05


def test_an_answer_is_looked_for_after_the_last_action_not_an_earlier_press() -> None:
    """The press the answer is looked for from is that of the action captured last: an
    earlier action's press (already answered) would find that old answer and keep the
    screen before the late one. Here the last action's input came without a press the
    watch saw (a channel's report alone), so it is looked for from that report."""
    screens = _screens(3)
    backend = FakeBackend(screens[0], reports=True)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        _key(r, backend, screens[1])
        r.capture(Action(ActionKind.TYPE, text="x"))
        r.note_activity()
        _later(backend, (0.12, screens[2]))
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
    assert (r.captures[1].small == _small(screens[1])).all()
    assert (r.captures[2].small == _small(screens[2])).all()


def test_a_caret_blinking_after_a_key_that_did_nothing_is_not_an_answer() -> None:
    import time

    from PIL import ImageDraw

    screens = _screens(3)
    blink = screens[2].copy()
    ImageDraw.Draw(blink).rectangle([150, 70, 151, 86], fill="black")  # a caret, on
    backend = FakeBackend(screens[0], reports=True)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        for screen in screens[1:]:
            _key(r, backend, screen)
            r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        learned = dict(r.waits.answer_times().slowest)
        _key(r, backend, None)
        time.sleep(0.01)  # slower than any answer yet: it would raise the limit
        backend.repaint(blink)
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        assert r.waits.answer_times().slowest == learned
        _key(r, backend, None)
        time.sleep(0.01)
        backend.repaint(screens[0])  # a key that did something is learned
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        assert r.waits.answer_times().slowest[ActionKind.PRESS, ""] >= 0.01


def test_telling_an_answer_from_a_blink_is_done_after_the_agent_has_its_reply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Comparing two whole screens at full resolution takes a few ms: the capture returns
    without it, and the next capture reads the times only once it is done."""
    import threading
    import time

    screens = _screens(3)
    backend = FakeBackend(screens[0], reports=True)
    judging = threading.Event()
    compared: list[float] = []

    def slow_beyond(*args: Any, **kwargs: Any) -> bool:
        judging.wait(5)
        compared.append(time.monotonic())
        return True

    monkeypatch.setattr(answers, "beyond_carets", slow_beyond)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        _key(r, backend, screens[1])
        started = time.monotonic()
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))
        assert time.monotonic() - started < 2  # not held for the comparison (5 s)
        assert compared == []
        threading.Timer(0.2, judging.set).start()
        _key(r, backend, screens[2])
        r.capture(Action(ActionKind.PRESS, keys=["tab"]))  # waits for the first to be told
        assert len(compared) >= 1
        assert r.waits.answer_times().seen[ActionKind.PRESS, ""] == 2


def test_a_click_answered_at_its_press_is_not_waited_on_after_its_release(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A focus change is drawn at the press: nothing follows the release. Twice answered
    at once, a click that changes nothing is waited on for `ANSWER_FLOOR`."""
    screens = _screens(3)
    backend = FakeBackend(screens[0], reports=True)
    waited = _waits(backend, monkeypatch)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.CLICK, x=5, y=5))  # the pointer's move: its hover wait
        for screen in (*screens[1:], None):
            _key(r, backend, screen)  # the button's press, the focus drawn, the release
            r.capture(Action(ActionKind.CLICK, x=5, y=5))
    assert [w > answers.ANSWER_FLOOR for w in waited[1:]] == [True, True, False]


def _hover_on_move(backend: FakeBackend, monkeypatch: pytest.MonkeyPatch, *later: Any) -> None:
    """At each pointer move, the app draws the next of `later` (a screen after a delay in
    seconds, or None: no hover effect), as a browser draws a hover on its next frame."""
    moves = iter(later)
    move = backend.move

    def hover(x: int, y: int) -> None:
        move(x, y)
        drawn = next(moves)
        if drawn is not None:
            _later(backend, drawn)

    monkeypatch.setattr(backend, "move", hover)


def test_a_hover_drawn_late_is_in_the_screen_kept_before_the_click(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Firefox drew a button's hover 20-40 ms after the pointer's move: kept without it,
    every replay (which sees it) diverged on that button."""
    first, hovered = _screens(2)
    backend = FakeBackend(first, reports=True)
    _hover_on_move(backend, monkeypatch, (0.03, hovered))
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.CLICK, x=30, y=45))
    assert (r.captures[0].small == _small(hovered)).all()


def test_an_agents_own_move_is_given_its_hover_too() -> None:
    """`xdotool mousemove X Y` then `xdotool click 1`: the click's screen has the hover the
    move drew."""
    first, hovered = _screens(2)
    backend = FakeBackend(first, reports=True)
    with Recorder(backend, learn=False) as r:
        r.capture(Action(ActionKind.MOVE, x=30, y=45))
        backend.move(30, 45)
        r.note_activity()
        _later(backend, (0.03, hovered))
        r.capture(Action(ActionKind.CLICK, x=30, y=45))
    assert (r.captures[1].small == _small(hovered)).all()


def test_an_app_that_drew_its_hover_effects_at_once_is_not_waited_on_for_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Twice drawn at once: the third target is waited on for `HOVER_FLOOR`; a target
    with no hover effect before that costs the whole `HOVER_WAIT`."""
    screens = _screens(4)
    backend = FakeBackend(screens[0], reports=True)
    _hover_on_move(backend, monkeypatch, None, (0.0, screens[1]), (0.0, screens[2]), None)
    waited = _waits(backend, monkeypatch)
    # "At once" is as fast as this machine drew it: a few ms idle, near 20 ms on a
    # starved one. The wait learned from it is what is checked, not a figure.
    noted: list[float] = []
    note = answers.AnswerTimes.note

    def spy(self: answers.AnswerTimes, key: tuple[ActionKind, str], seconds: float) -> None:
        if key[0] is ActionKind.MOVE:  # a hover, not an answer to the click
            noted.append(seconds)
        note(self, key, seconds)

    monkeypatch.setattr(answers.AnswerTimes, "note", spy)
    with Recorder(backend, learn=False) as r:
        for x in (30, 60, 90, 120):
            r.capture(Action(ActionKind.MOVE, x=5, y=5))
            r.capture(Action(ActionKind.CLICK, x=x, y=45))
    assert waited[0] > answers.HOVER_WAIT - 0.03  # no hover: the whole wait
    assert len(noted) == 2
    learned = min(answers.HOVER_WAIT, max(answers.HOVER_FLOOR, answers.ANSWER_MARGIN * max(noted)))
    assert waited[-1] <= learned + 0.002


def test_a_hover_drawn_later_than_the_first_ones_is_still_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chromium drew two hovers at once, then, with the CPU busy, the Save button's 25 ms
    after the move: a wait learned as 3x the two (20 ms) kept the screen without it."""
    screens = _screens(4)
    backend = FakeBackend(screens[0], reports=True)
    _hover_on_move(backend, monkeypatch, (0.0, screens[1]), (0.0, screens[2]), (0.025, screens[3]))
    with Recorder(backend, learn=False) as r:
        for x in (30, 60, 90):
            r.capture(Action(ActionKind.MOVE, x=5, y=5))
            r.capture(Action(ActionKind.CLICK, x=x, y=45))
    assert (r.captures[-1].small == _small(screens[3])).all()


@pytest.mark.parametrize(
    ("first", "then", "pause", "most"),
    [(Action(ActionKind.PRESS, keys=["tab"]), Action(ActionKind.TYPE, text="x"), 0.3, 0.0),
     (Action(ActionKind.TYPE, text="ab"), Action(ActionKind.TYPE, text="cd"), 0.0, 0.0),
     (Action(ActionKind.MOVE, x=5, y=5), Action(ActionKind.CLICK, x=9, y=9), 0.0,
      answers.HOVER_WAIT)],
    ids=["after-the-agent-thought", "text-after-text", "after-a-move"],
)  # fmt: skip
def test_no_answer_is_waited_for_where_none_is_due(
    first: Action, then: Action, pause: float, most: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent that thought longer than `ANSWER_WAIT` is captured at once; text typed
    right after text joins the step before; a pointer move has no answer to wait for but
    the hover effect it may draw (`HOVER_WAIT`, not `ANSWER_WAIT`)."""
    import time

    backend = FakeBackend(form_screen(), reports=True)
    waited = _waits(backend, monkeypatch)
    with Recorder(backend, learn=False) as r:
        r.capture(first)
        time.sleep(pause)
        r.capture(then)
    assert all(w <= most for w in waited) and (most or not waited)


def test_full_resolution_detail_is_kept_after_typing_within_its_budget(
    rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What each screen changed is kept at full resolution once the task has typed (an
    echo of the text is looked for there), and no more once the recording's budget is
    spent."""
    from PIL import ImageDraw

    backend = rec.backend
    assert isinstance(backend, FakeBackend)

    def draw(y: int) -> None:
        screen = backend.screen.copy()
        ImageDraw.Draw(screen).rectangle([600, y, 700, y + 20], fill="white")
        backend.repaint(screen)

    send(rec, act(kind="click", x=300, y=185))
    draw(300)
    send(rec, act(kind="type", text="Ada"))
    draw(340)
    send(rec, act(kind="click", x=160, y=415))
    monkeypatch.setattr(rec.details, "left", 1)
    draw(380)
    send(rec, act(kind="click", x=160, y=300))
    draw(420)
    send(rec, act(kind="click", x=160, y=350))
    details = [c.changed for c in rec.captures]
    assert details[:2] == [None, None]  # nothing typed yet
    assert details[2] is not None and details[3] is not None  # the last one spent it
    assert rec.captures[2].typed is details[2]  # one typing action: what it changed, once
    assert details[4] is None
    (rect, luma), *_ = details[2].pieces
    assert luma.shape == (rect.h, rect.w) and rect.y <= 340 < rect.bottom


def test_a_second_press_is_held_past_the_first_change_until_the_dialog_closed() -> None:
    """Over VNC the first change after a click on a dialog's OK may be the button drawn
    pressed (8 ms), and the dialog gone only with the next (60 ms): the press that would
    make a double click is told apart from the first on the screen that answered it."""
    import threading
    import time
    from types import SimpleNamespace

    from PIL import ImageDraw

    from mmcli.screen.fingerprint import Frame

    dialog = form_screen(popup=True)
    pressed = dialog.copy()
    ImageDraw.Draw(pressed).rectangle([371, 341, 429, 364], fill="#a0a0a0")
    backend = FakeBackend(dialog, reports=True)
    recorder = Recorder(backend, learn=False)
    kept = SimpleNamespace(small=Frame.from_image(dialog).small)

    def answer() -> None:
        time.sleep(0.008)
        backend.repaint(pressed)
        time.sleep(0.06)
        backend.repaint(form_screen())

    backend.input_at = time.monotonic()  # the first click
    threading.Thread(target=answer, daemon=True).start()
    assert recorder.window_changed(kept, (400, 352))  # type: ignore[arg-type]

    backend.repaint(pressed)  # a double click on a button that opens nothing: not apart
    backend.input_at = time.monotonic()
    start = time.monotonic()
    threading.Thread(target=lambda: backend.repaint(dialog), daemon=True).start()
    assert not recorder.window_changed(kept, (400, 352))  # type: ignore[arg-type]
    assert time.monotonic() - start < recorder_module.APART_WAIT + 0.15
