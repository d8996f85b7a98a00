"""The reference agent's xdotool command lines, bare, under `mm record` and as a fallback
agent, side by side.

    python -m benchmarks.perf.xdotool [--rounds 3] [--repeats 5] [--pause 0.3] [--json out.json]

The widely copied computer-use reference agent acts by running one `xdotool` command line
per action (mouse_move, left_click with and without a point, double_click, mouse
down/up, type in chunks of 50 with a 12 ms delay, key, cursor_position) and `mm act`
is the channel for agents in any other language. On a fresh Xvfb with the example app,
one bash agent runs each of those exact command lines `--repeats` times, timing each
with `$EPOCHREALTIME` around it. The agent runs bare, under `mm record --observe 0`, and
as the fallback agent of a replay that diverges at its first step (`mm replay SEED
--agent 'bash agent.sh'`: the agent heals it, under the recorder), in rotating sessions
(`--rounds` of each; each round's seed is a click recorded on the empty screen before the
app starts). The pointer alternates between two fields, so each `mousemove --sync` is a
real move (bare xdotool waits out its 15 s timeout for a pointer already there too).
Per command line: the median bare, under `mm record` and in a fallback, and their
overhead over bare (target <= 30 ms). Back to back, a line right after an input the app
has not answered yet waits for the answer (and a click for the hover its pointer move
may draw: `mmcli/capture/recorder.py`); with `--pause` of 0.25 s or more (the reference
agent looks at the screen 2 s after each action) none is due. Bare, `mm act click` runs
outside any recorder: its start-up against `python -c pass` (target <= 5x).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from benchmarks.perf.common import (
    Figure,
    Report,
    Spread,
    mm_command,
    mm_env,
    run_benchmark,
    run_timed,
    say,
)
from examples.world import LoanApp

OVERHEAD_MS = 30.0
ACT_RATIO = 5.0
CHUNK = "John Smith "
"""One chunk of typed text (the reference agent types chunks of up to 50 characters)."""


def command_lines(a: str, b: str, mm: str) -> list[tuple[str, str]]:
    """(key, command line) in the order one round runs them; the pointer starts at `b`.
    Each key is timed once a round except `mousemove`, timed twice."""
    return [
        ("mousemove --sync", f"xdotool mousemove --sync {a}"),
        ("click 1", "xdotool click 1"),
        ("mm act click", f"{mm} act click {a}"),
        ("type chunk", f"xdotool type --delay 12 -- {shlex.quote(CHUNK)}"),
        ("key", "xdotool key -- End"),
        ("mousemove --sync click 1", f"xdotool mousemove --sync {b} click 1"),
        ("mousemove", f"xdotool mousemove {a}"),
        ("click --repeat 2 --delay 10", "xdotool click --repeat 2 --delay 10 1"),
        ("mousedown 1", "xdotool mousedown 1"),
        ("mouseup 1", "xdotool mouseup 1"),
        ("getmouselocation", "xdotool getmouselocation --shell"),
        ("search", "xdotool search --name '^Acme Loan Intake$'"),
        ("mousemove", f"xdotool mousemove {b}"),
        ("python -c pass", f"{shlex.quote(sys.executable)} -c pass"),
    ]


def agent_script(lines: list[tuple[str, str]], b: str, repeats: int, pause: float = 0.0) -> str:
    """Bash that runs the command lines `repeats` times, appending `key start end` for
    each to the file named by $MM_BENCH_TIMES, and sleeping `pause` seconds (untimed)
    after each."""
    timed = "\n".join(f"  t {shlex.quote(key)} {line}" for key, line in lines)
    sleep = f"  sleep {pause:g}\n" if pause > 0 else ""
    return f"""set -e
