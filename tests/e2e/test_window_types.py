"""A new window is judged by what it is and where it is (openbox, the real `mm`).

The example agent records the loan form on a desktop with a window manager; each replay
then runs with a window opened over the form by another program, as the window system
tells it (`tests/e2e/notifier.py`, its EWMH type set before it is mapped):

- a notification (override-redirect, `_NET_WM_WINDOW_TYPE_NOTIFICATION`, another app's
  class) over the form but over none of its targets or typed fields: left out of each
  check, the record entered from memory (exit 0). Without the rule this replay diverges
  at its first step (exit 3). One still there after the last action is left out of the
  outcome's check too when it covers nothing that action changed when recorded (exit 0,
  where it was flagged, exit 6);
- the same notification over the Submit button, or only over the 64 x 64 px around the
  point Submit is clicked at: refused at that step, nothing submitted (the window
  system says the window covers the target; over the point itself, the target's pixels
  say so too);
- a dialog-type window transient for the form (the window manager keeps it above the
  form), or a notification transient for the form, at the place of the first: refused
  at the first step, nothing typed;
- another app's normal window over the form's edge: refused (exit 3); the same window
  once the form was raised over it: what shows of it beside the form is left out (exit 0);
- dunst's own notification over the form's title bar and heading: left out (exit 0);
- a notification that stays over the status line Submit's outcome shows in: never left
  out, seen under, from each window's own pixels (a compositing manager's, or the
  server's at mm's asking): the saved record's outcome is done (exit 0), a failed
  upload's error under it is not (exit 6);
- a notification over the middle of the Name field, right of the typed name: left out
  of each check; the name read back by OCR under it, in the form's own pixels, where a
  compositing manager keeps them (verified), else "not verified" (covered);
- a notification far away that takes the X input focus itself: no key is sent (exit 3).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from tests.desktop import need
from tests.e2e.conftest import WANTED, LoanApp, agent_command, loan_recorded, mm

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BESIDE_THE_FIELDS = (390, 10, 160, 100)
"""Over the form (client coordinates): the heading's right half and the right ends of
the Name and Email fields, away from every click target and from the typed text."""
OVER_SUBMIT = (-60, -20, 200, 50)
"""Over the Submit button (relative to the point it is clicked at)."""
BESIDE_SUBMIT = (18, -10, 120, 40)
"""Over the right end of the Submit button: within 32 px of the point it is clicked at,
not over the point."""
BY_THE_HEADING = (330, 2, 200, 36)
"""Over the form right of its heading, above the fields: nothing there changes when the
record is submitted (the fields clear, the status line says so)."""


@pytest.fixture(scope="module")
def recorded(
    desktop: Desktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LoanApp, Path]]:
    """The loan task recorded once by the example agent, in a store of its own."""
    with loan_recorded(tmp_path_factory.mktemp("types")) as recorded:
        yield recorded


def _open(
    app: LoanApp,
    place: tuple[int, int, int, int],
    *flags: str,
    origin: tuple[int, int] | None = None,
) -> subprocess.Popen[bytes]:
    """A window at `place` relative to `origin` (by default the corner of the form's
    client area), on the screen when this returns."""
    if origin is None:
        form = json.loads(app.layout.read_text())["windows"][0]
        origin = (form["x"], form["y"])
    x, y, w, h = place
    ready = app.workdir / "notifier-ready"
    ready.unlink(missing_ok=True)
    at = f"{origin[0] + x},{origin[1] + y},{w},{h}"
    argv = [sys.executable, "-m", "tests.e2e.notifier", "--at", at, "--ready", str(ready)]
    window = subprocess.Popen([*argv, *flags], cwd=ROOT)
    deadline = time.monotonic() + 20
    while not ready.exists():
        assert window.poll() is None and time.monotonic() < deadline, "no window appeared"
        time.sleep(0.05)
    time.sleep(0.5)  # the window manager has placed and drawn what it manages
    return window


def _replay(store: Path) -> subprocess.CompletedProcess[str]:
    return mm("--store", str(store), "replay", "loan", "--no-agent", "--timeout", "5", "--json")


def _stop(window: subprocess.Popen[bytes]) -> None:
    if window.poll() is None:
        window.terminate()
    window.wait(timeout=10)


def test_a_notification_over_no_target_is_left_out(
    desktop: Desktop, recorded: tuple[LoanApp, Path]
) -> None:
    app, store = recorded
    app.start()
    before = len(app.records())
    card = _open(
        app, BESIDE_THE_FIELDS, "--kind", "NOTIFICATION", "--override",
        "--until-grows", str(app.out),
    )  # fmt: skip
    try:
        result = _replay(store)
    finally:
        _stop(card)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "from-memory"
    assert "a notification window ('notifier.Notifier'" in result.stderr
    assert "left out of the check" in result.stderr
    records = app.records()
    assert len(records) == before + 1
    assert {k: str(records[-1][k]) for k in WANTED} == WANTED


def test_a_notification_still_there_at_the_end_is_left_out(
    desktop: Desktop, recorded: tuple[LoanApp, Path]
) -> None:
    """The notification stays past the last action, beside what Submit changed: the
    outcome is judged without it (exit 0; without the rule, exit 6)."""
    app, store = recorded
    app.start()
    before = len(app.records())
    card = _open(app, BY_THE_HEADING, "--kind", "NOTIFICATION", "--override")
    try:
        result = _replay(store)
    finally:
        _stop(card)
    records = app.records()
    assert len(records) == before + 1
    assert {k: str(records[-1][k]) for k in WANTED} == WANTED
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "from-memory"


def test_another_apps_window_beside_the_form_is_left_out(
    desktop: Desktop, recorded: tuple[LoanApp, Path]
) -> None:
    """A normal window of another program just right of the form's frame, by the Name
    field (within the task area's margin, over no part of the form): it hides nothing of
    the task, and the click into the form raises the form over nothing. Without the rule
    this replay diverged at its first step (exit 3)."""
    app, store = recorded
    app.start()
    before = len(app.records())
    form = json.loads(app.layout.read_text())["windows"][0]
    name = app.widgets()["Name"]
    beside = (form["w"] + 40, name["y"] - form["y"], 120, 60)
    window = _open(app, beside, "--kind", "NORMAL")
    try:
        result = _replay(store)
    finally:
        _stop(window)
    assert result.returncode == 0, result.stderr
    assert "a normal window ('notifier.Notifier'" in result.stderr
    assert "left out of the check" in result.stderr
    records = app.records()
    assert len(records) == before + 1
    assert {k: str(records[-1][k]) for k in WANTED} == WANTED


def _over_the_edge(app: LoanApp) -> tuple[int, subprocess.Popen[bytes]]:
    """The form started, and another app's normal window over its right edge by the Name
    field: the records submitted so far, and the window."""
    app.start()
    before = len(app.records())
    form = json.loads(app.layout.read_text())["windows"][0]
    name = app.widgets()["Name"]
    over_edge = (form["w"] - 40, name["y"] - form["y"], 120, 60)
    return before, _open(app, over_edge, "--kind", "NORMAL")


def test_another_apps_window_over_the_form_s_edge_is_refused(
    desktop: Desktop, recorded: tuple[LoanApp, Path]
) -> None:
    """The same window over the form's right edge: over the task, so the pixels judge it
    (a normal window is not left out there): refused, nothing submitted."""
    app, store = recorded
    before, window = _over_the_edge(app)
    try:
        result = _replay(store)
    finally:
        _stop(window)
    assert result.returncode == 3, result.stderr
    assert len(app.records()) == before


def test_another_apps_window_under_the_form_s_edge_is_left_out_where_it_shows(
    desktop: Desktop, recorded: tuple[LoanApp, Path]
) -> None:
    """The same window over the form's right edge, then the form raised over it (as an
    app's dialog opens over a small window in a corner): it hides nothing of the form,
    and what shows of it beside the form is left out. Without the rule this replay
    diverged at its first step (exit 3)."""
    app, store = recorded
    before, window = _over_the_edge(app)
    try:
        assert app.process is not None
        found = subprocess.run(
            ["xdotool", "search", "--sync", "--pid", str(app.process.pid), "--name", "Acme Loan"],
            capture_output=True, text=True, check=True, timeout=20,
        )  # fmt: skip
        wid = found.stdout.split()[0]
        subprocess.run(["xdotool", "windowactivate", "--sync", wid], check=True, timeout=20)
        time.sleep(0.5)  # the window manager has restacked and the form redrawn
        result = _replay(store)
    finally:
        _stop(window)
    assert result.returncode == 0, result.stderr
    assert "a normal window ('notifier.Notifier'" in result.stderr
    records = app.records()
    assert len(records) == before + 1
    assert {k: str(records[-1][k]) for k in WANTED} == WANTED


def _status(app: LoanApp) -> dict[str, int]:
    """The status line's place, where Submit's outcome shows ("Saved ...")."""
    layout = json.loads(app.layout.read_text())
    (status,) = [w for w in layout["windows"][0]["widgets"] if w["id"] == "status"]
    return {k: int(status[k]) for k in "xywh"}


def _over_the_status_line(app: LoanApp) -> tuple[int, int, int, int]:
    """Over the middle of the status line."""
    status = _status(app)
    return (status["x"] + status["w"] // 3, status["y"] - 10, status["w"] // 3, 40)


def _replay_under_a_card(
    app: LoanApp, store: Path, place: tuple[int, int, int, int], *flags: str
) -> subprocess.CompletedProcess[str]:
    """The task replayed (step timeout 2 s) with a notification at `place` on the screen
    until the replay ends."""
    card = _open(app, place, "--kind", "NOTIFICATION", "--override", *flags, origin=(0, 0))
    try:
        return mm(
            "--store", str(store), "replay", "loan", "--no-agent", "--timeout", "2", "--json"
        )  # fmt: skip
    finally:
        _stop(card)


def _over_the_whole_status_bar(app: LoanApp) -> tuple[int, int, int, int]:
    """Over all of the status line and past its ends."""
    status = _status(app)
    return (status["x"] - 6, status["y"] - 6, status["w"] + 12, status["h"] + 12)


@pytest.mark.parametrize("upload", ["saved", "failed"])
@pytest.mark.parametrize("compositor", ["xcompmgr", "none"])
def test_a_notification_over_the_outcome_is_seen_under(
    desktop: Desktop, recorded: tuple[LoanApp, Path], upload: str, compositor: str
) -> None:
    """A notification that stays over the whole status line, where Submit's outcome
    shows: it may hide the app's error, so it is never left out. Each window's own pixels
    are kept whole, also where another window covers them, by a compositing manager
    (xcompmgr) or, with none (openbox alone), by the server at mm's asking: the outcome is
    seen under the notification. The record saved, it is the recorded outcome (exit 0 at
    once; before, exit 6 after waiting 10 s past the step timeout for the notification to
    go); the upload failed, shown only under the notification, it is not (exit 6, at once,
    saying so)."""
    app, store = recorded
    running = subprocess.Popen(["xcompmgr"]) if compositor == "xcompmgr" else None
    try:
        time.sleep(1)
        app.start(*(["--fail-upload"] if upload == "failed" else []))
        before = len(app.records())
        started = time.monotonic()
        result = _replay_under_a_card(app, store, _over_the_whole_status_bar(app))
        took = time.monotonic() - started
    finally:
        if running is not None:
            running.terminate()
            running.wait(timeout=10)
    assert "the windows' own pixels" in result.stderr, result.stderr
    assert "waiting up to" not in result.stderr
    assert took < 30, took
    if upload == "saved":
        assert result.returncode == 0, result.stderr
        assert len(app.records()) == before + 1
    else:
        assert result.returncode == 6, result.stderr
        assert len(app.records()) == before
        assert (
            "does not show the recorded outcome, seen under a notification window" in result.stderr
        )


@pytest.mark.parametrize("compositor", ["xcompmgr", "none"])
def test_a_name_under_a_notification_is_read_in_the_form_s_own_pixels(
    desktop: Desktop, recorded: tuple[LoanApp, Path], compositor: str
) -> None:
    """Another app's notification over the Name field right of the typed name, clear of
    where the field is clicked and of its end: each step's check leaves it out, but
    the name is read back by OCR from the field's whole width, and the card's pixels
    are not the field's. With a compositing manager the field is read under the card,
    in the form's own pixels: verified. With none, nothing is asked of the server for a
    read: the read is covered, "not verified" (never a divergence); the record is saved
    either way."""
    need("tesseract")
    app, store = recorded
    running = subprocess.Popen(["xcompmgr"]) if compositor == "xcompmgr" else None
    try:
        time.sleep(1)
        app.start()
        before = len(app.records())
        name = app.widgets()["Name"]
        # From 40 px right of where the field is clicked (its centre) to 10 px short of
        # its end: over its middle (one over its end cuts the read there instead).
        left = name["x"] + name["w"] // 2 + 40
        middle = (left, name["y"] - 4, name["x"] + name["w"] - 10 - left, name["h"] + 8)
        card = _open(app, middle, "--kind", "NOTIFICATION", "--override", origin=(0, 0))
        try:
            result = _replay(store)
        finally:
            _stop(card)
    finally:
        if running is not None:
            running.terminate()
            running.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    assert len(app.records()) == before + 1
    report = json.loads(result.stdout)
    if compositor == "xcompmgr":
        assert report["verified"] is True, report.get("unverified")
        assert "not verified" not in result.stderr
    else:
        assert report["verified"] is False, result.stderr
        assert "another window covers part of the field" in json.dumps(report["unverified"])


@pytest.mark.parametrize("place", [OVER_SUBMIT, BESIDE_SUBMIT], ids=["over", "beside"])
def test_a_notification_over_a_click_target_is_refused(
    desktop: Desktop, recorded: tuple[LoanApp, Path], place: tuple[int, int, int, int]
) -> None:
    app, store = recorded
    app.start()
    before = len(app.records())
    submit = app.center("Submit")
    card = _open(app, place, "--kind", "NOTIFICATION", "--override", origin=submit)
    try:
        result = _replay(store)
    finally:
        _stop(card)
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert report["divergence"]["expected"] == f"click at {submit}", report
    assert len(app.records()) == before  # nothing submitted
    # It went as far as the Submit click: the steps before it left the window out.
    assert "left out of the check" in result.stderr


@pytest.mark.parametrize(
    "flags",
    [("--kind", "DIALOG"), ("--kind", "NOTIFICATION", "--override")],
    ids=["dialog", "transient-notification"],
)
def test_a_dialog_or_a_transient_window_over_the_task_is_refused(
    desktop: Desktop, recorded: tuple[LoanApp, Path], flags: tuple[str, ...]
) -> None:
    app, store = recorded
    app.start()
    before = len(app.records())
    form = desktop.wait_window("^Acme Loan Intake$")
    window = _open(app, BESIDE_THE_FIELDS, *flags, "--transient-for", str(form))
    try:
        from Xlib.display import Display

        from mmcli.backends.x11windows import stacked_windows

        display = Display()
        try:
            stack = stacked_windows(display) or []
        finally:
            display.close()
        # The window system says whose it is: the form's (`StackedWindow.owner`).
        assert [w.owner for w in stack if w.transient] == [form], stack
        result = _replay(store)
    finally:
        _stop(window)
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert report["divergence"]["step"] == 1, report
    assert "left out of the check" not in result.stderr
    assert len(app.records()) == before
    assert json.loads(app.layout.read_text())["windows"][0]["widgets"]  # the form is up


TYPES_FIRST = ("--focus", "name", "--prefill", "amount=1200")
"""The form opens with the keyboard in Name: the task starts by typing, with no click."""


def test_keys_never_go_to_a_window_that_took_the_input_focus_itself(
    desktop: Desktop, tmp_path: Path
) -> None:
    """A notification far from the task that takes the X input focus itself: the window
    manager does not make it the active window, so only the input focus tells. Without
    the rule, the name went to it."""
    app = LoanApp(tmp_path / "app")
    store = tmp_path / "store"
    card: subprocess.Popen[bytes] | None = None
    try:
        app.start(*TYPES_FIRST)
        subprocess.run(["xdotool", "mousemove", "3", "400"], check=True)
        auto, submit = ("{} {}".format(*app.center(label)) for label in ("Auto", "Submit"))
        agent = tmp_path / "agent.sh"
        agent.write_text(
            "set -e\n"
            'xdotool type --delay 12 -- "John Smith"\n'
            f"xdotool mousemove --sync {auto} click 1\n"
            f"xdotool mousemove --sync {submit} click 1\n"
        )
        done = mm(
            "--store", str(store), "record", "typed", "--observe", "0", "--", "bash", str(agent)
        )
        assert done.returncode == 0, done.stderr
        assert [r["name"] for r in app.records()] == ["John Smith"]

        app.start(*TYPES_FIRST)
        keys = tmp_path / "keys.txt"
        card = _open(
            app, (0, 0, 240, 60), "--kind", "NOTIFICATION", "--override",
            "--take-focus", str(keys), origin=(900, 600),
        )  # fmt: skip
        # Left out of the check: what shows the focus on this desktop (the frame's title
        # bar, the field's focus ring), as on an app that shows it nowhere in the task.
        form = json.loads(app.layout.read_text())["windows"][0]
        name = app.widgets()["Name"]
        unseen = [
            f"{form['x'] - 20},{form['y'] - 40},{form['w'] + 40},70",
            f"{name['x'] - 12},{name['y'] - 12},{name['w'] + 24},{name['h'] + 24}",
        ]
        stolen = mm(
            "--store", str(store), "replay", "typed", "--no-agent", "--timeout", "5",
            *(a for region in unseen for a in ("--ignore-region", region)),
        )  # fmt: skip
        assert keys.read_text() == "", "keys went to the notifier"
        assert stolen.returncode == 3, stolen.stderr
        assert "Another window has the keyboard: 'notifier.Notifier'" in stolen.stderr
        assert "took the input focus itself" in stolen.stderr
        assert [r["name"] for r in app.records()] == ["John Smith"]
    finally:
        if card is not None:
            _stop(card)
        app.stop()


def test_a_real_desktop_notification_over_the_form_is_left_out(
    desktop: Desktop, tmp_path: Path
) -> None:
    """dunst's own notification (override-redirect, NOTIFICATION) in the top-right
    corner, over the form's title bar and heading, which stands there. It is closed once
    the record is saved (as it would expire), before the check after the last action,
    which leaves nothing out. Without the rule, replay stops at step 1 (exit 3)."""
    app = LoanApp(tmp_path / "app")
    store = tmp_path / "store"
    try:
        desktop.clear_notifications()
        app.start("--position", "700,0")
        subprocess.run(["xdotool", "mousemove", "3", "400"], check=True)
        done = mm(
            "--store", str(store), "record", "loan", "--observe", "0", "--", *agent_command(app)
        )
        assert done.returncode == 0, done.stderr

        app.start("--position", "700,0")
        desktop.notify("New mail", "3 unread messages")
        assert desktop.find_windows("Dunst", by="class", visible=True)
        saved = threading.Event()
        expiry = threading.Thread(target=_close_once_grown, args=(desktop, app.out, saved))
        expiry.start()
        try:
            result = _replay(store)
        finally:
            saved.set()
            expiry.join()
        assert result.returncode == 0, result.stderr
        assert "a notification window ('Dunst.Dunst'" in result.stderr
        records = app.records()
        assert len(records) == 2
        assert {k: str(records[-1][k]) for k in WANTED} == WANTED
    finally:
        desktop.clear_notifications()
        app.stop()


def _close_once_grown(desktop: Desktop, path: Path, stop: threading.Event) -> None:
    """Close the notifications once `path` grows (the record saved), or at `stop`."""
    size = path.stat().st_size
    while not stop.is_set() and path.stat().st_size == size:
        time.sleep(0.02)
    desktop.clear_notifications()


def test_relocate_towards_the_screens_edge(tmp_path: Path) -> None:
    """Recorded 100 px from the screen's left edge, replayed moved 60 px left: shifted
    back, the check's view has a black strip along the left edge (what came from beyond
    the screen) inside the task's margin. It is no difference: nothing beyond the screen
    can be new (Xfce: a window so moved towards the right edge diverged, exit 3). At the
    last step, a click in the app's own dialog, the main window moved too: its frame
    shows the task, not the desktop recorded there (exit 3 when only the dialog's frame
    was known). A desktop of its own: this module's form, open behind, would show
    where the moved window was."""
    store = tmp_path / "store"
    with Desktop(tmp_path / "desktop", panel=False):
        app = LoanApp(tmp_path / "app")
        try:
            app.start("--position", "100,250")
            done = mm(
                "--store", str(store), "record", "edge", "--observe", "0", "--",
                *agent_command(app),
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            app.out.unlink()
            app.start("--position", "40,250")
            done = mm(
                "--store", str(store), "replay", "edge", "--no-agent", "--relocate",
                "--timeout", "3",
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "moved by -60,+0" in done.stderr
            assert [{k: str(r[k]) for k in WANTED} for r in app.records()] == [WANTED]
        finally:
            app.stop()


def test_a_title_bar_drawn_inactive_when_recorded_is_known_by_its_title(
    desktop: Desktop, tmp_path: Path
) -> None:
    """Recorded while another program's window far from the form had the focus: the
    form's title bar was drawn inactive on the first screen (the first click gave the
    form the focus). Replayed with the form active from the start: the bar differs only
    as the window manager draws a window active or not, and the window system names it
    the same, so it is the recorded bar (exit 0; without the rule, exit 3 at step 1:
    the form already has the focus, so no hand-back explains the difference)."""
    app = LoanApp(tmp_path / "app")
    store = tmp_path / "store"
    window: subprocess.Popen[bytes] | None = None
    try:
        app.start()
        subprocess.run(["xdotool", "mousemove", "3", "400"], check=True)
        window = _open(app, (0, 0, 240, 80), "--kind", "NORMAL", origin=(900, 600))
        active = subprocess.run(
            ["xdotool", "getactivewindow", "getwindowname"],
            capture_output=True, text=True, check=True, timeout=10,
        )  # fmt: skip
        assert "Acme Loan" not in active.stdout  # the form is drawn inactive
        done = mm(
            "--store", str(store), "record", "loan", "--observe", "0", "--", *agent_command(app)
        )
        assert done.returncode == 0, done.stderr
        _stop(window)
        window = None
        app.start()
        before = len(app.records())
        result = _replay(store)
        assert result.returncode == 0, result.stderr
        records = app.records()
        assert len(records) == before + 1
        assert {k: str(records[-1][k]) for k in WANTED} == WANTED
    finally:
        if window is not None:
            _stop(window)
        app.stop()


def test_a_notification_over_the_title_the_last_action_changed_is_left_out(
    desktop: Desktop, tmp_path: Path
) -> None:
    """Submit names the applicant in the form's title bar (`--title-echo`). A notification
    that stays over the right half of the title, clear of the bar's middle, hides only
    what the window system tells (the title, asked at the bar's middle, names this run's
    applicant): left out of the outcome's check, exit 0. Without the rule the title's
    change counts: seen under the card (the frame's own pixels), the title names another
    applicant than recorded, exit 6."""
    app = LoanApp(tmp_path / "app")
    store = tmp_path / "store"
    card: subprocess.Popen[bytes] | None = None
    try:
        app.start("--title-echo")
        subprocess.run(["xdotool", "mousemove", "3", "400"], check=True)
        done = mm("--store", str(store), "record", "loan", "--observe", "0",
                  "--param", "name=John Smith", "--", *agent_command(app))  # fmt: skip
        assert done.returncode == 0, done.stderr
        app.start("--title-echo")
        before = len(app.records())
        form = json.loads(app.layout.read_text())["windows"][0]
        over_title = (form["w"] // 2 + 20, -24, 120, 24)
        card = _open(app, over_title, "--kind", "NOTIFICATION", "--override")
        result = mm("--store", str(store), "replay", "loan", "--no-agent", "--timeout", "5",
                    "--param", "name=Grace Hopper", "--json")  # fmt: skip
        assert [r["name"] for r in app.records()[before:]] == ["Grace Hopper"]
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["outcome"] == "from-memory"
    finally:
        if card is not None:
            _stop(card)
        app.stop()
