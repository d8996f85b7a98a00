"""What reading typed text back costs: one read through the accessibility tree (AT-SPI, a
GTK 3 entry), one by OCR (the example Tk form's Name field) and one by OCR under another
app's notification over that field (xcompmgr running), each the median of `--reads`;
and what it adds to a replay, side by side in one run: the example task replayed with
its typing steps' read-backs as recorded, and with them taken out (as a recording made
before mm read fields back), alternating.

    python -m benchmarks.perf.readback [--reads 20] [--replays 5] [--json out.json]

Steps that type nothing read nothing: the difference between the two replays is spread
over the typing steps alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.perf.common import Figure, Report, Spread, quiet_stderr, run_benchmark, say
from examples.world import LoanApp, agent_command
from mmcli.model import ActionKind
from mmcli.params import Values
from mmcli.store.recordings import Store


def read_costs(reads: int, work: Path) -> tuple[list[float], list[float], list[float]]:
    """Seconds of each read: through AT-SPI (a zenity entry, with its bus), by OCR (Tk),
    and by OCR under another app's notification (`read_under_costs`)."""
    import os

    from mmcli.backends.x11 import X11Backend
    from mmcli.readback.field import FieldText
    from tests.accessibility import AccessibilityBus, zenity_entry

    backend = X11Backend(os.environ["DISPLAY"])
    tree: list[float] = []
    ocr: list[float] = []
    try:
        with AccessibilityBus(os.environ["DISPLAY"]) as bus, zenity_entry(bus, "Readback") as app:
            app.type("Ada Lovelace")
            for _ in range(reads):
                started = time.perf_counter()
                got = backend.read_field(None)
                tree.append(time.perf_counter() - started)
                if not isinstance(got, FieldText) or got.text != "Ada Lovelace":
                    raise SystemExit(f"the accessibility read failed: {got}")
        form = LoanApp(work / "form").start()
        try:
            x, y = form.center("Name")
            subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True)
            subprocess.run(["xdotool", "type", "Ada Lovelace"], check=True)
            time.sleep(0.3)
            widget = form.widgets()["Name"]
            from mmcli.screen.fingerprint import Rect

            box = Rect(widget["x"] + 2, widget["y"] + 2, widget["w"] - 4, widget["h"] - 4)
            frame = backend.grab()
            for _ in range(reads):
                started = time.perf_counter()
                got = backend.read_field(box, frame, "ocr")
                ocr.append(time.perf_counter() - started)
                if not isinstance(got, FieldText) or got.text != "Ada Lovelace":
                    raise SystemExit(f"the OCR read failed: {got}")
            under = read_under_costs(backend, form, reads, work)
        finally:
            form.stop()
    finally:
        backend.close()
    return tree, ocr, under


def read_under_costs(backend: Any, form: LoanApp, reads: int, work: Path) -> list[float]:
    """Seconds of each OCR read of the Name field with another app's notification over
    its middle, read under it in the form's own pixels (openbox tells the windows, a
    compositing manager, xcompmgr, keeps their pixels)."""
    from mmcli.readback.field import FieldText
    from mmcli.screen.fingerprint import Rect

    # The window manager tells which window has the keyboard and what stands above it
    # (it frames the form: the field is where the form's layout says once it has).
    manager = subprocess.Popen(["openbox"], stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    widget = form.widgets()["Name"]
    box = Rect(widget["x"] + 2, widget["y"] + 2, widget["w"] - 4, widget["h"] - 4)
    ready = work / "card-ready"
    at = f"{box.x + box.w // 2},{box.y - 4},{box.w // 3},{box.h + 8}"
    x, y = box.x + 8, box.y + box.h // 2
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True)
    compositor = subprocess.Popen(["xcompmgr"])
    card = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.notifier", "--at", at, "--ready", str(ready),
         "--kind", "NOTIFICATION", "--override"],
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not ready.exists():
            if card.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the notification over the field did not appear")
            time.sleep(0.05)
        time.sleep(1.0)  # the compositing manager has drawn the screen with it
        frame = backend.grab()
        took: list[float] = []
        for _ in range(reads):
            started = time.perf_counter()
            got = backend.read_field(box, frame, "ocr")
            took.append(time.perf_counter() - started)
            if not isinstance(got, FieldText) or not got.under or got.text != "Ada Lovelace":
                raise SystemExit(f"the read under the notification failed: {got}")
        return took
    finally:
        for process in (card, compositor, manager):
            process.terminate()
            process.wait(timeout=10)


