"""Adding a finished run to a recording, from synthetic captures: params, secrets typed in
pieces or key by key, masks, thumbnails painted where a secret shows, and branches."""

from __future__ import annotations

import io
import re
from concurrent.futures import Future
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageColor, ImageDraw, ImageFont

from mmcli.backends import FakeBackend
from mmcli.capture.integrate import FinishedRun, Into, integrate, masked_share, weak_steps
from mmcli.capture.recorder import _png
from mmcli.capture.secrets import describe
from mmcli.capture.steps import Capture
from mmcli.errors import RecordingExists, SecretLeak
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.params import Values
from mmcli.replay.replayer import Replayer
from mmcli.replay.report import ReplayOptions
from mmcli.screen.analysis import patch_of
from mmcli.screen.fingerprint import SCALE, Frame, Rect
from mmcli.screen.paint import PAINT
from mmcli.store.recordings import Store
from tests.helpers import ended_on, fp_of

SECRET = "4711-XYZ"
FIELD = (300, 200)
SAVE = (200, 400)
OK = (600, 500)
FIELD_TEXT_BOX = (205, 190, 330, 210)
STATUS_BOX = (420, 300, 780, 360)


def screen(field: str = "", status: str = "") -> Image.Image:
    """An 800x600 app: a text field, a Save button, and a status line in a large font that
    shows the saved value (an echo the typed text's pixels cannot find)."""
    img = Image.new("RGB", (800, 600), "#d9d9d9")
    d = ImageDraw.Draw(img)
    d.rectangle([200, 185, 500, 215], fill="white", outline="black")
    d.text((206, 194), field, fill="black", font=ImageFont.load_default(size=14))
    d.rectangle([160, 385, 240, 415], fill="#bbbbbb", outline="black")
    d.text((180, 394), "Save", fill="black")
    d.rectangle([560, 485, 640, 515], fill="#bbbbbb", outline="black")
    d.text((590, 494), "OK", fill="black")
    if status:
        d.text((430, 310), status, fill="navy", font=ImageFont.load_default(size=30))
    return img


def capture(action: Action, img: Image.Image, target: tuple[int, int] | None) -> Capture:
    frame = Frame.from_image(img)
    thumb: Future[bytes] = Future()
    thumb.set_result(_png(frame.thumbnail))
    return Capture(
        action=action,
        small=frame.small,
        patch=patch_of(frame, *target) if target else None,
        pointer=target or (10, 10),
        size=(frame.width, frame.height),
        at=datetime.now(UTC),
        thumbnail=thumb,
    )


def click(at: tuple[int, int]) -> Action:
    return Action(ActionKind.CLICK, x=at[0], y=at[1])


def secret_run(typing: list[Action]) -> tuple[FinishedRun, list[Image.Image]]:
    """click the field, type the secret (as `typing`), click Save, click OK on a screen
    that shows the secret again in the status line; and the screen of each step."""
    screens = [screen()]
    captures = [capture(click(FIELD), screen(), FIELD)]
    typed = ""
    screens.append(screen())  # joined into one step, before the first piece
    for action in typing:
        captures.append(capture(action, screen(typed), FIELD))
        typed += action.text or "".join(action.keys)
    assert typed == SECRET
    captures.append(capture(click(SAVE), screen(SECRET), SAVE))
    screens.append(screen(SECRET))
    shown = screen(SECRET, f"Saved PIN {SECRET}")
    captures.append(capture(click(OK), shown, OK))
    screens.append(shown)
    final = ended_on(Frame.from_image(screen()))
    run = FinishedRun(captures, final, [], Values({}, {"pin": SECRET}), ["agent", "--go"])
    return run, screens


PIECES = [Action(ActionKind.TYPE, text="4711"), Action(ActionKind.TYPE, text="-XYZ")]
KEYS = [Action(ActionKind.PRESS, keys=(c,)) for c in SECRET]
LIST = [Action(ActionKind.PRESS, keys=tuple("4711")), Action(ActionKind.TYPE, text="-XYZ")]


