"""Typed text read back where it landed, on the fake backend: replay reads the field after
each typing step and before the next action (a field showing other text is a divergence,
one that cannot be read is "not verified"); a recording keeps the field's text with its
params as placeholders; a heal whose typed text was not read back as typed is pending."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from mmcli.backends import FakeBackend
from mmcli.capture.steps import Capture, landed_of
from mmcli.errors import Outcome
from mmcli.model import Action, ActionKind, Landed, Recording
from mmcli.params import Values
from mmcli.readback.field import FieldText, NotRead
from mmcli.replay.landed import DRAW_LAG, TREE_LAG
from mmcli.replay.report import ReplayOptions, ReplayReport
from mmcli.screen.fingerprint import Rect
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen, fp_of
from tests.unit.test_heal import agent
from tests.unit.test_replayer import SUBMIT, form_recording, typing_app

FIELD = Rect(200, 175, 300, 20)


TYPED = Landed("accessibility", "{{name}}", FIELD)


def recorded(landed: Landed | None = TYPED) -> Recording:
    rec = form_recording()
    rec.steps[1] = replace(rec.steps[1], landed=landed)
    return rec


def run(field: str | None, rec: Recording | None = None, **options: object) -> ReplayReport:
    Store().save(rec or recorded(), overwrite=True)
    backend = FakeBackend(form_screen(), on_action=typing_app)
    backend.field = field
    said: list[str] = []
    report = replay(
        Store(), backend, "form", Values({"name": "Jane"}), ReplayOptions(timeout=0.3, **options),  # type: ignore[arg-type]
        said.append,
    )  # fmt: skip
    report.detail = report.detail or "\n".join(said)
    run.performed = [a.kind for a in backend.performed]  # type: ignore[attr-defined]
    return report


def test_a_field_read_back_as_typed_is_verified() -> None:
    report = run("Jane")
    assert report.outcome is Outcome.FROM_MEMORY
    assert report.verified is True and report.unverified == []
    assert report.as_json()["verified"] is True


def test_a_field_holding_the_value_twice_stops_replay_before_the_next_action() -> None:
    report = run("JaneJane")
    assert report.outcome is Outcome.DIVERGED
    assert run.performed == ["click", "type"]  # type: ignore[attr-defined]
    assert report.divergence is not None and report.divergence.step == 2
    reason = report.divergence.reason
    assert reason.startswith("The field typed into at step 2 does not show what was typed")
    assert "2 times" in reason and "accessibility tree" in reason


def test_an_accessibility_tree_that_tells_the_text_late_is_asked_again() -> None:
    """Firefox's tree said "empty" for a field its window showed with the typed value
    (5 of 13 replays on Xfce): asked again, it tells the text; a field that stays
    other than typed still stops replay, once the tree has had `TREE_LAG`."""
    Store().save(recorded(), overwrite=True)
    backend = FakeBackend(form_screen(), on_action=typing_app)
    reads: list[float] = []

    def lagging(box: Rect | None, frame: object = None, prefer: str = "") -> FieldText:
        reads.append(time.monotonic())
        return FieldText("Jane" if len(reads) > 3 else "", "accessibility", rect=box)

    backend.read_field = lagging  # type: ignore[method-assign]
    report = replay(Store(), backend, "form", Values({"name": "Jane"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is True
    assert len(reads) == 4 and reads[-1] - reads[0] < 1  # asked again, soon
    started = time.monotonic()
    assert run("").outcome is Outcome.DIVERGED  # empty for good: a divergence
    assert time.monotonic() - started >= TREE_LAG


@pytest.mark.parametrize(
    ("field", "landed"),
    [
        (None, Landed("accessibility", "{{name}}", FIELD)),
        ("Jane", None),
        ("Jane", Landed("", None)),
    ],
    ids=["unreadable-now", "recorded-without-it", "unreadable-when-recorded"],
)
def test_a_field_that_cannot_be_read_back_is_done_but_not_verified(
    field: str | None, landed: Landed | None
) -> None:
    report = run(field, recorded(landed))
    assert report.outcome is Outcome.FROM_MEMORY
    assert report.verified is False
    assert [u.split(":")[0] for u in report.unverified] == ["step 2"]
    assert report.as_json()["verified"] is False


def test_a_secret_field_that_differs_is_told_without_its_text() -> None:
    rec = recorded(Landed("accessibility", "{{pin}}", FIELD))
    rec.steps[1] = replace(rec.steps[1], action=Action(ActionKind.TYPE, text="{{pin}}"))
    rec.steps[2] = replace(rec.steps[2], fingerprint=fp_of(form_screen(), SUBMIT))
    rec.params, rec.secrets = ["pin"], ["pin"]
    Store().save(rec, overwrite=True)
    backend = FakeBackend(form_screen())  # a secret's field shows no text
    backend.field = "4711-XYZ4711-XYZ"
    values = Values({}, {"pin": "4711-XYZ"})
    report = replay(Store(), backend, "form", values, ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED and report.divergence is not None
    assert "4711" not in report.divergence.reason
    assert "a secret's: not shown" in report.divergence.reason


def test_typing_as_the_last_action_is_read_back_before_the_outcome() -> None:
    rec = recorded()
    rec.steps = rec.steps[:2]
    report = run("Jane Jane", rec)
    assert report.outcome is Outcome.OUTCOME_DIFFERS and report.exit_code == 6
    assert report.divergence is not None
    assert "does not show what was typed" in report.divergence.reason


# ---- what a recording keeps ------------------------------------------------------------------


def capture(text: str, read: FieldText | NotRead | None) -> Capture:
    return Capture(
        Action(ActionKind.TYPE, text=text),
        np.zeros((4, 4), np.uint8),
        None,
        (0, 0),
        (1920, 1080),
        datetime.now(UTC),
        read=read,
        field_box=FIELD,
    )


def test_the_field_is_kept_with_its_params_as_placeholders() -> None:
    read = FieldText("Mr. John Smith", "accessibility", rect=Rect(10, 10, 200, 20))
    landed = landed_of(capture("John Smith", read), {"name": "John Smith"}, set())
    assert landed == Landed("accessibility", "Mr. {{name}}", Rect(10, 10, 200, 20))


def test_a_field_not_showing_the_typed_text_or_a_secrets_piece_keeps_no_text() -> None:
    ocr = FieldText("Jos Nez", "ocr", rect=FIELD, confidence=90.0)
    assert landed_of(capture("José Núñez", ocr), {}, set()) == Landed("ocr", None, FIELD)
    leaky = FieldText("4711-XYZ (was 4711-ABC)", "accessibility")
    values = {"pin": "4711-XYZ"}
    assert landed_of(capture("4711-XYZ", leaky), values, {"pin"}) == Landed(
        "accessibility", None, FIELD
    )
    unread = NotRead("accessibility", "no accessible app")
    assert landed_of(capture("x", unread), {}, set()) == Landed("", None, FIELD)


def test_a_field_holding_the_typed_text_twice_was_typed_again() -> None:
    read = FieldText("John SmithJohn Smith", "accessibility")
    landed = landed_of(capture("John Smith", read), {"name": "John Smith"}, set())
    assert landed is not None and landed.redone and landed.text == "{{name}}{{name}}"


# ---- a heal --------------------------------------------------------------------------------


def heal(shown: str | None) -> tuple[ReplayReport, list[str]]:
    Store().save(form_recording(), overwrite=True)
    said: list[str] = []
    backend = FakeBackend(form_screen(popup=True))  # diverges at the first step
    backend.field = shown
    command = agent("act(kind='click', x=250, y=185)", "act(kind='type', text='Jane Doe')")
    options = ReplayOptions(timeout=0.3, agent=command)
    report = replay(Store(), backend, "form", Values({"name": "Jane Doe"}), options, said.append)
    return report, said


def test_a_heal_whose_field_shows_what_the_agent_typed_is_learned() -> None:
    report, said = heal("Jane Doe")
    assert report.outcome is Outcome.HEALED, said
    assert report.verified is True


@pytest.mark.parametrize(
    ("shown", "why"),
    [
        ("Jane DoeJane Doe", "its field already held what was typed: it now holds it 2 times"),
        (None, "its field could not be read back"),
        ("Jane", "its field does not show what was typed"),
    ],
    ids=["typed-twice", "unreadable", "other-text"],
)
def test_a_heal_whose_typed_text_was_not_read_back_as_typed_is_pending(
    shown: str | None, why: str
) -> None:
    report, said = heal(shown)
    assert report.outcome is Outcome.HEALED_PENDING and report.exit_code == 6, said
    assert report.verified is False
    assert any(f"the agent's step 2: {why}" in line for line in said), said
    assert "could not be verified where it landed" in report.detail
    assert Store().load("form").pending_branches()


def test_typed_text_is_read_in_its_whole_field_its_earlier_text_included() -> None:
    """A value typed again into a field that held it: what the second typing changed is
    widened to the field's borders, so that OCR reads both."""
    from PIL import Image, ImageDraw

    from mmcli.readback.reader import widen_to_field
    from mmcli.screen.fingerprint import Frame

    image = Image.new("RGB", (800, 200), "#d9d9d9")
    d = ImageDraw.Draw(image)
    d.rectangle([100, 80, 500, 104], fill="white", outline="black")
    d.text((106, 86), "Ada Lovelace", fill="black")
    d.text((186, 86), "Ada Lovelace", fill="black")
    pixels = Frame.from_image(image).pixels
    second = Rect(184, 84, 80, 16)
    assert widen_to_field(pixels, second) == Rect(101, 84, 399, 16)
    # A field with no border but its ground: as far as the ground runs.
    flat = Image.new("RGB", (800, 200), "#d9d9d9")
    ImageDraw.Draw(flat).rectangle([100, 80, 500, 104], fill="white")
    assert widen_to_field(Frame.from_image(flat).pixels, second) == Rect(100, 84, 401, 16)


