"""Store scale: `mm ls --json` and opening one recording in a store of many recordings.

    python -m benchmarks.perf.store_scale [--count 10000] [--repeats 3] [--json out.json]
    python -m benchmarks.perf.store_scale --count 1000 --no-profile      # a quick look

Records the 20-action task once (Xvfb, in-process), then fills a store with `--count`
copies: the TOML with its `name = "..."` line rewritten, and its thumbnail directory
(hard links by default, so the store takes little disk). Then times, as subprocesses,
`mm ls --json` (wall and peak memory of the child), `Store.load` of one name in a fresh
process, and `Store.load` in-process; and profiles one `mm ls --json` with cProfile.
`--store DIR` keeps the filled store there and reuses it on the next run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.perf.common import (
    Figure,
    Report,
    Spread,
    mm_command,
    mm_env,
    quiet_stderr,
    run_benchmark,
    run_timed,
    say,
)
from benchmarks.perf.replay import profile_tables
from benchmarks.perf.task import agent_command, fresh_start, problem
from examples.world import LoanApp
from mmcli.desktop.display import VirtualDisplay
from mmcli.store.recordings import Store

LS_TARGET_S = 1.5
LOAD_TARGET_MS = 50.0
SOURCE = "source"
NAME_LINE = re.compile(r'^name = ".*"$', re.MULTILINE)

FRESH_LOAD = """
import json, sys, time
t0 = time.perf_counter()
from mmcli.store.recordings import Store
t1 = time.perf_counter()
recording = Store(sys.argv[1]).load(sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1000, "load_ms": (t2 - t1) * 1000,
                  "steps": len(recording.steps)}))