t() {{
  local key=$1 start=$EPOCHREALTIME
  shift
  "$@" >/dev/null
  echo "$key|$start|$EPOCHREALTIME" >> "$MM_BENCH_TIMES"
{sleep}}}
xdotool mousemove {b}
for ((round = 0; round < {repeats}; round++)); do
{timed}
done
"""


def _times(path: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for line in path.read_text().splitlines():
        key, start, end = line.split("|")
        out[key].append((float(end) - float(start)) * 1000)
    path.unlink()
    return out


def _mm() -> str:
    """`mm` as an agent runs it: the installed command beside this Python, if there is one."""
    script = Path(sys.executable).with_name("mm")
    return shlex.quote(str(script)) if script.exists() else shlex.join(mm_command())


MODES = ("bare", "record", "fallback")


def run(args: argparse.Namespace, work: Path) -> Report:
    if shutil.which("xdotool") is None:
        raise SystemExit("xdotool is not installed (apt-get install xdotool)")
    app = LoanApp(work / "app").start()
    try:
        a, b = ("{} {}".format(*app.center(label)) for label in ("Name", "Email"))
        app.stop()
        store = work / "store"
        _record_seeds(work, store, a, args.rounds)
        app.start()
        lines = command_lines(a, b, _mm())
        script = work / "agent.sh"
        script.write_text(agent_script(lines, b, args.repeats, args.pause))
        times = work / "times"
        samples: dict[str, dict[str, list[float]]] = {mode: {} for mode in MODES}
        for i in range(args.rounds):
            for mode in MODES[i % 3 :] + MODES[: i % 3]:
                command, run_env = _session(mode, i, script, store, times)
                done = run_timed(command, run_env, timeout=900)
                # A heal ends on an outcome the seed never saw: pending, exit 6.
                if done.returncode not in ((0, 6) if mode == "fallback" else (0,)):
                    raise SystemExit(f"{mode} run failed ({done.returncode}):\n{done.stderr}")
                found = _times(times)
                if not found:
                    raise SystemExit(f"{mode} run timed nothing (did the agent run?)")
                for key, values in found.items():
                    samples[mode].setdefault(key, []).extend(values)
                say(f"round {i + 1}: {mode} {done.wall:.1f} s")
    finally:
        app.stop()
    return _report(args, lines, samples)


def _record_seeds(work: Path, store: Path, a: str, rounds: int) -> None:
    """One recording a round for the fallback sessions: a click where the form's Name
    field will be, recorded on the empty screen, so that its replay on the form diverges
    at its first step and hands over to the agent (a new seed each round: a healed one
    would replay the heal from memory)."""
    seed = work / "seed.sh"
    seed.write_text(f"xdotool mousemove --sync {a} click 1\n")
    for i in range(rounds):
        command = mm_command("record", f"seed-{i}", "--observe", "0", "--", "bash", str(seed))
        done = run_timed(command, mm_env(store), timeout=300)
        if done.returncode != 0:
            raise SystemExit(f"recording seed-{i} failed ({done.returncode}):\n{done.stderr}")


def _session(
    mode: str, i: int, script: Path, store: Path, times: Path
) -> tuple[list[str], dict[str, str]]:
    """The command running the agent in `mode`, and its environment."""
    if mode == "bare":
        return ["bash", str(script)], {**os.environ, "MM_BENCH_TIMES": str(times)}
    if mode == "record":
        command = mm_command("record", f"xdotool-{i}", "--observe", "0", "--", "bash", str(script))
    else:  # the seed diverges at once: the agent heals it, under the recorder
        agent = shlex.join(["bash", str(script)])
        command = mm_command("replay", f"seed-{i}", "--agent", agent, "--timeout", "2")
    return command, mm_env(store, MM_BENCH_TIMES=str(times))


def _report(
    args: argparse.Namespace,
    lines: list[tuple[str, str]],
    samples: dict[str, dict[str, list[float]]],
) -> Report:
    report = Report(
        f"xdotool command lines bare, under mm record and as a fallback agent, "
        f"{args.rounds} sessions each, {args.repeats} repeats a session"
        + (f", {args.pause:g} s between lines" if args.pause else ", back to back")
    )
    shown = dict(lines)
    for key in shown:
        bare = Spread.of(samples["bare"][key])
        command = shown[key].replace(sys.executable, "python")
        if key == "python -c pass":
            report.add(Figure("python_ms", "python -c pass", bare.median, "ms", spread=bare))
            continue
        if key == "mm act click":
            report.add(
                Figure("act_outside_ms", "mm act click, outside a recorder", bare.median, "ms",
                       spread=bare)
            )  # fmt: skip
            for mode, name, where in (
                ("record", "recorded", "under mm record"),
                ("fallback", "fallback", "as a fallback agent"),
            ):
                got = Spread.of(samples[mode][key])
                report.add(
                    Figure(f"act_{name}_ms", f"mm act click, {where}", got.median, "ms",
                           spread=got)
                )  # fmt: skip
            continue
        report.add(Figure(f"{key}_bare_ms", f"{command}: bare", bare.median, "ms", spread=bare))
        for mode, where in (("record", "under mm record"), ("fallback", "as a fallback agent")):
            _overhead(report, key, command, mode, where, samples)
    python = statistics.median(samples["bare"]["python -c pass"])
    act = statistics.median(samples["bare"]["mm act click"])
    report.add(
        Figure("act_outside_ratio", "mm act click outside a recorder / python -c pass",
               act / python, "x", ACT_RATIO)
    )  # fmt: skip
    report.details = {
        mode: {k: [round(v, 2) for v in vs] for k, vs in by_key.items()}
        for mode, by_key in samples.items()
    }
    return report


def _overhead(
    report: Report,
    key: str,
    command: str,
    mode: str,
    where: str,
    samples: dict[str, dict[str, list[float]]],
) -> None:
    """A command line's median in `mode`, and its overhead over bare (target <= 30 ms)."""
    got = Spread.of(samples[mode][key])
    over = got.median - statistics.median(samples["bare"][key])
    best = min(samples[mode][key]) - min(samples["bare"][key])
    suffix = "" if mode == "record" else f"_{mode}"
    report.add(Figure(f"{key}_{mode}_ms", f"{command}: {where}", got.median, "ms", spread=got))
    report.add(
        Figure(f"{key}{suffix}_overhead_ms", f"{command}: overhead {where}", over, "ms",
               OVERHEAD_MS, note=f"best of each: {best:+.1f} ms")
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="sessions of each mode")
    parser.add_argument("--repeats", type=int, default=5, help="rounds of commands a session")
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds the agent waits after each line, untimed (the reference agent "
        "looks at the screen 2 s after each action; back to back by default)",
    )
    return run_benchmark(parser, run)


if __name__ == "__main__":
    raise SystemExit(main())