def replay_seconds(store: Path, app: LoanApp, name: str) -> float:
    """mm's own seconds for one `--no-agent` replay of `name` (its `--json` report)."""
    import json

    app.out.unlink(missing_ok=True)
    app.start()
    done = subprocess.run(
        [sys.executable, "-m", "mmcli", "--store", str(store), "replay", name, "--no-agent",
         "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"replay of {name} failed (exit {done.returncode}): {done.stderr}")
    return float(json.loads(done.stdout)["seconds"])


def run(args: argparse.Namespace, work: Path) -> Report:
    from mmcli.backends.x11 import X11Backend
    from mmcli.capture.record import RecordOptions
    from mmcli.verbs.record import record_agent as record

    say(f"reading a field {args.reads} times through the accessibility tree and by OCR...")
    tree, ocr, under = read_costs(args.reads, work)
    store = Store(work / "store")
    app = LoanApp(work / "app")
    backend = X11Backend(os.environ["DISPLAY"])
    try:
        app.start()
        say("recording the example agent...")
        with quiet_stderr():
            result = record(
                store, backend, "read", agent_command(app), Values(), RecordOptions(observe=0.5)
            )
        if not result.saved:
            raise SystemExit(f"recording the example agent failed: {result.reason}")
    finally:
        backend.close()
    recording = store.load("read")
    typed = sum(1 for s in recording.steps if s.action.kind is ActionKind.TYPE)
    read_back = sum(1 for s in recording.steps if s.landed is not None and s.landed.text)
    blind = replace(
        recording, name="blind", steps=[replace(s, landed=None) for s in recording.steps]
    )
    pictures = {n: store.read_thumbnail("read", n) for n in blind.thumbnail_names()}
    store.save(blind, {n: data for n, data in pictures.items() if data is not None})
    with_read: list[float] = []
    without: list[float] = []
    try:
        for n in range(args.replays):
            with_read.append(replay_seconds(store.root, app, "read"))
            without.append(replay_seconds(store.root, app, "blind"))
            say(f"replay {n + 1}: {with_read[-1]:.3f} s reading back, {without[-1]:.3f} s not")
    finally:
        app.stop()
    report = Report(
        f"reading typed text back: {args.reads} reads each, {args.replays} replays each way "
        f"of a {len(recording.steps)}-step task typing {typed} values ({read_back} read back "
        "when recorded)"
    )
    tree_ms, ocr_ms = Spread.of([t * 1000 for t in tree]), Spread.of([t * 1000 for t in ocr])
    report.add(
        Figure("tree_read_ms", "accessibility read, median", tree_ms.median, "ms", spread=tree_ms)
    )
    report.add(Figure("ocr_read_ms", "OCR read, median", ocr_ms.median, "ms", spread=ocr_ms))
    under_ms = Spread.of([t * 1000 for t in under])
    report.add(
        Figure(
            "ocr_under_read_ms",
            "OCR read under another app's notification (the form's own pixels), median",
            under_ms.median,
            "ms",
            spread=under_ms,
        )
    )
    extra = (statistics.median(with_read) - statistics.median(without)) * 1000
    report.add(
        Figure(
            "per_typed_step_ms",
            "replay's added time a typing step (median replays)",
            extra / max(typed, 1),
            "ms",
            note=f"{statistics.median(with_read):.3f} s against {statistics.median(without):.3f} s",
        )
    )
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=20)
    parser.add_argument("--replays", type=int, default=5)
    return run_benchmark(parser, run)


if __name__ == "__main__":
    raise SystemExit(main())
