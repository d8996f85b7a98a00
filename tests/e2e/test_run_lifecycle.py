"""Every kind of run keeps its recording, end to end through the real `mm`: while a screen
replay or `mm record --add`, a model-API replay or `mm record --llm --add`, or an SDK call
is in progress (its agent waiting for the test's go), `mm rm`, `mm mv` and `mm import
--overwrite` are refused, `mm prune` skips the recording, a second `mm record NAME
--overwrite` is refused before its agent runs and a second `mm record NAME` finds it taken;
then the run finishes and what it learned is saved whole. A run killed with SIGKILL leaves
no mark behind (its agent still running)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image

from mmcli.desktop.display import start_xvfb, stop_xvfb
from mmcli.store.recordings import Store
from tests.helpers import sample_recording
from tests.llm.fake_model import FakeModel

pytestmark = pytest.mark.e2e

MM = [sys.executable, "-m", "mmcli"]
NAME = "task"
REFUSED = "is being replayed or recorded"

WAIT_FOR_GO = """
import os, sys, time
from pathlib import Path
out = Path(sys.argv[1])
(out / "started").write_text(str(os.getpid()))
deadline = time.time() + 60
while not (out / "go").exists() and time.time() < deadline:
    time.sleep(0.05)
"""

LLM_AGENT = (
    WAIT_FOR_GO
    + """
import anthropic
anthropic.Anthropic(api_key="k", max_retries=0).messages.create(
    model="m", max_tokens=10, messages=[{"role": "user", "content": "run " + sys.argv[2]}])
"""
)

SDK_WORKER = """
import sys, time
from pathlib import Path
from mmcli import Check, Engine

out = Path(sys.argv[1])
engine = Engine(name=sys.argv[2])


@engine.function(pre_check=Check(lambda text: "form", lambda cur, cand: cur == cand))
def type_text(text: str) -> None:
    pass


def agent(who: str) -> None:
    (out / "started").touch()
    deadline = time.time() + 60
    while not (out / "go").exists() and time.time() < deadline:
        time.sleep(0.05)
    type_text(who)


engine.set_agent(agent).finalize()
print(engine(sys.argv[3], tags=[sys.argv[3]]))
"""

SECOND_AGENT = "import sys; open(sys.argv[1], 'w')"
"""A second record's agent: leaves a file if it ever runs."""


def mm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MM, *args],
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def steps(name: str) -> int:
    """How many steps `mm ls` counts in NAME, which it read whole without an error."""
    listed = {e["name"]: e for e in json.loads(mm("ls", "--json").stdout)}
    assert not listed[name].get("error"), listed[name]
    return int(listed[name]["steps"])