@pytest.mark.parametrize("typing", [PIECES, KEYS, LIST], ids=["pieces", "keys", "key-list"])
def test_a_secret_typed_in_pieces_becomes_one_placeholder(
    typing: list[Action], isolated_store: Path
) -> None:
    run, _ = secret_run(typing)
    done = integrate(Store(), "pin", run, Into.NEW)
    assert done.saved and done.steps == 4
    text = (isolated_store / "pin.toml").read_text()
    # Timestamps are left out: "00:42:00.471149" holds "4711" by chance.
    text = re.sub(r"\d{4}-\d\d-\d\dT?[\d:. +-]*", "", text)
    for piece in ("4711", "-XYZ", "711-", "11-X", "1-XY"):
        assert piece not in text
    rec = Store().load("pin")
    assert [s.action.describe() for s in rec.steps][1] == "type '{{pin}}'"
    assert rec.params == ["pin"] and rec.secrets == ["pin"]


def test_a_secret_split_by_a_click_is_refused_and_nothing_is_written(
    isolated_store: Path,
) -> None:
    run, _ = secret_run(PIECES)
    run.captures.insert(2, capture(click(FIELD), screen("4711"), FIELD))
    with pytest.raises(SecretLeak) as e:
        integrate(Store(), "pin", run, Into.NEW)
    assert "'pin'" in str(e.value) and "4711" not in str(e.value)
    assert not isolated_store.exists() or not list(isolated_store.rglob("*.toml"))


def _thumb(name: str, step: int) -> np.ndarray:
    rec = Store().load(name)
    path = Store().thumbs.folder(name) / str(rec.steps[step].thumbnail)
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


