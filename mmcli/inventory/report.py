"""`mm show --html`: one self-contained page (thumbnails inlined) showing the recording's
tree as a picture (inline SVG), every step with a marker where it acted, and for each of
the last divergences the recorded and live task area side by side, the regions that
differed outlined (`crops`), beside the sentence that explains it. Text only ever comes
from the recording and its history (placeholders, never param values); images only from
the stored thumbnails, painted where a secret may show before they were written."""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mmcli.inventory.catalog import TreeLine, rect_of, tree
from mmcli.inventory.crops import MARGIN as CROP_MARGIN
from mmcli.inventory.crops import (
    area_crop,
    crop_box,
    full_crop,
    outlined,
    png_of,
    screen_of,
)
from mmcli.model import Recording, Step, plural
from mmcli.screen.fingerprint import SCALE, Rect
from mmcli.store.storefs import read_plain

STYLE = """
body { font: 14px system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 4px; } .meta { color: #555; margin-bottom: 18px; }
.step { display: flex; gap: 16px; align-items: flex-start; margin: 0 0 14px; padding: 10px;
        background: #fff; border: 1px solid #ddd; border-radius: 6px; }
.step.branch { border-left: 4px solid #d97706; }
.shot { position: relative; flex: none; line-height: 0; }
.shot img { width: 480px; border: 1px solid #ccc; }
.marker { position: absolute; width: 18px; height: 18px; margin: -10px 0 0 -10px;
          border: 3px solid #e11d48; border-radius: 50%; box-shadow: 0 0 0 2px #fff; }
.no-shot { width: 480px; height: 60px; line-height: 60px; text-align: center; color: #888;
           border: 1px dashed #ccc; }
.num { font-weight: 600; } code { background: #f1f1f1; padding: 1px 4px; border-radius: 3px; }
.map { overflow-x: auto; margin: 0 0 18px; background: #fff; border: 1px solid #ddd;
       border-radius: 6px; } .map svg { display: block; }
.divergence { margin: 18px 0; padding: 10px; background: #fff4f4; border: 1px solid #f3b4b4;
              border-radius: 6px; } .pair { display: flex; gap: 16px; overflow-x: auto;
              align-items: flex-start; }
.crop { margin: 0; flex: 1 1 0; min-width: 0; } .crop img { display: block; max-width: 100%;
        height: auto; border: 1px solid #ccc; image-rendering: pixelated; cursor: zoom-in; }
.crop img.full { max-width: none; cursor: zoom-out; } .where { color: #555; margin: 4px 0 8px; }
.why { flex: 0 1 320px; min-width: 200px; } .sentence { font-weight: 600; margin-top: 0; }
.checks, .outlines { color: #555; }
"""

# Counts the thumbnails the browser decoded (proof the page rendered, for tests and humans)
# and says whether anything is wider than the window; a click shows a crop at full size.
SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll('img.thumb'));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-thumbs-rendered', String(ok));
  var wide = document.documentElement.scrollWidth > window.innerWidth;
  document.querySelectorAll('.pair').forEach(function (p) {
    wide = wide || p.scrollWidth > p.clientWidth;
  });
  document.body.setAttribute('data-wider-than-window', wide ? 'yes' : 'no');
  document.querySelectorAll('.crop img').forEach(function (i) {
    i.addEventListener('click', function () { i.classList.toggle('full'); });
  });
});
"""


Thumbs = Path | Callable[[str], bytes | None]
"""The recording's thumbnails: its folder, or a reader of one by file name (a store's
`read_thumbnail`, wherever the store is)."""


def render(
    recording: Recording, thumbs_dir: Thumbs, divergences: Sequence[dict[str, Any]] = ()
) -> str:
    """The page as a string; `divergences` as `catalog.recent_divergences` returns them."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>mm: {_e(recording.name)}</title><style>{STYLE}</style>",
        f"<script>{SCRIPT}</script></head><body>",
        f"<h1>{_e(recording.name)}</h1>",
        f"<div class='meta'>{plural(len(recording.steps), 'step')}, "
        f"{plural(recording.branch_count(), 'branch', 'branches')}; "
        f"recorded {recording.created:%Y-%m-%d %H:%M}; params: "
        f"{_e(', '.join(recording.params) or 'none')}</div>",
    ]
    lines = list(tree(recording))
    parts.append(f"<div class='map'>{tree_svg(lines)}</div>")
    last_point: dict[int, tuple[int, int]] = {}
    for line in lines:
        parts.append(_step_html(recording, line, thumbs_dir, last_point))
    for d in divergences:
        parts.append(_divergence_html(recording, d, thumbs_dir))
    parts.append("</body></html>")
    return "\n".join(parts)


