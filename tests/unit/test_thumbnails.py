"""A step's thumbnail as its recorded screen, or why not; replay never checks less
without saying so, and `--policy strict` does not act on such a step."""

from __future__ import annotations

import io
from dataclasses import replace

from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.errors import ExitCode, Outcome
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions
from mmcli.screen.fingerprint import Frame
from mmcli.screen.matcher import Policy
from mmcli.store.recordings import Store
from mmcli.store.thumbnails import load_reference, unusable
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen
from tests.unit.test_replayer import form_recording, typing_app


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def stored(thumbnails: dict[int, bytes | None]) -> Store:
    """The form recording with the given thumbnail bytes per step (None: the file absent)."""
    store = Store()
    rec = form_recording()
    rec.steps = [replace(s, thumbnail=f"t-{s.id}.png") for s in rec.steps]
    store.save(rec)
    for step_id, data in thumbnails.items():
        if data is not None:
            store.thumbs.write("form", f"t-{step_id}.png", data)
    return store


def test_each_kind_of_unusable_thumbnail_is_told_apart(isolated_store: object) -> None:
    good = _png(Frame.from_image(form_screen()).thumbnail())
    store = stored({0: good, 1: None, 2: b"\x89PNG\r\n\x1a\n damaged"})
    rec = store.load("form")
    first = load_reference(store, "form", rec.steps[0])
    assert first.problem is None and first.screen is not None
    assert [(s.id, p) for s, p in unusable(store, rec)] == [
        (1, "is missing"),
        (2, "is not a readable PNG"),
    ]
    store.thumbs.write("form", "t-2.png", _png(Image.new("RGB", (10, 10))))
    assert "not the recorded screen" in (load_reference(store, "form", rec.steps[2]).problem or "")
    assert load_reference(store, "form", replace(rec.steps[0], thumbnail=None)).problem == (
        "was never recorded"
    )


def test_replay_names_each_step_checked_with_the_grid_only(isolated_store: object) -> None:
    said: list[str] = []
    backend = FakeBackend(form_screen(), on_action=typing_app)
    options = ReplayOptions(timeout=0.3)
    report = replay(stored({}), backend, "form", Values({"name": "John"}), options, said.append)
    assert report.outcome is Outcome.FROM_MEMORY
    warnings = [s for s in said if s.startswith("warning:")]
    assert warnings == [
        f"warning: step {n + 1}: thumbnail 'form/t-{n}.png' is missing; "
        "checking with the coarse grid only"
        for n in range(3)
    ]


def test_strict_does_not_act_on_a_step_it_cannot_check(isolated_store: object) -> None:
    good = _png(Frame.from_image(form_screen()).thumbnail())
    said: list[str] = []
    backend = FakeBackend(form_screen(), on_action=typing_app)
    options = ReplayOptions(timeout=0.3, policy=Policy.STRICT)
    store = stored({0: good})
    report = replay(store, backend, "form", Values({"name": "John"}), options, said.append)
    assert report.outcome is Outcome.DIVERGED and report.exit_code is ExitCode.DIVERGED
    assert report.steps_replayed == 1 and len(backend.performed) == 1  # step 1 only
    assert report.divergence is not None and report.divergence.step == 1
    assert "thumbnail 'form/t-1.png' is missing" in report.divergence.reason
    assert "--policy strict does not act on the coarse grid alone" in report.divergence.reason