def _box(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x0, y0, x1, y1 = (v // SCALE for v in box)
    return image[y0:y1, x0:x1]


def _ink(pixels: np.ndarray, background: str) -> np.ndarray:
    """Where `pixels` are neither the background nor the paint: text left visible."""
    bg = ImageColor.getrgb(background)
    return (pixels != bg).any(axis=-1) & (pixels != PAINT).any(axis=-1)


def _original(img: Image.Image) -> np.ndarray:
    with Image.open(io.BytesIO(_png(Frame.from_image(img).thumbnail))) as t:
        return np.asarray(t.convert("RGB"))


def test_thumbnails_show_the_secret_nowhere_the_field_nor_the_echo(isolated_store: Path) -> None:
    run, screens = secret_run(PIECES)
    integrate(Store(), "pin", run, Into.NEW)
    # The step after typing (click Save): the field's text is paint, not the secret.
    save = _thumb("pin", 2)
    original = _original(screens[2])
    field = _box(save, FIELD_TEXT_BOX)
    assert _ink(_box(original, FIELD_TEXT_BOX), "white").any()  # the rendering was there
    assert not _ink(field, "white").any(), "pixels of the typed secret are in the thumbnail"
    # The step after Save (click OK): the status line, in another font, is painted too.
    ok = _thumb("pin", 3)
    status = _box(ok, STATUS_BOX)
    assert _ink(_box(_original(screens[3]), STATUS_BOX), "#d9d9d9").any()
    assert not _ink(status, "#d9d9d9").any(), "the status line's text is in the thumbnail"
    assert not _ink(_box(ok, FIELD_TEXT_BOX), "white").any()


def test_a_recording_with_a_secret_matches_its_own_screens_on_replay(
    isolated_store: Path,
) -> None:
    """Painted regions are masks of their steps: the painted thumbnail, used as the
    reference of the `regions` matcher, matches the live screen that shows the secret."""
    run, screens = secret_run(PIECES)
    integrate(Store(), "pin", run, Into.NEW)
    rec = Store().load("pin")
    values = Values({}, {"pin": SECRET})
    replayer = Replayer(Store(), FakeBackend(screens[0]), rec, values, ReplayOptions())
    for step, live in zip(rec.steps, screens, strict=True):
        verdict = replayer.judge.verdict(step, Frame.from_image(live))
        assert verdict.ok, (step.id, verdict.summary())


def test_a_branch_keeps_params_only_the_command_uses(isolated_store: Path) -> None:
    run, _ = secret_run(PIECES)
    values = Values({}, {"pin": SECRET, "pw": "hunter22"})
    run.values, run.command = values, ["agent", "--pw", "hunter22"]
    integrate(Store(), "pin", run, Into.NEW)
    rec = Store().load("pin")
    assert rec.command == ["agent", "--pw", "{{pw}}"]
    assert rec.params == ["pin", "pw"]
    # A heal at step 2 whose agent only clicks: the command still needs the secret.
    heal = FinishedRun(
        [capture(click(OK), screen(SECRET), OK)],
        ended_on(Frame.from_image(screen())),
        [],
        values,
        ["agent", "--pw", "hunter22"],
    )
    done = integrate(Store(), "pin", heal, Into.BRANCH, at=rec.steps[1].id, secret_typed=True)
    assert done.saved and done.steps == 1
    healed = Store().load("pin")
    assert healed.params == ["pin", "pw"] and healed.secrets == ["pin", "pw"]
    assert healed.command == ["agent", "--pw", "{{pw}}"]
    branch = healed.steps[-1]
    assert branch.parent == rec.steps[1].id
    # A secret typed before the heal: the branch's thumbnail paints the field as well.
    field = _box(_thumb("pin", len(healed.steps) - 1), FIELD_TEXT_BOX)
    assert not _ink(field, "white").any()


def test_add_merges_and_says_where(isolated_store: Path) -> None:
    first, _ = secret_run(PIECES)
    integrate(Store(), "pin", first, Into.NEW)
    again, _ = secret_run(KEYS)
    said: list[str] = []
    done = integrate(Store(), "pin", again, Into.ADD, progress=said.append)
    assert not done.saved and done.steps == 0 and done.shared == 4  # the same task
    assert "already holds" in done.reason
    other, _ = secret_run(PIECES)
    other.captures[-1] = capture(click(SAVE), screen(SECRET, "x"), SAVE)
    done = integrate(Store(), "pin", other, Into.ADD, progress=said.append)
    assert done.saved and done.merged and done.shared == 3
    assert "merged into 'pin': 3 steps shared, a branch of 1 step at step 4" in said
    rec = Store().load("pin")
    assert len(rec.steps) == 5
    for step in rec.steps:  # the branch's own thumbnail was written, once
        assert (Store().thumbs.folder("pin") / str(step.thumbnail)).is_file()


@pytest.mark.parametrize(
    "action",
    [
        Action(ActionKind.TYPE, text="4711"),
        Action(ActionKind.TYPE, text="-XYZ"),
        Action(ActionKind.PRESS, keys=("7",)),
        Action(ActionKind.PRESS, keys=tuple("4711")),
        Action(ActionKind.HOTKEY, keys=tuple("-XYZ")),
        Action(ActionKind.TYPE, text=SECRET),
    ],
)
def test_progress_never_shows_a_piece_of_a_secret(action: Action) -> None:
    shown = describe(action, {"pin": SECRET}, {"pin": SECRET})
    assert not any(c in shown for c in "4711XYZ" if c not in "press type")


def test_progress_shows_other_typing() -> None:
    values = {"pin": SECRET}
    assert describe(Action(ActionKind.TYPE, text="John"), values, values) == "type 'John'"
    hotkey = Action(ActionKind.HOTKEY, keys=("ctrl", "s"))
    assert describe(hotkey, values, values) == "hotkey ctrl+s"


def test_a_secret_in_a_hotkey_is_refused(isolated_store: Path) -> None:
    run, _ = secret_run(PIECES)
    run.captures[2] = replace(run.captures[2], action=Action(ActionKind.HOTKEY, keys=tuple("-XYZ")))
    with pytest.raises(SecretLeak):
        integrate(Store(), "pin", run, Into.NEW)


PREVIEW_TEXT_BOX = (205, 250, 330, 270)


def preview_screen(field: str = "", saved: bool = False) -> Image.Image:
    """The app of `screen`, with a preview line under the field that shows what is typed
    as it is typed, in the field's own font: an echo the typed text's pixels do find."""
    img = screen(field, "Saved" if saved else "")
    d = ImageDraw.Draw(img)
    d.rectangle([200, 245, 500, 275], fill="white", outline="black")
    d.text((206, 254), field, fill="black", font=ImageFont.load_default(size=14))
    return img


def test_an_echo_shown_as_the_secret_is_typed_is_painted_over(isolated_store: Path) -> None:
    """Typing is never an `_exposed` change (it shows the known text), so an echo the app
    draws while the secret is typed is hidden only because its pixels are found again."""
    captures = [
        capture(click(FIELD), preview_screen(), FIELD),
        capture(Action(ActionKind.TYPE, text=SECRET), preview_screen(), FIELD),
        capture(click(SAVE), preview_screen(SECRET), SAVE),
        capture(click(OK), preview_screen(SECRET, saved=True), OK),
    ]
    final = ended_on(Frame.from_image(preview_screen()))
    run = FinishedRun(captures, final, [], Values({}, {"pin": SECRET}), ["agent"])
    integrate(Store(), "pin", run, Into.NEW)
    original = _original(preview_screen(SECRET))
    assert _ink(_box(original, PREVIEW_TEXT_BOX), "white").any()  # the echo was drawn
    for step in (2, 3):
        thumb = _thumb("pin", step)
        assert not _ink(_box(thumb, FIELD_TEXT_BOX), "white").any()
        assert not _ink(_box(thumb, PREVIEW_TEXT_BOX), "white").any(), f"echo shown at step {step}"


def test_a_run_without_secrets_is_saved_as_captured(isolated_store: Path) -> None:
    """Nothing is painted when no secret was typed: the thumbnails are the screens; the
    steps form a chain from the root, numbered from 0."""
    run, screens = secret_run([Action(ActionKind.TYPE, text=SECRET)])
    run.values = Values({}, {})
    done = integrate(Store(), "plain", run, Into.NEW)
    assert done.saved and done.steps == 4 and done.shared == 0 and not done.merged
    rec = Store().load("plain")
    assert [(s.id, s.parent) for s in rec.steps] == [(0, None), (1, 0), (2, 1), (3, 2)]
    assert rec.steps[1].action.text == SECRET and rec.secrets == []
    assert rec.created.microsecond == 0
    for i, live in enumerate(screens):
        assert (_thumb("plain", i) == _original(live)).all(), f"step {i} was painted"


def test_saving_over_a_recording_needs_overwrite(isolated_store: Path) -> None:
    run, _ = secret_run(PIECES)
    integrate(Store(), "pin", run, Into.NEW)
    with pytest.raises(RecordingExists):
        integrate(Store(), "pin", run, Into.NEW)
    assert integrate(Store(), "pin", run, Into.NEW, overwrite=True).saved


def test_add_to_a_missing_recording_creates_it(isolated_store: Path) -> None:
    run, _ = secret_run(PIECES)
    done = integrate(Store(), "pin", run, Into.ADD)
    assert done.saved and done.steps == 4 and not done.merged


CLOCK = Rect(700, 10, 80, 20)


def test_volatile_regions_are_masked_said_and_kept_once(isolated_store: Path) -> None:
    """Regions seen changing on their own are told when a recording is made (not at each
    heal), masked in the new steps, and added once to the recording's list; a branch's
    area widens the recording's task area."""
    run, _ = secret_run(PIECES)
    run.volatile = [CLOCK]
    said: list[str] = []
    integrate(Store(), "pin", run, Into.NEW, progress=said.append)
    assert any("changing on their own" in s for s in said)
    rec = Store().load("pin")
    assert rec.area is not None
    volatile = list(rec.volatile)
    assert len(volatile) == 1 and volatile[0].intersects(CLOCK)
    far = Rect(20, 560, 60, 20)
    heal = FinishedRun(
        [capture(click((50, 570)), screen(SECRET), (50, 570))],
        ended_on(Frame.from_image(screen())),
        [CLOCK, far],
        run.values,
    )
    said.clear()
    done = integrate(
        Store(), "pin", heal, Into.BRANCH, at=rec.steps[1].id, secret_typed=True,
        progress=said.append,
    )  # fmt: skip
    assert done.saved and not any("changing on their own" in s for s in said)
    healed = Store().load("pin")
    assert healed.volatile[0] == volatile[0] and len(healed.volatile) == 2
    assert healed.volatile[1].intersects(far)
    branch = healed.steps[-1]
    assert any(m.intersects(far) for m in branch.fingerprint.masks)
    assert healed.area is not None and healed.area.union(rec.area) == healed.area
    assert healed.area.intersects(Rect(50, 570, 1, 1))


def test_weak_steps_are_those_masked_past_a_quarter_of_the_task_area() -> None:
    fp = fp_of(screen(), FIELD)
    area = Rect(0, 0, 400, 400)

    def step(i: int, masked_width: int) -> Step:
        masks = (Rect(0, 0, masked_width, 400),) if masked_width else ()
        return Step(i, i - 1 if i else None, click(FIELD), replace(fp, masks=masks))

    rec = Recording(
        "weak", [step(0, 0), step(1, 100), step(2, 104), step(3, 200)], datetime.now(UTC)
    )
    assert weak_steps(rec) == []  # no task area known
    rec.area = area
    assert masked_share(rec, rec.steps[1]) == 0.25
    warnings = weak_steps(rec)
    assert len(warnings) == 2
    assert warnings[0].startswith("warning: step 3 (id 2, click at (300, 200)) leaves 26%")
    assert "step 4" in warnings[1] and "50%" in warnings[1]


def echo_screen(field: str = "", echo: str = "") -> Image.Image:
    """The app of `screen`, with a line under the field that shows `echo` in the field's
    own font (a value the app repeats once saved)."""
    img = screen(field)
    d = ImageDraw.Draw(img)
    d.rectangle([200, 245, 500, 275], fill="white", outline="black")
    d.text((206, 254), echo, fill="black", font=ImageFont.load_default(size=14))
    return img


def test_a_param_echoed_later_is_masked_from_the_step_that_shows_it(isolated_store: Path) -> None:
    """The value typed into the field shows again under it only once saved: the step
    that sees it has it masked (replay with another value reads differently there); the
    step before, which does not show it, has no mask there."""
    value = "Lovelace"
    captures = [
        capture(click(FIELD), echo_screen(), FIELD),
        capture(Action(ActionKind.TYPE, text=value), echo_screen(), FIELD),
        capture(click(SAVE), echo_screen(value), SAVE),
        capture(click(OK), echo_screen(value, value), OK),
    ]
    final = ended_on(Frame.from_image(echo_screen()))
    run = FinishedRun(captures, final, [], Values({"name": value}, {}), ["agent"])
    integrate(Store(), "echo", run, Into.NEW)
    rec = Store().load("echo")
    assert rec.steps[1].action.text == "{{name}}"
    echo = Rect(206, 250, 60, 20)
    assert not any(m.intersects(echo) for m in rec.steps[2].fingerprint.masks)
    assert any(m.intersects(echo) for m in rec.steps[3].fingerprint.masks)


def test_a_branch_after_no_secret_paints_nothing(isolated_store: Path) -> None:
    run, _ = secret_run([Action(ActionKind.TYPE, text=SECRET)])
    run.values = Values({}, {})
    integrate(Store(), "plain", run, Into.NEW)
    rec = Store().load("plain")
    heal = FinishedRun(
        [capture(click(OK), screen(SECRET), OK), capture(click(SAVE), screen(), SAVE)],
        ended_on(Frame.from_image(screen())),
        [],
        run.values,
    )
    integrate(Store(), "plain", heal, Into.BRANCH, at=rec.steps[1].id)
    healed = Store().load("plain")
    assert (_thumb("plain", len(healed.steps) - 1) == _original(screen())).all()
    assert masked_share(replace(healed, area=None), healed.steps[-1]) == 0.0


def test_a_window_title_showing_a_secret_is_not_kept() -> None:
    from mmcli.capture.integrate import _title

    assert _title("Acme Loan Intake", {"pin": "4711"}) == "Acme Loan Intake"
    assert _title("Account 4711 - Acme", {"pin": "4711"}) is None
    assert _title(None, {}) is None


def test_a_heal_s_gauge_is_kept_only_clear_of_what_the_recording_acts_on(
    isolated_store: Path,
) -> None:
    """A gauge the heal learned beside the recorded Save button (a step the heal never
    acted on) is not kept; one clear of every target is, with the recording's volatile."""
    run, _ = secret_run(PIECES)
    integrate(Store(), "pin", run, Into.NEW)
    rec = Store().load("pin")
    beside_save, clear = Rect(250, 395, 40, 12), Rect(700, 50, 40, 12)
    heal = FinishedRun(
        [capture(click(OK), screen(SECRET), OK)],
        ended_on(Frame.from_image(screen())),
        [],
        run.values,
        ["agent", "--go"],
        gauges=[beside_save, clear],
    )
    integrate(Store(), "pin", heal, Into.BRANCH, at=rec.steps[1].id, secret_typed=True)
    volatile = Store().load("pin").volatile
    assert any(clear.inside(v) for v in volatile)
    assert not any(beside_save.intersects(v) for v in volatile)
