"""Where a model-API recording paints a typed secret in the screenshots it keeps: what
changed since the last screenshot the recording kept, also when the agent dropped that
screenshot from the history it sends."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image, ImageDraw

from mmcli.llm.document import LLMRecording, now
from mmcli.llm.proxy import Session
from mmcli.llm.tree import conversation
from mmcli.screen.fingerprint import SCALE
from mmcli.screen.matcher import Policy
from mmcli.screen.paint import PAINT
from tests.llm.test_matching import ANTHROPIC, TASK, answer, body, image_block, result, tool_use

SECRET = "4711-XYZ"
BOX = (200, 150, 500, 174)


def form(text: str = "") -> str:
    image = Image.new("RGB", (1280, 800), (217, 217, 217))
    draw = ImageDraw.Draw(image)
    draw.rectangle(BOX, fill=(255, 255, 255), outline=(90, 90, 90))
    draw.text((20, 20), "Acme Loan Intake", fill=(0, 0, 0))
    draw.text((BOX[0] + 6, BOX[1] + 6), text, fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def kept_last(session: Session) -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    tree = session.recording.tree
    node = tree.nodes[max(tree.nodes)]
    sid = str(node.prompt[-1]["content"][0]["content"][0]["$screen"])
    screen = tree.screens[sid]
    assert screen.png is not None
    masks = [(m.x, m.y, m.w, m.h) for m in screen.fingerprint.masks]
    return Image.open(io.BytesIO(screen.png)).convert("RGB"), masks


def test_the_typed_field_is_painted_even_when_the_history_dropped_the_screenshot_before() -> None:
    session = Session(
        LLMRecording("t", now()), {"pin": SECRET}, secrets=frozenset({"pin"}), replay=False
    )
    shot = tool_use("toolu_A", action="screenshot")
    typing = tool_use("toolu_B", action="type", text=SECRET)
    first = body(TASK, {"role": "assistant", "content": [shot]},
                 {"role": "user", "content": [result("toolu_A", image_block(form()))]})  # fmt: skip
    second = body(
        TASK,
        {"role": "assistant", "content": [shot]},
        {"role": "user", "content": [result("toolu_A", "(screenshot left out)")]},
        {"role": "assistant", "content": [typing]},
        {"role": "user", "content": [result("toolu_B", image_block(form(SECRET)))]},
    )
    for request, reply in (
        (first, answer(typing)),
        (second, answer({"type": "text", "text": "ok"})),
    ):
        conv = conversation(ANTHROPIC, request, session.values)
        session.learn(ANTHROPIC, conv, session.recording.tree.find(conv, Policy.DEFAULT), reply)

    image, masks = kept_last(session)
    pixels = np.asarray(image).astype(int)
    x0, y0, x1, y1 = (v // SCALE for v in BOX)
    field = pixels[y0 + 1 : y1, x0 + 1 : x1]
    ink = (np.abs(field - 255).max(axis=-1) > 24) & (np.abs(field - PAINT).max(axis=-1) > 24)
    assert ink.sum() == 0, "the secret is legible in the kept thumbnail"
    assert masks and all(w * h < 1280 * 800 / 4 for _, _, w, h in masks), masks  # not whole
    # The rest is not painted (kept with no text legible: a run with secrets keeps every
    # screenshot in blocks of 4 x 4 thumbnail pixels).
    below = pixels[600 // SCALE : 700 // SCALE, 20 // SCALE : 120 // SCALE]
    assert (np.abs(below - PAINT).max(axis=-1) > 24).all()
    title = pixels[16 // SCALE : 32 // SCALE, 16 // SCALE : 128 // SCALE]
    assert len({tuple(p) for row in title[:, :4] for p in row}) == 1  # one block, one colour
