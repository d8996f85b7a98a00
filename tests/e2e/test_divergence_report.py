"""What a person reads after a divergence, on a real display with the example app: the
HTML report's task-area crops with the differing regions outlined, and `mm show` after a
healed branch is deleted."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import mss
import numpy as np
import pytest
from PIL import Image

from mmcli.inventory.crops import MARGIN, OUTLINE
from mmcli.screen.fingerprint import Rect
from tests.e2e.conftest import LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e

FIGURE = re.compile(
    r"<figure class='crop' data-screen='(\w+)' data-box='([\d,]+)' data-outlines='(\d+)'>"
    r".*?src='data:image/png;base64,([A-Za-z0-9+/=]+)'"
)


def _popup(app: LoanApp) -> Rect:
    """Where the example app's "Notice" dialog is on the screen."""
    for window in json.loads(app.layout.read_text())["windows"]:
        if window["title"] == "Notice":
            return Rect(window["x"], window["y"], window["w"], window["h"])
    raise AssertionError("the Notice dialog is not on the screen")


def _outline_pixels(image: Image.Image) -> np.ndarray:
    pixels = np.asarray(image.convert("RGB"))
    return np.asarray((pixels == np.array(OUTLINE, dtype=np.uint8)).all(axis=2))


def test_report_shows_the_task_area_at_screen_size_with_the_differences_outlined(
    loan_app: LoanApp, tmp_path: Path
) -> None:
    loan_app.start()
    assert mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app)).returncode == 0
    loan_app.start("--popup-at-start")
    popup = _popup(loan_app)
    replayed = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json")
    assert replayed.returncode == 3, replayed.stderr
    divergence = json.loads(replayed.stdout)["divergence"]
    # The history keeps where the screen differed (screen pixels) and the task area.
    regions = [Rect(*r) for r in divergence["regions"]]
    assert any(r.intersects(popup) for r in regions), (regions, popup)
    area = Rect(*divergence["area"])

    page = tmp_path / "loan.html"
    shown = mm("show", "loan", "--html", str(page))
    assert shown.returncode == 0, shown.stderr
    text = page.read_text()
    (block,) = re.findall(r"<div class='divergence'.*?</div></div></div>", text, re.S)
    crops = {kind: (box, int(n), data) for kind, box, n, data in FIGURE.findall(block)}
    assert set(crops) == {"recorded", "live"}

    box = Rect(*map(int, crops["live"][0].split(",")))
    assert box == area.grow(MARGIN).intersection(Rect(0, 0, 1920, 1080)), (box, area)
    images = {}
    for kind, (shown_box, drawn, data) in crops.items():
        image = Image.open(io.BytesIO(base64.b64decode(data)))
        # One pixel a screen pixel: the task area's size (and the margin), not a quarter.
        assert image.size == (box.w, box.h), (kind, image.size, box)
        assert shown_box == crops["live"][0] and drawn >= 1
        images[kind] = image

    # The outline is drawn around the popup: in the crop's coordinates, outline-coloured
    # pixels just around the dialog's edges, on both crops at the same places.
    live, recorded = _outline_pixels(images["live"]), _outline_pixels(images["recorded"])
    near = popup.grow(24)
    x0, y0 = max(near.x - box.x, 0), max(near.y - box.y, 0)
    x1, y1 = near.right - box.x, near.bottom - box.y
    assert live[y0:y1, x0:x1].sum() > 200
    assert (live == recorded).all()
    # ... and not merely everywhere: the outline hugs the regions that differed.
    far = np.ones_like(live)
    for r in regions:
        ring = r.grow(8)
        far[
            max(ring.y - box.y, 0) : ring.bottom - box.y,
            max(ring.x - box.x, 0) : ring.right - box.x,
        ] = False
    assert live[far].sum() == 0
    # The live crop shows the popup (not the recorded screen): it differs from the
    # recorded crop inside the dialog.
    inside = popup.intersection(box)
    assert inside is not None
    cut = (inside.x - box.x, inside.y - box.y, inside.right - box.x, inside.bottom - box.y)
    a = np.asarray(images["live"].crop(cut).convert("L"), dtype=np.int16)
    b = np.asarray(images["recorded"].crop(cut).convert("L"), dtype=np.int16)
    assert np.abs(a - b).mean() > 10

    # The live side is the screen as it was, at its own resolution (this recording types
    # no secret): the dialog is still up, so it is what the display shows now.
    assert "live screen (full resolution)" in block
    with getattr(mss, "MSS", mss.mss)() as grabber:
        shot = grabber.grab({"left": box.x, "top": box.y, "width": box.w, "height": box.h})
    now = np.asarray(Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX"))
    kept = np.asarray(images["live"].convert("RGB"))
    same = (now == kept).all(axis=2)
    assert same[~live].mean() > 0.98, same[~live].mean()

    sentence = divergence["reason"].split(". ")[0]
    assert f"<p class='sentence'>{html.escape(sentence)}." in block
    assert "outlined: " in block


def _shown(name: str) -> tuple[str, dict[str, Any]]:
    text = mm("show", name)
    as_json = mm("show", name, "--json")
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    return text.stdout, json.loads(as_json.stdout)


def _listed(name: str) -> dict[str, Any]:
    (row,) = [r for r in json.loads(mm("ls", "--json").stdout) if r["name"] == name]
    return row


def test_show_and_ls_agree_with_the_tree_after_a_healed_branch_is_deleted(
    loan_app: LoanApp,
) -> None:
    loan_app.start()
    assert mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app)).returncode == 0
    text, shown = _shown("loan")
    assert f"loan: {len(shown['steps'])} steps, 0 branches;" in text  # the trunk is no branch
    assert _listed("loan")["branches"] == 0

    loan_app.start("--popup-at-start")
    healed = mm("replay", "loan", "--timeout", "2")
    assert healed.returncode == 0 and "healed" in healed.stderr, healed.stderr
    text, shown = _shown("loan")
    assert ", 1 branch;" in text and "(healed) at step 1" in text
    (heal,) = shown["divergences"]
    branch = heal["branch"]
    assert heal["outcome"] == "healed" and branch in {s["id"] for s in shown["steps"]}
    assert f"(branch id {branch})" in text
    assert _listed("loan")["branches"] == 1

    removed = mm("rm", "loan", "--branch", str(branch), "--yes")
    assert removed.returncode == 0, removed.stderr
    text, shown = _shown("loan")
    assert ", 0 branches;" in text
    assert "healed" not in text and shown["divergences"] == []  # what it learned is gone
    assert branch not in {s["id"] for s in shown["steps"]}
    listed = _listed("loan")
    assert listed["branches"] == 0 and listed["healed"] == 1  # the replay still happened

    # A new heal may be given the deleted branch's id: only the new one is listed.
    loan_app.start("--popup-at-start")
    assert mm("replay", "loan", "--timeout", "2").returncode == 0
    text, shown = _shown("loan")
    (heal,) = shown["divergences"]
    assert heal["branch"] == branch and ", 1 branch;" in text
    assert _listed("loan")["healed"] == 2
