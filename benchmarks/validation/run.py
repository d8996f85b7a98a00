"""Screen-validation benchmark on real screens of the example app under Xvfb.

For each labelled scenario (benchmarks/validation/scenarios.py) the app is started with
the scenario's perturbation, driven blindly to the step being judged, and the live
screen is judged by mm's matcher and by the naive baseline (whole-screen 64-bit pHash,
safe when the distance is <= 8). Prints, in one run: unsafe screens judged safe (must be
0 for mm), harmless screens judged unsafe, and the per-step check time next to a raw mss
grab of the same screen.

    python -m benchmarks.validation.run            # starts its own Xvfb
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import imagehash
from PIL import Image

from benchmarks.validation.scenarios import SCENARIOS, At, Label, Scenario
from examples.world import LoanApp, agent_command
from mmcli.backends.x11 import X11Backend
from mmcli.capture.record import RecordOptions
from mmcli.capture.settling import settle
from mmcli.desktop.display import VirtualDisplay
from mmcli.model import POINTED, ActionKind, Recording, Step
from mmcli.params import Values
from mmcli.replay.replayer import Replayer
from mmcli.replay.report import ReplayOptions
from mmcli.screen.matcher import Policy, Verdict, compare
from mmcli.store.recordings import Store
from mmcli.verbs.record import record_agent as record

NAIVE_TOLERANCE = 8
FAR = (1500, 900)


@dataclass
class Judgement:
    scenario: Scenario
    ours_safe: bool
    ours_reason: str
    naive_safe: bool
    naive_distance: int
    checks: int


def step_at(recording: Recording, at: At) -> int:
    """The index on the trunk of the step a scenario is judged at."""
    trunk = recording.trunk()
    if at is At.FIRST:
        return 0
    if at is At.TYPE_NAME:
        return next(i for i, s in enumerate(trunk) if s.action.kind is ActionKind.TYPE)
    clicks = [i for i, s in enumerate(trunk) if s.action.kind is ActionKind.CLICK]
    if at is At.CLICK_EMAIL:
        return clicks[1]
    return clicks[-2]  # Submit; the last click closes the confirmation


def drive(backend: X11Backend, steps: list[Step], values: dict[str, str]) -> None:
    """Perform steps blindly (like an RPA script), letting the app settle after each."""
    for step in steps:
        if step.fingerprint.pointer is not None:
            backend.move(*step.fingerprint.pointer)
        backend.perform(step.action.render(values))
        time.sleep(0.05)
        settle(backend)


def phash_of(image: Image.Image) -> imagehash.ImageHash:
    return imagehash.phash(image)


def judge(
    backend: X11Backend,
    store: Store,
    recording: Recording,
    index: int,
    scenario: Scenario,
    app: LoanApp,
) -> Judgement:
    step = recording.trunk()[index]
    if scenario.pointer == "far":
        backend.move(*FAR)
    elif scenario.pointer:
        backend.move(*app.center(scenario.pointer))
    elif step.fingerprint.pointer is not None:
        backend.move(*step.fingerprint.pointer)  # what replay does before checking
    time.sleep(0.15)
    settle(backend)
    frames = [backend.grab()]
    if scenario.caret_phases:
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            time.sleep(0.05)
            frames.append(backend.grab())
    replayer = Replayer(store, backend, recording, Values(), ReplayOptions())
    references = replayer.screens.references(step)
    verdicts: list[Verdict] = [
        compare(
            step.fingerprint,
            f,
            Policy.DEFAULT,
            recording.ignore,
            area=recording.area,
            references=references,
            pointer_step=step.action.kind in POINTED,
        )
        for f in frames
    ]
    worst = next((v for v in verdicts if not v.ok), verdicts[0])
    assert step.thumbnail is not None
    recorded_thumb = Image.open(store.thumbs.folder(recording.name) / step.thumbnail)
    naive = int(max(phash_of(recorded_thumb) - phash_of(f.thumbnail()) for f in frames))
    return Judgement(
        scenario, worst.ok, worst.summary(1), naive <= NAIVE_TOLERANCE, naive, len(frames)
    )


def timings(
    backend: X11Backend, store: Store, recording: Recording, rounds: int = 60
) -> tuple[float, float]:
    """Median ms of a raw mss grab and of a full check (grab + fingerprint + compare),
    interleaved on the same screen."""
    step = recording.trunk()[0]
    replayer = Replayer(store, backend, recording, Values(), ReplayOptions())
    references = replayer.screens.references(step)
    raw, check = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        backend._mss.grab(backend._monitor)
        t1 = time.perf_counter()
        compare(
            step.fingerprint,
            backend.grab(),
            Policy.DEFAULT,
            recording.ignore,
            area=recording.area,
            references=references,
        )
        t2 = time.perf_counter()
        raw.append((t1 - t0) * 1000)
        check.append((t2 - t1) * 1000)
    return statistics.median(raw), statistics.median(check)


def record_world(backend: X11Backend, store: Store, app: LoanApp) -> None:
    values = Values({"name": "John Smith"})
    app.start()
    result = record(store, backend, "plain", agent_command(app), values, RecordOptions(observe=1.2))
    assert result.saved, "recording the agent failed"
    app.start("--clock")
    result = record(store, backend, "clock", agent_command(app), values, RecordOptions(observe=1.2))
    assert result.saved, "recording the agent (clock) failed"
    app.stop()


def run(work: Path, only: set[str] | None) -> dict[str, object]:
    backend = X11Backend(os.environ["DISPLAY"])
    store = Store(work / "store")
    app = LoanApp(work / "app")
    try:
        record_world(backend, store, app)
        judgements = []
        for scenario in SCENARIOS:
            if only and scenario.key not in only:
                continue
            recording = store.load(scenario.recording)
            app.start(*scenario.flags)
            if scenario.window_in_front:
                app.open_window_in_front()
            index = step_at(recording, scenario.at)
            values = {"name": scenario.name}
            drive(backend, recording.trunk()[:index], values)
            judgements.append(judge(backend, store, recording, index, scenario, app))
            print(_row(judgements[-1]), file=sys.stderr)
        app.start()
        raw_ms, check_ms = timings(backend, store, store.load("plain"))
    finally:
        app.stop()
    return summary(judgements, raw_ms, check_ms)


def _row(j: Judgement) -> str:
    ours = "safe  " if j.ours_safe else "UNSAFE"
    naive = "safe  " if j.naive_safe else "UNSAFE"
    wrong = (j.ours_safe and j.scenario.label is Label.UNSAFE) or (
        not j.ours_safe and j.scenario.label is Label.HARMLESS
    )
    mark = " <-- wrong" if wrong else ""
    return (
        f"{j.scenario.key:<20} {j.scenario.label:<9} mm: {ours} naive: {naive} "
        f"(pHash {j.naive_distance:>2}){mark}  {j.ours_reason[:90]}"
    )


def summary(judgements: list[Judgement], raw_ms: float, check_ms: float) -> dict[str, object]:
    unsafe = [j for j in judgements if j.scenario.label is Label.UNSAFE]
    harmless = [j for j in judgements if j.scenario.label is Label.HARMLESS]

    def rate(items: list[Judgement], attr: str, want: bool) -> tuple[int, int]:
        return sum(1 for j in items if getattr(j, attr) == want), len(items)

    out: dict[str, object] = {
        "scenarios": len(judgements),
        "mm_unsafe_judged_safe": rate(unsafe, "ours_safe", True),
        "mm_harmless_judged_unsafe": rate(harmless, "ours_safe", False),
        "naive_unsafe_judged_safe": rate(unsafe, "naive_safe", True),
        "naive_harmless_judged_unsafe": rate(harmless, "naive_safe", False),
        "raw_grab_ms": round(raw_ms, 2),
        "check_ms": round(check_ms, 2),
        "check_over_grab": round(check_ms / raw_ms, 2),
        "rows": [
            {
                "scenario": j.scenario.key,
                "label": str(j.scenario.label),
                "mm_safe": j.ours_safe,
                "naive_safe": j.naive_safe,
                "naive_phash_distance": j.naive_distance,
                "mm_reason": j.ours_reason,
            }
            for j in judgements
        ],
    }
    return out


def print_summary(out: dict[str, object]) -> None:
    def pct(pair: object) -> str:
        n, total = pair  # type: ignore[misc]
        return f"{n}/{total} ({100 * n / max(total, 1):.0f} %)"

    print(f"\nscreen validation, {out['scenarios']} scenarios on real screens (Xvfb 1920x1080)")
    print(f"{'':<34}{'mm':>14}{'naive pHash<=8':>18}")
    print(
        f"{'unsafe judged safe (want 0)':<34}{pct(out['mm_unsafe_judged_safe']):>14}"
        f"{pct(out['naive_unsafe_judged_safe']):>18}"
    )
    print(
        f"{'harmless judged unsafe (<= 5 %)':<34}{pct(out['mm_harmless_judged_unsafe']):>14}"
        f"{pct(out['naive_harmless_judged_unsafe']):>18}"
    )
    print(
        f"per-step check (grab + fingerprint + compare): {out['check_ms']} ms median; "
        f"raw mss grab: {out['raw_grab_ms']} ms; ratio {out['check_over_grab']}x (target <= 3x)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run only these scenario keys")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mm-bench-") as tmp, VirtualDisplay():
        out = run(Path(tmp), set(args.only) if args.only else None)
    print_summary(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
