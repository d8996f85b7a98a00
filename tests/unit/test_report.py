"""The HTML report's structure, without a browser (the e2e test opens it in Chromium)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

from mmcli.inventory.report import COLUMN, render
from mmcli.model import Action, ActionKind, Step
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


def test_divergences_show_live_and_recorded(tmp_path: Path) -> None:
    rec = sample_recording()
    live, recorded = tmp_path / "live.png", tmp_path / "rec.png"
    live.write_bytes(b"live")
    recorded.write_bytes(b"rec")
    divergence = {
        "at": "2026-11-20T10:00:00+00:00",
        "outcome": "diverged",
        "step": 3,
        "reason": "region 320x132 differs",
        "live": str(live),
        "recorded": str(recorded),
    }
    page = render(rec, tmp_path, [divergence])
    assert "diverged 2026-11-20T10:00:00+00:00: diverged at step 3" in page
    assert page.count("class='thumb'") == 2 and "region 320x132 differs" in page


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