COLUMN, LANE, MARGIN, RADIUS = 34, 56, 24, 10
"""The tree's picture: a step every COLUMN px along its path, a branch a LANE lower."""
LABEL = 48
"""Characters of a branch's first action written beside it."""


def tree_svg(lines: Sequence[TreeLine]) -> str:
    """The recording's tree as an inline SVG: the trunk's steps in a row from a start
    node, each branch on a row of its own below, joined to the step it departs after (the
    start node for a branch before step 1) and labelled with its first action. A node
    links to its step's block below; hovering shows its action."""
    where: dict[int | None, tuple[int, int]] = {None: (0, 0)}  # (column, lane); None: start
    lanes = 0
    edges, nodes, labels = [], [], []
    for line in lines:
        step = line.step
        if line.branch_start:
            lanes += 1
        lane = lanes if line.branch_start else where[step.parent][1]
        where[step.id] = (line.depth + 1, lane)
        (px, py), (x, y) = _xy(*where[step.parent]), _xy(line.depth + 1, lane)
        parent = "start" if step.parent is None else step.parent
        # Down between two columns, never through another branch's node.
        mx = px + COLUMN // 2
        shape = f"M{px},{py} L{x},{y}" if py == y else f"M{px},{py} L{mx},{py} L{mx},{y} L{x},{y}"
        edges.append(f"<path class='edge' data-from='{parent}' data-to='{step.id}' d='{shape}'/>")
        kind = "branch" if lane else "trunk"
        nodes.append(
            f"<a href='#step-{step.id}'><g class='node {kind}' data-step='{step.id}' "
            f"data-parent='{parent}' data-depth='{line.depth}'>"
            f"<title>step {line.depth + 1}: {_e(step.action.describe())}</title>"
            f"<circle cx='{x}' cy='{y}' r='{RADIUS}'/>"
            f"<text x='{x}' y='{y + 4}'>{line.depth + 1}</text></g></a>"
        )
        if line.branch_start:
            action = step.action.describe()
            action = action if len(action) <= LABEL else action[: LABEL - 3] + "..."
            labels.append(
                f"<text class='label' data-step='{step.id}' x='{x - RADIUS}' "
                f"y='{y + RADIUS + 14}'>branch {step.id}: {_e(action)}</text>"
            )
    columns = max((c for c, _ in where.values()), default=0)
    width, height = _xy(columns, lanes)
    sx, sy = _xy(0, 0)
    return (
        f"<svg class='tree' width='{width + MARGIN + 200}' "
        f"height='{height + MARGIN + 16}' role='img' aria-label='the recording as a tree'>"
        "<style>.edge{fill:none;stroke:#999;stroke-width:2}"
        ".node circle{stroke:#fff;stroke-width:2}.trunk circle{fill:#2563eb}"
        ".branch circle{fill:#d97706}.node text{fill:#fff;font:600 10px sans-serif;"
        "text-anchor:middle}.label{fill:#92400e;font:11px sans-serif}"
        ".start{fill:#555}</style>"
        f"{''.join(edges)}<circle class='start' cx='{sx}' cy='{sy}' r='5'>"
        "<title>start</title></circle>"
        f"{''.join(nodes)}{''.join(labels)}</svg>"
    )