"""


def record_source(work: Path) -> Path:
    """One real recording of the 20-action task; returns its store directory."""
    from mmcli.backends.x11 import X11Backend
    from mmcli.capture.record import RecordOptions
    from mmcli.params import Values
    from mmcli.verbs.record import record_agent as record

    store = work / "source-store"
    with VirtualDisplay():
        app = LoanApp(work / "app")
        backend = X11Backend(os.environ["DISPLAY"])
        try:
            fresh_start(app)
            with quiet_stderr():
                result = record(
                    Store(store),
                    backend,
                    SOURCE,
                    agent_command(app, 0.02),
                    Values(),
                    RecordOptions(observe=0),
                )
            why = problem(app)
        finally:
            backend.close()
            app.stop()
    if not result.saved or why:
        raise SystemExit(f"recording the task failed: {result.reason or why}")
    return store


def copy_name(i: int) -> str:
    return f"task-{i:05d}"


def fill(source_store: Path, store: Path, count: int, thumbnails: str) -> float:
    """Copy the source recording `count` times into `store`; returns the seconds it took."""
    started = time.perf_counter()
    text = (source_store / f"{SOURCE}.toml").read_text()
    thumbs = sorted((source_store / SOURCE).iterdir())
    store.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        name = copy_name(i)
        (store / f"{name}.toml").write_text(NAME_LINE.sub(f'name = "{name}"', text, count=1))
        if thumbnails == "none":
            continue
        tdir = store / name
        tdir.mkdir(exist_ok=True)
        for thumb in thumbs:
            if thumbnails == "link":
                os.link(thumb, tdir / thumb.name)
            else:
                shutil.copyfile(thumb, tdir / thumb.name)
    return time.perf_counter() - started


def ready_store(args: argparse.Namespace, work: Path) -> tuple[Path, float | None]:
    store = args.store or work / "store"
    marker = store / ".mm-bench.json"
    wanted = {"count": args.count, "thumbnails": args.thumbnails}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        say(f"reusing the store in {store}")
        return store, None
    if store.exists():
        if not marker.exists():
            raise SystemExit(f"{store} exists and was not made by this benchmark; not touching it")
        shutil.rmtree(store)
    say("recording the 20-action task once...")
    source = record_source(work)
    say(f"filling a store with {args.count} recordings...")
    seconds = fill(source, store, args.count, args.thumbnails)
    marker.write_text(json.dumps(wanted))
    return store, seconds


def time_ls(store: Path, count: int, repeats: int, state: str) -> tuple[list[float], list[float]]:
    """`mm ls --json` with the store's index absent (`cold`), up to date (`warm`), or up to
    date but for one recording modified since (`one-changed`)."""
    walls, rss = [], []
    for i in range(repeats):
        if state == "cold":
            Store(store).index_path().unlink(missing_ok=True)
        elif state == "one-changed":
            doc = store / f"{copy_name(i)}.toml"
            os.utime(doc, ns=(time.time_ns(), time.time_ns()))
        result = run_timed(mm_command("ls", "--json"), env=mm_env(store), timeout=3600)
        if result.returncode != 0:
            raise SystemExit(f"mm ls --json failed: {result.stderr[-1000:]}")
        rows = json.loads(result.stdout)
        broken = [r for r in rows if r.get("error")]
        if len(rows) != count or broken:
            raise SystemExit(f"mm ls --json listed {len(rows)} rows, {len(broken)} with errors")
        walls.append(result.wall)
        rss.append(result.maxrss_mb)
        say(
            f"mm ls --json, {state} index, {i + 1}/{repeats}: {result.wall:.2f} s, "
            f"{result.maxrss_mb:.0f} MB"
        )
    return walls, rss


def time_fresh_load(store: Path, name: str, repeats: int) -> list[dict[str, float]]:
    out = []
    for _ in range(repeats):
        result = run_timed([sys.executable, "-c", FRESH_LOAD, str(store), name], env=os.environ)
        if result.returncode != 0:
            raise SystemExit(f"loading {name} failed: {result.stderr[-1000:]}")
        out.append({**json.loads(result.stdout), "wall_ms": result.wall * 1000})
    return out


def time_inprocess_load(store: Path, name: str, repeats: int = 50) -> list[float]:
    s = Store(store)
    s.load(name)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s.load(name)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def profile_ls(store: Path, work: Path, top: int) -> dict[str, Any]:
    out = work / "ls.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "mmcli", "ls", "--json"]
    result = run_timed(command, env=mm_env(store), timeout=7200)
    if result.returncode != 0:
        raise SystemExit(f"profiling mm ls failed: {result.stderr[-1000:]}")
    return {"wall": round(result.wall, 2), **profile_tables(out, top)}


def run(args: argparse.Namespace, work: Path) -> Report:
    store, fill_seconds = ready_store(args, work)
    toml_bytes = (store / f"{copy_name(0)}.toml").stat().st_size
    report = Report(
        f"store scale: {args.count} recordings of 20 steps ({toml_bytes / 1024:.0f} KB TOML "
        f"each, thumbnails: {args.thumbnails})"
    )
    if fill_seconds is not None:
        report.details["fill_seconds"] = round(fill_seconds, 2)
    labels = {
        "cold": "mm ls --json, no index (first listing)",
        "warm": "mm ls --json, index up to date",
        "one-changed": "mm ls --json, one recording changed",
    }
    for state, label in labels.items():
        walls, rss = time_ls(store, args.count, args.repeats, state)
        key = state.replace("-", "_")
        ls = Spread.of(walls)
        report.add(Figure(f"ls_{key}_s", label, ls.median, "s", LS_TARGET_S, ls))
        report.add(
            Figure(
                f"ls_{key}_ms_per_recording", "  per recording", ls.median / args.count * 1000, "ms"
            )
        )
        report.add(Figure(f"ls_{key}_maxrss_mb", "  peak memory (ru_maxrss)", max(rss), "MB"))
        report.details[f"ls_{key}"] = {
            "walls": [round(w, 3) for w in walls],
            "maxrss_mb": [round(r, 1) for r in rss],
        }
    name = copy_name(args.count // 2)
    fresh = time_fresh_load(store, name, args.repeats)
    load = Spread.of([f["load_ms"] for f in fresh])
    report.add(
        Figure(
            "fresh_load_ms", "Store.load, fresh process", load.median, "ms", LOAD_TARGET_MS, load
        )
    )
    imports = Spread.of([f["import_ms"] for f in fresh])
    report.add(
        Figure(
            "fresh_import_ms",
            "  import mmcli.store.recordings first",
            imports.median,
            "ms",
            spread=imports,
        )
    )
    wall = Spread.of([f["wall_ms"] for f in fresh])
    report.add(Figure("fresh_wall_ms", "  whole process, wall", wall.median, "ms", spread=wall))
    warm = Spread.of(time_inprocess_load(store, name))
    report.add(
        Figure(
            "inprocess_load_ms", "Store.load, in-process", warm.median, "ms", LOAD_TARGET_MS, warm
        )
    )
    report.details.update(
        {
            "fresh_loads": fresh,
            "toml_bytes": toml_bytes,
        }
    )
    if not args.no_profile:
        for state in ("cold", "warm"):
            say(f"profiling one mm ls --json, {state} index...")
            if state == "cold":
                Store(store).index_path().unlink(missing_ok=True)
            report.details[f"profile_{state}"] = profile_ls(store, work, args.top)
    return report


def print_details(report: Report) -> None:
    for state in ("cold", "warm"):
        profile = report.details.get(f"profile_{state}")
        if not profile:
            continue
        for order, title in (
            ("tottime", "own time"),
            ("mmcli_cumulative", "cumulative time, mm's own functions"),
        ):
            print(
                f"\ncProfile of `mm ls --json`, {state} index ({profile['wall']} s under the "
                f"profiler), by {title}:"
            )
            for line in profile[order]:
                print(f"  {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="recordings in the store")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each measure")
    parser.add_argument(
        "--thumbnails",
        choices=("link", "copy", "none"),
        default="link",
        help="thumbnail directories as hard links (default), copies, or none",
    )
    parser.add_argument("--store", type=Path, help="build (or reuse) the store here and keep it")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile run")
    parser.add_argument("--top", type=int, default=20, help="profile lines to show")
    return run_benchmark(parser, run, print_details, display=False)


if __name__ == "__main__":
    raise SystemExit(main())