@dataclass
class Kind:
    """How a test drives one kind of run: its recording made, a run of it started (its
    agent waits for `go`), the arguments of a second `mm record` of the same name."""

    work: Path
    env: dict[str, str] = field(default_factory=dict)

    def make(self, store: Path) -> None:
        raise NotImplementedError

    def start(self) -> subprocess.Popen[str]:
        raise NotImplementedError

    def record(self, *flags: str) -> list[str]:
        """`mm record NAME FLAGS -- agent` for this kind."""
        raise NotImplementedError

    def second_agent(self) -> list[str]:
        return [sys.executable, "-c", SECOND_AGENT, str(self.work / "second-ran")]

    def popen(self, args: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            args,
            env={**os.environ, **self.env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # the test can end an agent left behind by a kill
        )


class Screen(Kind):
    """A screen replay that diverges at once; its fallback agent heals it."""

    second_display = ""

    def make(self, store: Path) -> None:
        """A recording whose screens never match a real display: it diverges at once."""
        picture = io.BytesIO()
        Image.new("RGB", (16, 10), "gray").save(picture, "PNG")
        thumbnails = {f"t-{i:04d}.png": picture.getvalue() for i in range(4)}
        saved = Store(store)
        with saved.lock(NAME):
            saved.save(sample_recording(NAME), thumbnails)

    def start(self) -> subprocess.Popen[str]:
        agent = shlex.join([sys.executable, "-c", WAIT_FOR_GO, str(self.work)])
        heal = shlex.quote(f"{agent} && {shlex.join([*MM, 'act', 'move', '300', '300'])}")
        replay = ["replay", NAME, "--param", "name=Ann", "--timeout", "0.2"]
        return self.popen([*MM, *replay, "--agent", f"sh -c {heal}"])

    def record(self, *flags: str) -> list[str]:
        # On a display of its own: the replay holds this one's display lock.
        agent = self.second_agent()
        return ["--display", self.second_display, "record", NAME, *flags, "--", *agent]


class ModelAPI(Kind):
    """A model-API replay whose agent asks what the recording does not hold: healed."""

    def make(self, store: Path) -> None:
        (self.work / "go").touch()
        agent = [sys.executable, "-c", LLM_AGENT, str(self.work), "one"]
        made = mm("record", NAME, "--llm", "--", *agent, env=self.env)
        assert made.returncode == 0, made.stderr
        (self.work / "go").unlink()
        (self.work / "started").unlink()

    def start(self) -> subprocess.Popen[str]:
        agent = shlex.join([sys.executable, "-c", LLM_AGENT, str(self.work), "two"])
        return self.popen([*MM, "replay", NAME, "--agent", agent])

    def record(self, *flags: str) -> list[str]:
        return ["record", NAME, "--llm", *flags, "--", *self.second_agent()]


class ScreenRecord(Screen):
    """`mm record NAME --add`: the agent's run merged into the recording's tree."""

    def start(self) -> subprocess.Popen[str]:
        agent = shlex.join([sys.executable, "-c", WAIT_FOR_GO, str(self.work)])
        heal = f"{agent} && {shlex.join([*MM, 'act', 'move', '300', '300'])}"
        return self.popen([*MM, "record", NAME, "--add", "--observe", "0", "--", "sh", "-c", heal])


class ModelAPIRecord(ModelAPI):
    """`mm record NAME --llm --add`: the run's new exchange added to the tree."""

    def start(self) -> subprocess.Popen[str]:
        agent = [sys.executable, "-c", LLM_AGENT, str(self.work), "two"]
        return self.popen([*MM, "record", NAME, "--llm", "--add", "--", *agent])


class SDK(Kind):
    """An `Engine` call whose bucket has no trajectory yet: its agent runs, recorded."""

    def make(self, store: Path) -> None:
        (self.work / "go").touch()
        made = self.popen(self.call("first"))
        out, err = made.communicate(timeout=60)
        assert made.returncode == 0 and out.strip() == "False", err
        (self.work / "go").unlink()
        (self.work / "started").unlink()

    def call(self, tag: str) -> list[str]:
        return [sys.executable, "-c", SDK_WORKER, str(self.work), NAME, tag]

    def start(self) -> subprocess.Popen[str]:
        return self.popen(self.call("second"))

    def record(self, *flags: str) -> list[str]:
        return ["record", NAME, "--llm", *flags, "--", *self.second_agent()]


@pytest.fixture
def second_display() -> Iterator[str]:
    process, display = start_xvfb(640, 480)
    yield display
    stop_xvfb(process)


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as model:
        yield model


KINDS: dict[str, type[Kind]] = {
    "cli-replay": Screen,
    "cli-record": ScreenRecord,
    "llm-replay": ModelAPI,
    "llm-record": ModelAPIRecord,
    "sdk-call": SDK,
}


@pytest.fixture(params=list(KINDS))
def kind(
    request: pytest.FixtureRequest, tmp_path: Path, fake_model: FakeModel, isolated_store: Path
) -> Kind:
    env = {"ANTHROPIC_BASE_URL": fake_model.url}
    work = tmp_path / "work"
    work.mkdir()
    chosen = KINDS[request.param](work, env)
    if isinstance(chosen, Screen):
        request.getfixturevalue("xdisplay")
        chosen.second_display = request.getfixturevalue("second_display")
    chosen.make(isolated_store)
    return chosen


def started(kind: Kind, run: subprocess.Popen[str]) -> None:
    deadline = time.time() + 60
    while not (kind.work / "started").exists():
        if run.poll() is not None or time.time() > deadline:
            raise AssertionError(f"the run's agent never started: {run.communicate()}")
        time.sleep(0.05)


def refused(result: subprocess.CompletedProcess[str], why: str = REFUSED) -> None:
    assert result.returncode == 1, result.stderr
    assert f"mm: error: recording '{NAME}' {why}" in result.stderr, result.stderr


def test_a_run_of_every_kind_keeps_its_recording_from_rm_mv_import_prune_and_a_second_record(
    kind: Kind, tmp_path: Path, isolated_store: Path
) -> None:
    archive = tmp_path / "task.tar.gz"
    assert mm("export", NAME, str(archive)).returncode == 0
    before = steps(NAME)
    document = (isolated_store / f"{NAME}.toml").read_bytes()
    run = kind.start()
    try:
        started(kind, run)
        refused(mm("rm", NAME, "--yes"))
        refused(mm("mv", NAME, "other"))
        refused(mm("import", str(archive), "--overwrite"))
        pruned = mm("prune", "--older-than", "0s", "--yes")
        assert pruned.returncode == 0 and f"skipped {NAME}" in pruned.stderr, pruned.stderr
        refused(mm(*kind.record("--overwrite"), env=kind.env))
        refused(mm(*kind.record(), env=kind.env), "already exists")
        assert not (kind.work / "second-ran").exists()  # refused before its agent ran
        assert (isolated_store / f"{NAME}.toml").read_bytes() == document
        assert not (isolated_store / "other.toml").exists()
    finally:
        (kind.work / "go").touch()
        err = run.communicate(timeout=120)[1]
    assert run.returncode == 0, err
    assert steps(NAME) > before  # what the run learned is saved, the recording whole
    assert mm("rm", NAME, "--yes").returncode == 0  # free once the run is over


def test_two_sdk_processes_recording_one_document_at_once_keep_both(
    tmp_path: Path, isolated_store: Path
) -> None:
    """An SDK call adds to its document (as `--add` and a heal do): a second process
    recording into it at the same time is not refused, and both trajectories are kept."""
    kind = SDK(tmp_path / "work")
    kind.work.mkdir()
    kind.make(isolated_store)
    first = kind.start()
    started(kind, first)
    other = kind.popen(kind.call("third"))
    (kind.work / "go").touch()
    for run in (first, other):
        out, err = run.communicate(timeout=60)
        assert run.returncode == 0 and out.strip() == "False", err
    assert steps(NAME) == 3


def test_a_run_killed_with_sigkill_leaves_no_mark(kind: Kind) -> None:
    run = kind.start()
    try:
        started(kind, run)
        refused(mm("rm", NAME, "--yes"))
        run.send_signal(signal.SIGKILL)  # mm (or the SDK's process) only: its agent lives on
        assert run.wait(timeout=30) == -signal.SIGKILL
        agent = (kind.work / "started").read_text()
        if agent:  # an agent process of its own (screen, model API): still waiting
            os.kill(int(agent), 0)
        removed = mm("rm", NAME, "--yes")
        assert removed.returncode == 0, removed.stderr
        if agent:
            os.kill(int(agent), 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.communicate(timeout=30)