def _xy(column: int, lane: int) -> tuple[int, int]:
    return (MARGIN + column * COLUMN, MARGIN + lane * LANE)


def _step_html(
    recording: Recording, line: TreeLine, thumbs_dir: Thumbs, last_point: dict[int, tuple[int, int]]
) -> str:
    step = line.step
    point = _point(step, last_point.get(step.parent) if step.parent is not None else None)
    if point is not None:
        last_point[step.id] = point
    shot = _shot(_read(thumbs_dir, step.thumbnail), step, point)
    branch = " branch" if line.branch_start else ""
    label = "branch starts here: " if line.branch_start else ""
    where = f" at ({point[0]}, {point[1]})" if point and step.action.point is None else ""
    return (
        f"<div class='step{branch}' id='step-{step.id}' style='margin-left:{line.indent * 32}px'>"
        f"{shot}<div><div class='num'>{label}step {line.depth + 1}</div>"
        f"<div><code>{_e(step.action.describe())}</code>{_e(where)}</div></div></div>"
    )


def _point(step: Step, previous: tuple[int, int] | None) -> tuple[int, int] | None:
    """Where the step acts: its own point, else where the pointer (the focus) was."""
    if step.action.point is not None:
        return step.action.point
    return step.fingerprint.pointer or previous


def _shot(data: bytes | None, step: Step, point: tuple[int, int] | None) -> str:
    if data is None:
        return "<div class='shot'><div class='no-shot'>no thumbnail</div></div>"
    marker = ""
    fp = step.fingerprint
    if point is not None and fp.width > 0 and fp.height > 0:
        left, top = 100 * point[0] / fp.width, 100 * point[1] / fp.height
        marker = f"<div class='marker' style='left:{left:.2f}%;top:{top:.2f}%'></div>"
    return f"<div class='shot'><img class='thumb' alt='' src='{_data_uri(data)}'>{marker}</div>"


def _divergence_html(recording: Recording, d: dict[str, Any], thumbs_dir: Thumbs) -> str:
    """The recorded and live task area side by side, at the screen's size, the regions
    that differed outlined on both, and the sentence that explains the divergence."""
    step = d.get("step")
    title = (
        f"{_e(d.get('at') or '')}: {_e(d.get('outcome') or '')} at step "
        f"{step if isinstance(step, int) else '?'}"
    )
    screens = {
        # Only ever a file of the recording's folder, by its plain name (see `_read`).
        key: _readable(
            _read(thumbs_dir, Path(d[key]).name) if isinstance(d.get(key), str) else None
        )
        for key in ("recorded", "live")
    }
    kept = [data for data in screens.values() if data]
    area = _rect(d.get("area")) or recording.area
    box = crop_box(area, _common_screen(kept)) if kept else None
    regions = [r for r in map(_rect, d.get("regions") or []) if r is not None]
    # The live screen shows the task where it was found: moved by the offset.
    dx, dy = d.get("offset") or (0, 0)
    images = []
    live_full = False
    for key, caption in (("recorded", "recorded"), ("live", "live screen")):
        data = screens[key]
        if data is None or box is None:
            images.append(f"<figure class='crop' data-screen='{key}'>(missing)</figure>")
            continue
        full = None
        if key == "live":
            here = crop_box(area and area.moved(dx, dy), _common_screen(kept))
            shown = [r.moved(dx, dy) for r in regions]
            full, at = _full_live(d, thumbs_dir)
            here = at or here
        else:
            here, shown = box, regions
        try:
            crop = full or area_crop(data, here)
        except (OSError, ValueError):  # a truncated file: its header read, not its pixels
            images.append(f"<figure class='crop' data-screen='{key}'>(unreadable)</figure>")
            continue
        live_full = full is not None
        caption = caption + (" (full resolution)" if live_full else "")
        drawn = outlined(crop, shown, here)
        images.append(
            f"<figure class='crop' data-screen='{key}' data-box='{_box(here)}' "
            f"data-outlines='{drawn}'><figcaption>{caption}</figcaption>"
            f"<img class='thumb' alt='{caption}: the task area' "
            f"src='{_data_uri(png_of(crop))}'></figure>"
        )
    why = _why_html(str(d.get("reason") or ""), d.get("regions"), regions, box)
    if box is None:
        where = "no screen was kept for this replay"
    elif area is None:
        where = "the whole screen (the recording keeps no task area)"
    else:
        where = f"the task area, {area}, and {CROP_MARGIN} px around it"
    return (
        f"<div class='divergence' data-step='{step if isinstance(step, int) else ''}'>"
        f"<div class='num'>diverged {title}</div><div class='where'>{_e(where)}, one pixel "
        f"a screen pixel ({_e(_scales(live_full))})</div>"
        f"<div class='pair'>{''.join(images)}{why}</div></div>"
    )


