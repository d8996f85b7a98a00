"""A secret the model types, shown on the screenshots sent after: the thumbnails a
model-API recording keeps have it painted over, as a screen recording's do, and the
recording still replays from memory (the painted regions are masked on both sides)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import mss
import numpy as np
import pytest
from PIL import Image

from examples.world import LoanApp
from mmcli.screen.fingerprint import SCALE
from mmcli.screen.paint import PAINT
from tests.llm.fake_model import FakeModel

pytestmark = pytest.mark.e2e

AGENT = Path(__file__).with_name("computer_agent.py")
SECRET = "Zq7vw4 Kx9p"
TASK = f"Please type {SECRET} into the first field of the form."


def mm(model: FakeModel, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "COLUMNS": "120",
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "k",
        "MM_SECRET_NAME": SECRET,
    }
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", *args], capture_output=True, text=True, env=env, timeout=180
    )
    sys.stderr.write(result.stdout + result.stderr)
    return result


def text_ink(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    """Pixels in `box` that are neither the field's white nor the paint: the text."""
    x0, y0, x1, y1 = box
    pixels = np.asarray(image.convert("RGB"))[y0:y1, x0:x1].astype(int)
    far_from = lambda colour: np.abs(pixels - np.array(colour)).max(axis=-1) > 24  # noqa: E731
    return int((far_from((255, 255, 255)) & far_from(PAINT)).sum())


def test_a_typed_secret_on_a_later_screenshot_is_painted_in_its_thumbnail(
    form_app: LoanApp, fake_model: FakeModel, isolated_store: Path
) -> None:
    form_app.start()
    agent = [sys.executable, str(AGENT), "--api", "anthropic", "--task", TASK]
    rec = mm(fake_model, "record", "form", "--llm", "--secret", "name", "--", *agent)
    assert rec.returncode == 0, rec.stderr
    assert form_app.widgets()["Name"]["text"] == SECRET

    field = form_app.widgets()["Name"]
    x, y, w, h = field["x"] + 3, field["y"] + 3, field["w"] - 6, field["h"] - 6
    box = (x // SCALE, y // SCALE, (x + w) // SCALE, (y + h) // SCALE)
    with getattr(mss, "MSS", mss.mss)() as grab:  # the screen now: the secret in the field
        shot = grab.grab(grab.monitors[1])
    live = Image.frombytes("RGB", shot.size, shot.rgb).reduce(SCALE)
    assert text_ink(live, box) > 20  # the check sees the typed text when it is there

    # The screenshots in order: before the click, after it, after the typing.
    doc = tomllib.loads((isolated_store / "form.toml").read_text())
    prompts = [e["prompt"] for e in sorted(doc["exchanges"], key=lambda e: e["id"])]
    shots = [sid for p in prompts for sid in re.findall(r'"\$screen":"([^"]+)"', p)]
    assert len(shots) == 3, prompts
    typed = Image.open(isolated_store / "form" / doc["screens"][shots[-1]]["thumbnail"])
    assert text_ink(typed, box) == 0, "the secret is legible in the thumbnail"

    form_app.start()
    again = mm(fake_model, "replay", "form", "--secret", "name", "--no-agent", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["outcome"] == "from-memory"
    assert form_app.widgets()["Name"]["text"] == SECRET


def test_a_secret_the_screen_shows_but_the_model_never_typed_is_kept_illegible(
    form_app: LoanApp, fake_model: FakeModel, isolated_store: Path
) -> None:
    """The form shows the secret in its Email field from the start; the model types
    something else. mm cannot tell where on the screenshots the secret is: in a run with
    secrets every screenshot is kept with no text legible (each 4 x 4 block of the
    thumbnail one colour: a sixteenth of the screen's resolution), and the recording
    replays from memory, judged the same way. Before, the thumbnail showed it legibly."""
    form_app.start("--prefill", f"email={SECRET}")
    task = "Please type Ada into the first field of the form."
    agent = [sys.executable, str(AGENT), "--api", "anthropic", "--task", task]
    rec = mm(fake_model, "record", "shown", "--llm", "--secret", "name", "--", *agent)
    assert rec.returncode == 0, rec.stderr
    doc = tomllib.loads((isolated_store / "shown.toml").read_text())
    assert doc["screens"], doc
    for screen in doc["screens"].values():
        assert screen.get("coarse") is True
        thumb = np.asarray(Image.open(isolated_store / "shown" / screen["thumbnail"]).convert("L"))
        h, w = (thumb.shape[0] // 4) * 4, (thumb.shape[1] // 4) * 4
        blocks = thumb[:h, :w].reshape(h // 4, 4, w // 4, 4)
        assert (blocks.max(axis=(1, 3)) == blocks.min(axis=(1, 3))).all(), "text legible"

    form_app.start("--prefill", f"email={SECRET}")
    again = mm(fake_model, "replay", "shown", "--secret", "name", "--no-agent", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["outcome"] == "from-memory"
