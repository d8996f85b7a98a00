"""Builders for recordings and screens used by the unit and CLI tests."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from PIL import Image, ImageDraw

from mmcli.capture.steps import FinalScreen
from mmcli.model import Action, ActionKind, EndScreen, Recording, Step
from mmcli.screen.analysis import fingerprint_of
from mmcli.screen.fingerprint import Fingerprint, Frame, Grid, Patch, Rect

CREATED = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


def literal_fingerprint(seed: int, target: tuple[int, int] | None = (100, 200)) -> Fingerprint:
    """A fingerprint with fixed, made-up hash values (independent of image libraries)."""
    hashes = tuple((0x0123456789ABCDEF * (i + seed + 1)) & (2**64 - 1) for i in range(144))
    tones = tuple((i * 7 + seed) % 256 for i in range(144))
    details = tuple((i * 13 + seed) % 256 for i in range(144))
    patch = None
    if target is not None:
        patch = Patch(target[0], target[1], bytes((i + seed) % 16 for i in range(256)))
    return Fingerprint(
        1920,
        1080,
        Grid(16, 9, hashes, tones, details),
        patch,
        (5, 5),
        (Rect(10, 20, 30, 40),) if seed == 1 else (),
    )


def sample_recording(name: str = "sample") -> Recording:
    actions = [
        Action(ActionKind.CLICK, x=100, y=200),
        Action(ActionKind.TYPE, text="Hello {{name}}"),
        Action(ActionKind.HOTKEY, keys=("ctrl", "s")),
        Action(ActionKind.CLICK, x=300, y=400, button="right", clicks=2),
    ]
    steps = [
        Step(
            i,
            i - 1 if i else None,
            a,
            literal_fingerprint(i),
            thumbnail=f"t-{i:04d}.png",
            effect=Rect(90, 190, 40, 20) if i == 1 else None,
            created=CREATED,
        )
        for i, a in enumerate(actions)
    ]
    # A branch taken at the second step: the agent pressed enter instead.
    steps.append(
        Step(
            4, 0, Action(ActionKind.PRESS, keys=("enter",)), literal_fingerprint(9), created=CREATED
        )
    )
    return Recording(
        name=name,
        steps=steps,
        created=CREATED,
        command=["python", "agent.py", "--fast"],
        params=["name"],
        volatile=[Rect(1700, 10, 80, 16)],
        area=Rect(60, 160, 300, 260),
    )


def golden_recording(name: str = "sample") -> Recording:
    """`sample_recording` as the current format writes it: each path ends on a recorded
    outcome, and the branch ended on a new one (pending approval)."""
    rec = sample_recording(name)
    ends = {3: literal_fingerprint(20), 4: literal_fingerprint(21)}
    rec.steps = [
        replace(
            s,
            outcome=EndScreen(
                replace(ends[s.id], patch=None, pointer=None), f"t-{s.id:04d}-end.png"
            )
            if s.id in ends
            else None,
            pending=s.id == 4,
        )
        for s in rec.steps
    ]
    return rec


def form_screen(
    popup: bool = False,
    error: bool = False,
    text: str = "",
    caret: bool = False,
    button_color: str = "#d9d9d9",
    offset: tuple[int, int] = (0, 0),
) -> Image.Image:
    """A synthetic 1920x1080 screen with a form window, for fake-backend tests."""
    img = Image.new("RGB", (1920, 1080), "black")
    d = ImageDraw.Draw(img)
    ox, oy = 100 + offset[0], 100 + offset[1]
    d.rectangle([ox, oy, ox + 560, oy + 420], fill="#d9d9d9")
    d.text((ox + 20, oy + 20), "Acme Loan Intake", fill="black")
    d.text((ox + 20, oy + 80), "Name", fill="black")
    d.rectangle([ox + 100, oy + 75, ox + 400, oy + 95], fill="white", outline="black")
    if text:
        d.text((ox + 104, oy + 78), text, fill="black")
    if caret:
        x = ox + 104 + 6 * len(text)
        d.line([x, oy + 77, x, oy + 93], fill="black")
    d.rectangle([ox + 20, oy + 300, ox + 100, oy + 330], fill=button_color, outline="black")
    d.text((ox + 35, oy + 310), "Submit", fill="black")
    if error:
        d.text((ox + 20, oy + 360), "Amount must be a positive number", fill="red")
    if popup:
        d.rectangle([ox + 150, oy + 150, ox + 450, oy + 280], fill="#eeeeee", outline="black")
        d.text((ox + 180, oy + 180), "Scheduled maintenance tonight", fill="black")
        d.rectangle([ox + 270, oy + 240, ox + 330, oy + 265], fill="#d9d9d9", outline="black")
    return img


def fp_of(image: Image.Image, target: tuple[int, int] | None) -> Fingerprint:
    return fingerprint_of(Frame.from_image(image), target)


def ended_on(frame: Frame, titles: tuple[tuple[Rect, str], ...] = ()) -> FinalScreen:
    """A run's last screen as the recorder keeps it: `frame`, its thumbnail and the
    title bars over it; no detail of what it changed."""
    out = io.BytesIO()
    frame.thumbnail().save(out, "PNG")
    return FinalScreen(frame, out.getvalue(), None, None, titles)


def thumbnail_png(image: Image.Image) -> bytes:
    """`image` as a step keeps it: its downscaled thumbnail, as PNG."""
    out = io.BytesIO()
    Frame.from_image(image).thumbnail().save(out, "PNG")
    return out.getvalue()


def count_loads(monkeypatch: Any) -> tuple[list[str], list[str]]:
    """From now on, the names `Store.load` parses and `Store.read_text` reads, in order."""
    from mmcli.store.recordings import Store

    loads: list[str] = []
    reads: list[str] = []
    load, read_text = Store.load, Store.read_text

    def counted_load(self: Store, name: str) -> Any:
        loads.append(name)
        return load(self, name)

    def counted_read(self: Store, name: str) -> str:
        reads.append(name)
        return read_text(self, name)

    monkeypatch.setattr(Store, "load", counted_load)
    monkeypatch.setattr(Store, "read_text", counted_read)
    return loads, reads


def peak_memory(*argv: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run `argv` from a small Python process and return its result and its own peak
    resident memory in MB. Not measured from the test process itself: a child forked from
    a big process counts the parent's pages until it execs."""
    script = (
        "import json, os, subprocess, sys, threading\n"
        "child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "got = {}\n"
        "def read(key, stream): got[key] = stream.read().decode('utf-8', 'replace')\n"
        "readers = [threading.Thread(target=read, args=('out', child.stdout)),\n"
        "           threading.Thread(target=read, args=('err', child.stderr))]\n"
        "[r.start() for r in readers]\n"
        "_, status, usage = os.wait4(child.pid, 0)\n"
        "[r.join() for r in readers]\n"
        "code = os.waitstatus_to_exitcode(status)\n"
        "print(json.dumps({'code': code, 'peak': usage.ru_maxrss, **got}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=timeout
    )
    report = json.loads(done.stdout)
    result = subprocess.CompletedProcess(list(argv), report["code"], report["out"], report["err"])
    return result, report["peak"] / 1024
