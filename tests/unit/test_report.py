"""The HTML report's structure, without a browser (the e2e test opens it in Chromium)."""

from __future__ import annotations

import base64
import io
import re
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

from PIL import Image, ImageDraw

from mmcli.inventory.crops import OUTLINE, OUTLINE_WIDTH, area_crop, crop_box, outlined, screen_of
from mmcli.inventory.report import COLUMN, render
from mmcli.model import Action, ActionKind, Step
from mmcli.screen.fingerprint import SCALE, Rect
from tests.helpers import literal_fingerprint, sample_recording


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


def _screen_png(path: Path, colour: tuple[int, int, int], box: Rect | None = None) -> None:
    """A kept screen of a 400x240 screen (a 100x60 thumbnail), `box` drawn white."""
    image = Image.new("RGB", (400 // SCALE, 240 // SCALE), colour)
    if box is not None:
        ImageDraw.Draw(image).rectangle(
            [box.x // SCALE, box.y // SCALE, box.right // SCALE - 1, box.bottom // SCALE - 1],
            fill=(255, 255, 255),
        )
    image.save(path)


def _crops(page: str) -> dict[str, tuple[Rect, int, Image.Image]]:
    found = re.findall(
        r"data-screen='(\w+)' data-box='([\d,]+)' data-outlines='(\d+)'>.*?"
        r"src='data:image/png;base64,([^']+)'",
        page,
    )
    return {
        kind: (
            Rect(*map(int, box.split(","))),
            int(n),
            Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"),
        )
        for kind, box, n, data in found
    }


def test_divergences_show_the_task_area_of_both_screens_with_the_regions_outlined(
    tmp_path: Path,
) -> None:
    rec = replace(sample_recording(), area=Rect(80, 40, 200, 120))
    popup = Rect(120, 80, 80, 40)
    _screen_png(tmp_path / "live.png", (10, 20, 30), popup)
    _screen_png(tmp_path / "rec.png", (10, 20, 30))
    divergence = {
        "at": "2026-11-20T10:00:00+00:00",
        "outcome": "diverged",
        "step": 3,
        "reason": "Something new appeared near the task. regions: changed region 80x40",
        "live": str(tmp_path / "live.png"),
        "recorded": str(tmp_path / "rec.png"),
        "area": [80, 40, 200, 120],
        "regions": [popup.as_list(), [0, 0, 4, 4]],
    }
    page = render(rec, tmp_path, [divergence])
    assert "diverged 2026-11-20T10:00:00+00:00: diverged at step 3" in page
    assert "<p class='sentence'>Something new appeared near the task.</p>" in page
    assert "outlined: 1 region that differed (1 more outside the task area)" in page
    crops = _crops(page)
    assert set(crops) == {"live", "recorded"}
    box = Rect(64, 24, 232, 152)  # the area and MARGIN around it, within the screen
    for kind, (shown, drawn, image) in crops.items():
        assert shown == box and drawn == 1 and image.size == (box.w, box.h), kind
        # The outline just outside the popup's edges, at its screen position.
        ring = popup.grow(OUTLINE_WIDTH)
        assert image.getpixel((ring.x - box.x, popup.y - box.y + 5)) == OUTLINE
        assert image.getpixel((popup.x - box.x + 5, ring.bottom - 1 - box.y)) == OUTLINE
    live, recorded = crops["live"][2], crops["recorded"][2]
    inside = (popup.x - box.x + 10, popup.y - box.y + 10)
    assert live.getpixel(inside) == (255, 255, 255) and recorded.getpixel(inside) == (10, 20, 30)


def test_an_entry_without_regions_renders_with_no_outline_and_says_so(tmp_path: Path) -> None:
    """History lines written before the regions were kept; a screen that is no image."""
    rec = replace(sample_recording(), area=None)
    _screen_png(tmp_path / "live.png", (200, 0, 0))
    (tmp_path / "rec.png").write_bytes(b"not a png")
    divergence = {
        "at": "2026-11-20T10:00:00+00:00",
        "outcome": "diverged",
        "step": 2,
        "reason": "region 320x132 differs",
        "live": str(tmp_path / "live.png"),
        "recorded": str(tmp_path / "rec.png"),
    }
    page = render(rec, tmp_path, [divergence])
    assert "were not kept by the replay that wrote this entry" in page
    assert "the whole screen (the recording keeps no task area)" in page
    crops = _crops(page)
    assert list(crops) == ["live"] and crops["live"][1] == 0
    assert crops["live"][2].size == (400, 240)  # the whole screen, at its size
    assert "data-screen='recorded'>(missing)" in page


def test_crop_box_and_area_crop_map_screen_pixels_one_to_one() -> None:
    screen = Rect(0, 0, 400, 240)
    assert crop_box(Rect(10, 10, 100, 50), screen) == Rect(0, 0, 126, 76)
    assert crop_box(None, screen) == screen
    assert crop_box(Rect(900, 900, 10, 10), screen) == screen  # off the screen
    thumb = Image.new("RGB", (100, 60), (0, 0, 0))
    thumb.putpixel((5, 7), (255, 0, 0))  # screen pixels (20..23, 28..31)
    buf = io.BytesIO()
    thumb.save(buf, format="PNG")
    crop = area_crop(buf.getvalue(), Rect(18, 26, 9, 7))
    assert crop.size == (9, 7)
    red = {(x, y) for x in range(9) for y in range(7) if crop.getpixel((x, y)) == (255, 0, 0)}
    assert red == {(x, y) for x in range(2, 6) for y in range(2, 6)}
    assert screen_of(buf.getvalue()) == screen


def test_outlined_draws_only_the_regions_that_meet_the_crop() -> None:
    box = Rect(100, 100, 50, 50)
    image = Image.new("RGB", (50, 50), (0, 0, 0))
    drawn = outlined(image, [Rect(110, 110, 10, 10), Rect(0, 0, 10, 10)], box)
    assert drawn == 1
    pixels = {(x, y) for x in range(50) for y in range(50) if image.getpixel((x, y)) == OUTLINE}
    ring = Rect(110 - OUTLINE_WIDTH, 110 - OUTLINE_WIDTH, 10 + 2 * OUTLINE_WIDTH, 16)
    assert (ring.x - box.x, ring.y - box.y) in pixels
    assert all(not (10 <= x < 20 and 10 <= y < 20) for x, y in pixels)  # inside is left


def _tree_picture(page: str) -> ElementTree.Element:
    assert page.count("<svg") == 1
    return ElementTree.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])


def _centre(svg: ElementTree.Element, step: int | str) -> tuple[int, int]:
    if step == "start":
        circle = svg.find("circle[@class='start']")
    else:
        circle = svg.find(f".//g[@data-step='{step}']/circle")
    assert circle is not None
    return int(circle.get("cx", "")), int(circle.get("cy", ""))


def _ends(svg: ElementTree.Element, to: int) -> tuple[tuple[int, int], tuple[int, int]]:
    edge = svg.find(f"path[@data-to='{to}']")
    assert edge is not None
    points = re.findall(r"(-?\d+),(-?\d+)", edge.get("d", ""))
    (x0, y0), (x1, y1) = points[0], points[-1]
    return (int(x0), int(y0)), (int(x1), int(y1))


def test_the_tree_is_drawn_with_each_branch_where_it_departs(tmp_path: Path) -> None:
    rec = sample_recording()  # 4 steps in a row; step 4 (id 4) departs after step 1 (id 0)
    # and a branch departing before step 1, two steps long.
    rec.steps += [
        Step(5, None, Action(ActionKind.PRESS, keys=("escape",)), literal_fingerprint(5, None)),
        Step(6, 5, Action(ActionKind.CLICK, x=5, y=6), literal_fingerprint(6, (5, 6))),
    ]
    page = render(rec, tmp_path)
    assert "http" not in page  # nothing fetched
    svg = _tree_picture(page)
    nodes = svg.findall(".//g[@class]")
    assert sorted(int(n.get("data-step", "")) for n in nodes) == [s.id for s in rec.steps]
    for step in rec.steps:
        node = svg.find(f".//g[@data-step='{step.id}']")
        assert node is not None
        assert node.get("data-parent") == ("start" if step.parent is None else str(step.parent))
        # Every step is joined to its parent: the edge runs from its node to the step's.
        parent = "start" if step.parent is None else step.parent
        assert _ends(svg, step.id) == (_centre(svg, parent), _centre(svg, step.id))
        # One column right of its parent.
        assert _centre(svg, step.id)[0] - _centre(svg, parent)[0] == COLUMN
    trunk_y = _centre(svg, 0)[1]
    assert {_centre(svg, i)[1] for i in (0, 1, 2, 3)} == {trunk_y}
    trunk = {n.get("data-step") for n in svg.findall(".//g[@class='node trunk']")}
    assert trunk == {"0", "1", "2", "3"}
    # The branches on rows of their own, labelled with their action.
    assert _centre(svg, 4)[1] > trunk_y and _centre(svg, 5)[1] > trunk_y
    assert _centre(svg, 4)[1] != _centre(svg, 5)[1] and _centre(svg, 6)[1] == _centre(svg, 5)[1]
    labels = {t.get("data-step"): t.text for t in svg.findall("text[@class='label']")}
    assert labels == {"4": "branch 4: press enter", "5": "branch 5: press escape"}


def test_a_moved_task_is_cut_and_outlined_where_the_live_screen_shows_it(
    tmp_path: Path,
) -> None:
    """Judged at an offset (the window moved, `--relocate`): the regions are where the
    recording had them; on the live screen the task and its regions are moved by it."""
    rec = replace(sample_recording(), area=Rect(80, 40, 200, 120))
    popup, offset = Rect(120, 80, 80, 40), (40, 20)
    moved = Rect(popup.x + offset[0], popup.y + offset[1], popup.w, popup.h)
    _screen_png(tmp_path / "live.png", (10, 20, 30), moved)
    _screen_png(tmp_path / "rec.png", (10, 20, 30))
    divergence = {
        "at": "2026-11-20T10:00:00+00:00",
        "outcome": "diverged",
        "step": 1,
        "reason": "The window moved 40 px right and 20 px down. regions: changed region",
        "live": str(tmp_path / "live.png"),
        "recorded": str(tmp_path / "rec.png"),
        "area": [80, 40, 200, 120],
        "regions": [popup.as_list()],
        "offset": list(offset),
    }
    crops = _crops(render(rec, tmp_path, [divergence]))
    assert crops["recorded"][0] == Rect(64, 24, 232, 152)
    live_box, drawn, live = crops["live"]
    assert live_box == Rect(104, 44, 232, 152) and drawn == 1
    ring = moved.grow(OUTLINE_WIDTH)
    assert live.getpixel((ring.x - live_box.x, moved.y - live_box.y + 5)) == OUTLINE
    inside = (moved.x - live_box.x + 10, moved.y - live_box.y + 10)
    assert live.getpixel(inside) == (255, 255, 255)  # the live crop holds the moved popup