def _scales(live_full: bool) -> str:
    kept = f"kept at 1/{SCALE} scale: each kept pixel shows as {SCALE}x{SCALE}"
    if live_full:
        return f"the live screen as it was; the recorded one {kept}"
    return (
        f"screens {kept}; the live screen is kept at full size only for a recording that "
        "types no secret"
    )


def _full_live(d: dict[str, Any], thumbs_dir: Thumbs) -> tuple[Any, Rect | None]:
    """The live task area replay kept at the screen's own resolution, and where it was
    cut from (None, None: not kept, or unreadable: the thumbnail stands in)."""
    box = _rect(d.get("live_box"))
    name = d.get("live_area")
    if box is None or not isinstance(name, str):
        return None, None
    data = _readable(_read(thumbs_dir, Path(name).name))
    full = full_crop(data, box) if data else None
    return (full, box) if full is not None else (None, None)


def _why_html(reason: str, kept: object, regions: list[Rect], box: Rect | None) -> str:
    sentence, _, checks = reason.partition(". ")
    if not isinstance(kept, list):
        said = "the regions that differed were not kept by the replay that wrote this entry"
    elif not regions:
        said = "no region of the screen differed"
    else:
        inside = [r for r in regions if box is None or r.intersection(box) is not None]
        said = f"outlined: {plural(len(inside), 'region')} that differed" + (
            f" ({len(regions) - len(inside)} more outside the task area)"
            if len(inside) < len(regions)
            else ""
        )
    return (
        f"<div class='why'><p class='sentence'>{_e(sentence)}{'.' if checks else ''}</p>"
        f"<p class='checks'>{_e(checks)}</p><p class='outlines'>{_e(said)}</p></div>"
    )


def _readable(data: bytes | None) -> bytes | None:
    """A kept screen that decodes as an image, else None (shown as missing)."""
    from PIL import Image

    if data is None:
        return None
    try:
        screen_of(data)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    return data


def _common_screen(pngs: list[bytes]) -> Rect:
    """The screen both kept screens cover (they differ in size only when the screen's
    size changed)."""
    screen = screen_of(pngs[0])
    for data in pngs[1:]:
        screen = screen.intersection(screen_of(data)) or screen
    return screen


def _rect(value: object) -> Rect | None:
    """A rectangle of a history line (`catalog.rect_of`), or None."""
    if isinstance(value, Rect):
        return value
    found = rect_of(value)
    return Rect(*found) if found else None


def _box(r: Rect) -> str:
    return ",".join(map(str, r.as_list()))


def _read(thumbs_dir: Thumbs, file_name: str | None) -> bytes | None:
    """A thumbnail of the recording's folder: a plain file name, never through a link."""
    if not file_name:
        return None
    if isinstance(thumbs_dir, Path):
        return read_plain(thumbs_dir, file_name)
    return thumbs_dir(file_name)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
