"""The live task area a divergence keeps at the screen's own resolution, and when not."""

from __future__ import annotations

import io

from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.errors import Outcome
from mmcli.params import Values
from mmcli.replay.report import ReplayOptions
from mmcli.screen.fingerprint import Rect
from mmcli.screen.paint import CROP_MARGIN
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen
from tests.unit.test_replayer import form_recording, typing_app


def _diverge(secrets: list[str]):  # type: ignore[no-untyped-def]
    store = Store()
    rec = form_recording()
    rec.area = Rect(100, 100, 300, 200)
    rec.secrets = secrets
    store.save(rec)
    backend = FakeBackend(form_screen(popup=True), on_action=typing_app)
    values = Values({"name": "John"}, dict.fromkeys(secrets, "1234"))
    report = replay(store, backend, "form", values, ReplayOptions(timeout=0.3))
    assert report.outcome is Outcome.DIVERGED and report.divergence is not None
    return store, report.divergence


def test_the_live_task_area_is_kept_at_the_screen_s_resolution() -> None:
    store, d = _diverge([])
    assert d.live_area is not None and d.live_box is not None
    assert d.live_box == d.area.grow(CROP_MARGIN) if d.area else False
    png = store.read_thumbnail("form", d.live_area)
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (d.live_box.w, d.live_box.h)
    assert d.as_json()["live_box"] == d.live_box.as_list()


def test_a_recording_that_types_a_secret_keeps_only_the_quarter_scale_screen() -> None:
    _, d = _diverge(["pin"])
    assert d.thumbnail is not None
    assert (d.live_area, d.live_box) == (None, None)
