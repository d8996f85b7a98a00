"""The HTML report's structure, without a browser (the e2e test opens it in Chromium)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mmcli.model import Action, ActionKind
from mmcli.report import render
from tests.helpers import sample_recording


def test_every_step_has_a_block_and_text_is_escaped(tmp_path: Path) -> None:
    rec = sample_recording()
    rec.steps[1] = replace(rec.steps[1], action=Action(ActionKind.TYPE, text="<b>{{name}}</b>"))
    (tmp_path / "t-0000.png").write_bytes(b"\x89PNG fake")
    page = render(rec, tmp_path)
    assert page.count("class='step") == len(rec.steps)
    assert "&lt;b&gt;{{name}}&lt;/b&gt;" in page and "<b>{{" not in page
    assert page.count("class='thumb'") == 1  # only t-0000.png exists
    assert page.count("no thumbnail") == len(rec.steps) - 1
    assert "branch starts here" in page


def test_divergences_show_live_and_recorded(tmp_path: Path) -> None:
    rec = sample_recording()
    live, recorded = tmp_path / "live.png", tmp_path / "rec.png"
    live.write_bytes(b"live")
    recorded.write_bytes(b"rec")
    divergence = {
        "at": "2026-11-20T10:00:00+00:00",
        "outcome": "diverged",
        "step": 2,
        "reason": "region 320x132 differs",
        "live": str(live),
        "recorded": str(recorded),
    }
    page = render(rec, tmp_path, [divergence])
    assert "diverged 2026-11-20T10:00:00+00:00: diverged at step 3" in page
    assert page.count("class='thumb'") == 2 and "region 320x132 differs" in page