def test_a_border_inside_the_typed_texts_block_bounds_the_field() -> None:
    """GIMP's export name field at Xfce's dark theme: its black border stands in the
    first column of what the typing changed (a whole block), the dialog's ground just
    outside is within tolerance of the field's; a caret after the text, of the text's
    rows, is no border."""
    from PIL import Image, ImageDraw

    from mmcli.readback.reader import widen_to_field
    from mmcli.screen.fingerprint import Frame

    image = Image.new("RGB", (800, 120), (69, 69, 69))
    d = ImageDraw.Draw(image)
    d.rectangle([20, 40, 80, 60], fill=(170, 170, 170))  # the "Name:" label's ink
    d.rectangle([152, 35, 700, 59], fill=(48, 48, 48), outline=(0, 0, 0))
    d.text((158, 40), "Ada", fill=(220, 220, 220))
    d.line([(187, 38), (187, 56)], fill=(220, 220, 220))  # the caret, the text's rows
    pixels = Frame.from_image(image).pixels
    typed = Rect(152, 38, 36, 19)  # block-rounded: the border at its first column
    assert widen_to_field(pixels, typed) == Rect(153, 38, 547, 19)


def test_a_caret_as_tall_as_its_highlighted_line_is_no_border() -> None:
    """jEdit: the line typed on is highlighted (its rows end above the box's last rows,
    the page below is white), and its red caret spans exactly those rows, the text
    area's border right above: the field runs on past the caret to the wrap margin,
    which runs on down the page (the box ended at the caret, and every read of the
    field was "only part of the field shows")."""
    from PIL import Image, ImageDraw

    from mmcli.readback.reader import widen_to_field
    from mmcli.screen.fingerprint import Frame

    image = Image.new("RGB", (1000, 300), "white")
    d = ImageDraw.Draw(image)
    d.rectangle([40, 101, 960, 103], fill=(122, 138, 153))  # the text area's top border
    d.rectangle([60, 104, 960, 119], fill=(255, 255, 224))  # the line's highlight
    d.line([(60, 104), (60, 280)], fill=(200, 0, 200))  # the gutter's edge
    d.line([(860, 104), (860, 280)], fill=(160, 160, 255))  # the wrap margin
    d.text((64, 106), "Ada", fill="black")
    d.line([(85, 104), (85, 119)], fill=(255, 0, 0))  # the caret
    pixels = Frame.from_image(image).pixels
    typed = Rect(60, 104, 28, 20)  # block-rounded: past the highlight's last row
    assert widen_to_field(pixels, typed) == Rect(61, 104, 799, 20)
    # Without the caret, the same; a border as tall, running on, still bounds it.
    d.line([(85, 96), (85, 125)], fill=(255, 0, 0))
    assert widen_to_field(Frame.from_image(image).pixels, typed) == Rect(61, 104, 24, 20)


