"""The `mm` command lines of README.md and docs/cron.md, run as written.

Every line found in their code blocks is first run with an empty store and no display:
it must be accepted by the parser (an error it gives is a runtime one, with a documented
exit code). Then the README's lines run for real, in order, on Xvfb with the example loan
app, from a folder holding the files they name (`my_agent.py`, `rows.csv`,
`restart-app.sh`), each with its expected exit code; only the few in SKIPPED (a model API,
a path of the target machine) are not.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples.world import WANTED, LoanApp, stop_detached
from mmcli.store.recordings import Store

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOCS = ("README.md", "docs/cron.md")
CODES = {0, 1, 2, 3, 4, 5}
"""The documented exit codes (README, "Exit codes"); 130 is for an abort only."""
PARSER_ERROR = re.compile(
    r"see `mm[^`]*-h`|put the agent command after `--`|no such (option|command)|"
    r"unexpected extra argument|missing (argument|option)|Usage:|Traceback",
    re.I,
)


@dataclass(frozen=True)
class Example:
    doc: str
    line: str
    args: tuple[str, ...]
    """What follows `mm`."""

    @property
    def key(self) -> str:
        return shlex.join(self.args)


def _sh_example(doc: str, line: str) -> Example | None:
    words = shlex.split(line, comments=True)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words = words[1:]
    if not words or words[0] != "mm":
        return None
    return Example(doc, line, tuple(words[1:]))


def _scheduled_example(doc: str, line: str) -> Example | None:
    """A cron line (five schedule fields) or a systemd ExecStart running `.../bin/mm`."""
    words = shlex.split(line.removeprefix("ExecStart="))
    if not line.startswith("ExecStart="):
        words = words[5:]
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words = words[1:]
    if not words or not words[0].endswith("/mm"):
        return None
    args = []
    for word in words[1:]:
        if word.startswith((">", "2>", "<", "|")):
            break
        args.append(word)
    return Example(doc, line, tuple(args))


def examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text()
        for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            for line in body.replace("\\\n", " ").splitlines():  # continued lines joined
                if lang == "sh":
                    example = _sh_example(doc, line)
                elif lang in ("cron", "ini"):
                    example = _scheduled_example(doc, line)
                else:
                    continue
                if example is not None:
                    found.append(example)
    return found


EXAMPLES = examples()

SKIPPED = {
    "record shop --llm -- python agent.py": "needs a model API key and an agent calling it",
    "replay shop": "replays what the line above records",
    "replay shop --no-agent": "replays what the line above records",
    "replay loan --no-agent --timeout 20 --json": "paths of the target machine; "
    "tests/e2e/test_production.py runs the cron line with them replaced",
    "doctor --display vnc://10.0.0.5:5900": "a VNC server on another machine; "
    "tests/e2e/test_vnc.py runs these against x11vnc on 127.0.0.1",
    "record loan --display vnc://10.0.0.5:5900 -- python agent.py": "a VNC server on another "
    "machine; tests/e2e/test_vnc_record.py records an agent over x11vnc on 127.0.0.1",
    "record hello --display vnc://10.0.0.5:5900 -- sh -c 'vncdo -s \"${MM_VNC_ADDRESS%:*}::"
    '${MM_VNC_ADDRESS##*:}" -p "$MM_VNC_PASSWORD" move 200 150 click 1 type hello\'': "a VNC "
    "server on another machine; tests/e2e/test_vnc_record.py runs this line against x11vnc",
    "replay loan --display vnc://10.0.0.5:5900": "a VNC server on another machine; "
    "tests/e2e/test_vnc_record.py replays over x11vnc on 127.0.0.1",
    "worker loan --temporal temporal:7233 --before-each ./restart-app.sh": (
        "a fleet: tests/e2e/test_fleet.py runs workers on a real Temporal server and bucket"
    ),
    "batch submit loan --params-file rows.csv --temporal temporal:7233": "a fleet (as above)",
    "batch status loan-3f2a9c01d4 --temporal temporal:7233 --wait": "a fleet (as above)",
}


def test_the_examples_are_found() -> None:
    keys = [e.key for e in EXAMPLES]
    assert len(keys) >= 24, keys
    for expected in (
        "record loan --param 'name=John Smith' -- python my_agent.py --name 'John Smith'",
        "prune --unused-for 30d --dead-branches 14d --yes",
        "--version",
        "replay loan --no-agent --timeout 20 --json",
    ):
        assert expected in keys
    assert sum(k == "replay loan --no-agent --timeout 20 --json" for k in keys) == 2


def _run(args: tuple[str, ...], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`mm ARGS` as a shell would run it; `mm proxy` serves until stopped: once it says
    where it listens (or has exited), it is stopped."""
    command = [str(BIN / "mm"), *args]
    if args[:1] != ("proxy",):
        return subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    said = proc.stderr.readline()  # the line saying where it listens, or the error
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    return subprocess.CompletedProcess(command, proc.returncode, out, said + err)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.doc}: mm {e.key}" for e in EXAMPLES])
def test_every_example_is_accepted_by_the_parser(example: Example, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env.update(MM_HOME=str(tmp_path / "store"), COLUMNS="120", PATH=f"{BIN}:{env['PATH']}")
    done = _run(example.args, tmp_path, env)
    assert not PARSER_ERROR.search(done.stderr), done.stderr
    if example.args[:1] == ("proxy",):
        assert "mm proxy on http://127.0.0.1:8765" in done.stderr or "mm: error" in done.stderr
        return
    assert done.returncode in CODES, done.stderr


# ---- the README for real ------------------------------------------------------------------


MY_AGENT = """\
# The README's `my_agent.py`: the example loan agent on the example app.
import os, sys
agent = {agent!r}
os.execv(sys.executable, [sys.executable, agent, "--layout", {layout!r}, "--think", "0.05",
         "--email", {email!r}, "--amount", {amount!r}, "--product", {product!r}, *sys.argv[1:]])
"""


@dataclass
class Walk:
    work: Path
    store: Path
    app: LoanApp
    env: dict[str, str]

    def mm(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run(args, self.work, self.env)

    def names(self) -> list[str]:
        return [r["name"] for r in self.app.records()]


@pytest.fixture
def walk(xdisplay: str, tmp_path: Path) -> Iterator[Walk]:
    work = tmp_path / "work"
    work.mkdir()
    app = LoanApp(tmp_path / "app")
    (work / "my_agent.py").write_text(
        MY_AGENT.format(
            agent=str(ROOT / "examples" / "loan_agent.py"),
            layout=str(app.layout),
            **{k: v for k, v in WANTED.items() if k != "name"},
        )
    )
    (work / "rows.csv").write_text("name\nAda Lovelace\nGrace Hopper\n")
    script = work / "restart-app.sh"
    script.write_text(
        f"#!/bin/sh\nexec python {ROOT / 'examples' / 'world.py'} restart {app.workdir}\n"
    )
    script.chmod(0o755)
    env = {**os.environ, "DISPLAY": xdisplay, "COLUMNS": "120"}
    env.update(MM_HOME=str(tmp_path / "store"), PATH=f"{BIN}:{env['PATH']}")
    try:
        yield Walk(work, tmp_path / "store", app, env)
    finally:
        app.stop()
        stop_detached(app.workdir)


@dataclass(frozen=True)
class Plan:
    code: int | None
    """The expected exit code (None: `check` says)."""
    before: Callable[[Walk], object] = lambda w: None
    check: Callable[[Walk, subprocess.CompletedProcess[str]], object] = lambda w, r: None


def _fresh(*flags: str) -> Callable[[Walk], object]:
    def start(w: Walk) -> None:
        w.app.out.unlink(missing_ok=True)
        w.app.start(*flags)

    return start


def _said(text: str) -> Callable[[Walk, subprocess.CompletedProcess[str]], object]:
    def check(w: Walk, r: subprocess.CompletedProcess[str]) -> None:
        assert text in r.stderr + r.stdout, r.stderr

    return check


def _submitted(*names: str) -> Callable[[Walk, subprocess.CompletedProcess[str]], object]:
    def check(w: Walk, r: subprocess.CompletedProcess[str]) -> None:
        assert w.names() == list(names), r.stderr

    return check


def _batch(w: Walk, r: subprocess.CompletedProcess[str]) -> None:
    rows = json.loads(r.stdout)
    assert [row["replay"]["outcome"] for row in rows] == ["from-memory"] * 2, r.stdout
    assert w.names() == ["Ada Lovelace", "Grace Hopper"]
    stop_detached(w.app.workdir)


def _old_task(w: Walk) -> None:
    assert w.mm("export", "loan", "old.tar.gz").returncode == 0
    assert w.mm("import", "old.tar.gz", "--as", "old-task").returncode == 0


def _moved_back(w: Walk, r: subprocess.CompletedProcess[str]) -> None:
    assert Store(w.store).names() == ["loan-v1", "old-task"]
    assert w.mm("mv", "loan-v1", "loan").returncode == 0


def _proxy(w: Walk, r: subprocess.CompletedProcess[str]) -> None:
    listening = "mm proxy on http://127.0.0.1:8765" in r.stderr
    taken = r.returncode == 1 and "mm: error" in r.stderr and "8765" in r.stderr
    assert listening or taken, r.stderr  # the port may be taken on this machine


def _html(w: Walk, r: subprocess.CompletedProcess[str]) -> None:
    assert "<svg" in (w.work / "loan.html").read_text()


PLANS: dict[str, Plan] = {
    "record loan --param 'name=John Smith' -- python my_agent.py --name 'John Smith'": Plan(
        0, _fresh(), _submitted("John Smith")
    ),
    "replay loan --param 'name=Jane Doe' --no-agent": Plan(0, _fresh(), _submitted("Jane Doe")),
    # A popup at start: the screen differs at step 1, the recorded agent takes over.
    "replay loan --param 'name=Jane Doe'": Plan(
        0, _fresh("--popup-at-start"), _said("handing over to the agent")
    ),
    "replay loan --dry-run": Plan(0, _fresh(), _said("screen matches; would click")),
    "ls": Plan(0, check=_said("loan")),
    "show loan": Plan(0, check=_said("branch:")),
    "replay loan --no-agent --params-file rows.csv --before-each ./restart-app.sh --json": Plan(
        0, lambda w: w.app.stop(), _batch
    ),
    "doctor": Plan(0),
    "show loan --html loan.html": Plan(0, check=_html),
    "prune --unused-for 30d --dead-branches 14d --dry-run": Plan(0, check=_said("prune")),
    # No terminal to ask on (and no branch 7 here): refused, nothing deleted.
    "rm loan --branch 7": Plan(2, check=_said("(a step of the trunk)")),
    "rm old-task": Plan(2, _old_task, _said("not a terminal: add --yes")),
    "mv loan loan-v1": Plan(0, check=_moved_back),
    "export loan loan.tar.gz": Plan(0, check=lambda w, r: (w.work / "loan.tar.gz").stat()),
    "import loan.tar.gz --as loan-copy": Plan(
        0, check=lambda w, r: Store(w.store).load("loan-copy")
    ),
    "--version": Plan(0, check=_said("mm ")),
    "proxy --port 8765": Plan(None, check=_proxy),
    "prune --unused-for 30d --dead-branches 14d --yes": Plan(0),
}


def test_the_readme_examples_run_as_written(walk: Walk) -> None:
    started = time.monotonic()
    ran = []
    for example in EXAMPLES:
        if example.key in SKIPPED:
            continue
        assert example.key in PLANS, (
            f"{example.doc}: `mm {example.key}` is new: give it a Plan (or a SKIPPED reason)"
        )
        plan = PLANS[example.key]
        plan.before(walk)
        began = time.monotonic()
        done = walk.mm(*example.args)
        last = (done.stderr.strip().splitlines() or [""])[-1][:80]
        print(f"{time.monotonic() - began:5.1f}s exit {done.returncode} mm {example.key}: {last}")
        if plan.code is not None:
            assert done.returncode == plan.code, f"mm {example.key}:\n{done.stderr}"
        assert not PARSER_ERROR.search(done.stderr), done.stderr
        plan.check(walk, done)
        ran.append(example.key)
    assert len(ran) >= len(EXAMPLES) - len(SKIPPED) - 1
    print(f"{len(ran)} README examples in {time.monotonic() - started:.1f}s", file=sys.stderr)