def test_the_field_is_read_on_the_screen_as_found_before_the_pointer_moves() -> None:
    """The field typed into is read before the next step's look moves the pointer onto
    its target: a hover the move brings is not read as the field's text, and no read
    stands between that step's check and its click (Swing drew its Save button's hover
    while OCR read the field, and replay refused the click it had just checked)."""
    rec = recorded()
    submit = rec.steps[2]
    rec.steps[2] = replace(submit, fingerprint=replace(submit.fingerprint, pointer=SUBMIT))
    Store().save(rec, overwrite=True)
    backend = FakeBackend(form_screen(), on_action=typing_app)
    pointers: list[tuple[int, int]] = []

    def reading(box: Rect | None, frame: object = None, prefer: str = "") -> FieldText:
        pointers.append(backend.pointer())
        return FieldText("Jane", "accessibility", rect=box)

    backend.read_field = reading  # type: ignore[method-assign]
    report = replay(Store(), backend, "form", Values({"name": "Jane"}), ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is True
    assert pointers and SUBMIT not in pointers


def test_a_read_that_differs_before_the_look_counts_only_once_the_screen_matched() -> None:
    """A field read other than typed on the screen as found, and a next step whose screen
    differs: the run stops on the screen, the reason the check gives, not on the read."""
    rec = recorded()
    rec.steps[2] = replace(rec.steps[2], fingerprint=fp_of(form_screen(error=True), SUBMIT))
    report = run("JaneJane", rec)
    assert report.outcome is Outcome.DIVERGED
    assert report.divergence is not None and report.divergence.step == 2
    assert "near the task" in report.divergence.reason, report.divergence.reason


def replay_read_by_ocr(read_field: Callable[..., FieldText]) -> ReplayReport:
    """Replay the form recorded with its field read by OCR, the field read by `read_field`."""
    Store().save(recorded(Landed("ocr", "{{name}}", FIELD)), overwrite=True)
    backend = FakeBackend(form_screen(), on_action=typing_app)
    backend.read_field = read_field  # type: ignore[method-assign]
    return replay(Store(), backend, "form", Values({"name": "Jane"}), ReplayOptions(timeout=0.3))


def test_ocr_that_reads_other_text_on_the_screen_as_found_reads_the_matched_screen_again() -> None:
    """An app may draw the last keys late: OCR that reads other text before the look reads
    the screen the next step matched before it counts; text that still differs there stops
    replay."""
    reads: list[object] = []

    def late(box: Rect | None, frame: object = None, prefer: str = "") -> FieldText:
        reads.append(frame)
        text = "Jane" if len(reads) > 1 else "JaneJane"
        return FieldText(text, "ocr", rect=box, confidence=95)

    report = replay_read_by_ocr(late)
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is True
    assert len(reads) == 2 and reads[0] is not reads[1]
    doubled = FieldText("JaneJane", "ocr", rect=FIELD, confidence=95)
    report = replay_read_by_ocr(lambda box, frame=None, prefer="": doubled)
    assert report.outcome is Outcome.DIVERGED and report.divergence is not None
    assert report.divergence.reason.startswith("The field typed into at step 2"), report


def test_ocr_reads_the_field_again_on_the_screen_as_it_is_while_the_app_draws_it_late() -> None:
    """Swing drew the last typed keys after the screen as found and the step's matched
    screen were grabbed: OCR read the field empty on both. Read again on the screen as it
    is, it shows the value: verified, not a divergence."""
    reads: list[object] = []

    def late(box: Rect | None, frame: object = None, prefer: str = "") -> FieldText:
        reads.append(frame)
        drawn = len(reads) > 3 and frame is None
        return FieldText("Jane" if drawn else "", "ocr", rect=box, confidence=95)

    report = replay_read_by_ocr(late)
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is True, report
    assert reads[-1] is None  # the last read was of the screen as it is


def test_a_field_read_by_ocr_with_the_second_copy_in_another_case_was_typed_again() -> None:
    """OCR read the capital J where the two copies meet as a small one: still twice."""
    read = FieldText(
        "Josephine Abernathy-Whitcombe Juniorjosephine Abernathy-Whitcombe Junior", "ocr"
    )
    landed = landed_of(capture("Josephine Abernathy-Whitcombe Junior", read), {}, set())
    assert landed is not None and landed.redone
    once = FieldText("Josephine Abernathy-Whitcombe Junior", "ocr")
    single = landed_of(capture("Josephine Abernathy-Whitcombe Junior", once), {}, set())
    assert single is not None and not single.redone


def test_ocr_too_unsure_to_say_anything_reads_the_matched_screen_once_more() -> None:
    """Calc cleared the cell and drew its caret 80 ms before the text: the screen as found
    caught it between, and OCR guessed at what little ink there was ("~------ =", at
    confidence 1). Read once more on the next step's matched screen, the value shows. A
    read that stays unsure costs that one read, no wait; one unsure for a reason OCR
    cannot help (an accent) is not read again."""
    reads: list[object] = []

    def drawn_late(box: Rect | None, frame: object = None, prefer: str = "") -> FieldText:
        reads.append(frame)
        if len(reads) > 1:
            return FieldText("Jane", "ocr", rect=box, confidence=95)
        return FieldText("~------ =", "ocr", rect=box, confidence=1)

    report = replay_read_by_ocr(drawn_late)
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is True, report
    assert len(reads) == 2 and reads[1] is not None and reads[0] is not reads[1]

    reads.clear()
    garbled = FieldText("~------ =", "ocr", rect=FIELD, confidence=1)
    report = replay_read_by_ocr(lambda box, frame=None, prefer="": reads.append(1) or garbled)
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is False
    assert len(reads) == 2

    reads.clear()
    accented = FieldText("Jáne", "ocr", rect=FIELD, confidence=70)
    report = replay_read_by_ocr(lambda box, frame=None, prefer="": reads.append(1) or accented)
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is False
    assert len(reads) == 1


def test_a_caret_read_after_the_text_is_read_again_in_its_blink_s_other_phase() -> None:
    """Wine's notepad: OCR read "Paris|", its caret after the last line read as a bar.
    The caret blinks: read again on the screen as it is, the field shows "Paris" alone
    (verified). A bar that stays, whether a caret that is not one or a letter, leaves the
    value not verified after `DRAW_LAG`, never verified and never a divergence."""
    reads: list[object] = []

    def blinking(box: Rect | None, frame: object = None, prefer: str = "") -> FieldText:
        reads.append(frame)
        text = "Jane" if len(reads) > 3 else "Jane|"
        return FieldText(text, "ocr", rect=box, confidence=90)

    report = replay_read_by_ocr(blinking)
    assert report.outcome is Outcome.FROM_MEMORY and report.verified is True, report
    assert len(reads) == 4 and reads[-1] is None

    for stays in ("Jane|", "Janel"):
        reads.clear()
        read = FieldText(stays, "ocr", rect=FIELD, confidence=90)
        started = time.monotonic()
        report = replay_read_by_ocr(
            lambda box, frame=None, prefer="", read=read: reads.append(1) or read
        )
        assert report.outcome is Outcome.FROM_MEMORY and report.verified is False, report
        assert len(reads) > 3 and time.monotonic() - started >= DRAW_LAG

    reads.clear()
    other = FieldText("Jone|", "ocr", rect=FIELD, confidence=90)
    report = replay_read_by_ocr(lambda box, frame=None, prefer="": reads.append(1) or other)
    assert report.verified is False and len(reads) == 1  # not the text typed: not read again
