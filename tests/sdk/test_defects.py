"""Each thing muscle-mem got wrong, and what the engine does instead."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mmcli import Check, Engine
from mmcli.sdk.document import Trajectory, now
from mmcli.sdk.errors import EngineBusy, UnstorableValue
from mmcli.sdk.storage import DocumentStore
from mmcli.store.recordings import Store
from tests.sdk.conftest import Rig


def test_an_agent_that_raises_stores_nothing(rig: Rig) -> None:
    def failing(*args: Any) -> None:
        rig.act("x")
        raise RuntimeError("the model gave up")

    rig.engine.agent = failing
    with pytest.raises(RuntimeError, match="gave up"):
        rig.engine("task")
    assert rig.trajectories() == 0
    history = Store().runs.read("sdk")
    assert [h["outcome"] for h in history] == ["agent-failed"]


def test_a_tool_that_raises_stores_nothing_even_if_the_agent_carries_on(
    isolated_store: Path,
) -> None:
    engine = Engine()
    done: list[int] = []

    @engine.function()
    def flaky(n: int) -> None:
        if n == 1:
            raise OSError("device busy")
        done.append(n)

    def agent() -> None:
        for n in range(3):
            with contextlib.suppress(OSError):
                flaky(n)

    engine.set_agent(agent)
    with pytest.warns(RuntimeWarning, match=r"not stored: tool '.*flaky' raised"):
        assert engine() is False
    assert done == [0, 2]
    assert DocumentStore(Store(), "sdk").load() is None


def test_a_hit_stores_no_duplicate_trajectory(rig: Rig) -> None:
    rig.agent.script = ["x", "y"]
    assert rig.engine("task") is False
    for _ in range(5):
        assert rig.engine("task") is True
    assert rig.trajectories() == 1
    assert rig.world.log == ["x", "y"] * 6


def test_a_replay_that_diverges_part_way_is_not_a_hit(rig: Rig) -> None:
    rig.world.moves = {("s0", "x"): "s1", ("s1", "y"): "s2"}
    rig.agent.script = ["x", "y", "z"]
    assert rig.engine("task") is False
    rig.world.screen, rig.world.log = "s0", []
    rig.world.moves = {("s0", "x"): "popup"}  # after x, the screen differs from the recording
    rig.agent.script = ["close", "y", "z"]
    assert rig.engine("task") is False
    assert rig.world.log == ["x", "close", "y", "z"]  # x replayed once, then the agent
    doc = rig.document()
    branch = doc.trajectories[1]
    assert [s.args for s in branch.steps] == [["x"], ["close"], ["y"], ["z"]]
    assert (branch.branch_of, branch.branch_step) == (1, 1)


def test_two_trajectories_are_never_spliced(rig: Rig) -> None:
    rig.world.moves = {("s0", "x"): "s1", ("s1", "y"): "s2", ("s2", "z"): "s3"}
    rig.agent.script = ["x", "y", "z"]
    assert rig.engine("task") is False  # A = x y z, screens s0 s1 s2
    a = rig.document().trajectories[0]
    b = Trajectory(  # B = x w v, screens s0 s1 t2 (as if another process recorded it)
        0,
        (),
        [
            a.steps[0],
            replace(a.steps[0], args=["w"], pre="s1"),
            replace(a.steps[0], args=["v"], pre="t2"),
        ],
        now(),
    )
    DocumentStore(Store(), "sdk").add(b)
    # Now y leads to t2: A's z no longer fits, B's v would, but B never performed y.
    rig.world.screen, rig.world.log = "s0", []
    rig.world.moves = {("s0", "x"): "s1", ("s1", "y"): "t2"}
    rig.agent.script = ["finish"]
    assert rig.engine("task") is False
    assert rig.world.log == ["x", "y", "finish"]


def test_captures_are_copied_when_taken(isolated_store: Path) -> None:
    engine = Engine()
    state = {"n": 0}

    @engine.function(pre_check=Check(lambda: state, lambda cur, cand: cur == cand))
    def bump() -> None:
        state["n"] += 1

    engine.set_agent(lambda: bump()).finalize()
    assert engine() is False
    assert state == {"n": 1}
    state["n"] = 0
    assert engine() is True  # the stored snapshot is {"n": 0}, not the mutated dict


def test_prechecks_run_step_by_step_as_replay_reaches_each_step(rig: Rig) -> None:
    rig.agent.script = ["x", "y", "z"]
    rig.engine("task")
    rig.world.log, rig.world.captures = [], []
    events: list[str] = []
    rig.world.captures = _Recorder(events, "capture")
    rig.world.log = _Recorder(events, "run")
    assert rig.engine("task") is True
    assert events == ["capture x", "run x", "capture y", "run y", "capture z", "run z"]


class _Recorder(list):  # type: ignore[type-arg]
    def __init__(self, events: list[str], what: str) -> None:
        super().__init__()
        self.events, self.what = events, what

    def append(self, item: Any) -> None:
        self.events.append(f"{self.what} {item}")
        super().append(item)


def test_engine_calls_from_several_threads_are_serialized(isolated_store: Path) -> None:
    engine = Engine()
    inside = threading.Lock()
    overlaps: list[int] = []
    performed: list[int] = []

    @engine.function()
    def step(n: int) -> None:
        if not inside.acquire(blocking=False):
            overlaps.append(n)
            return
        time.sleep(0.01)
        performed.append(n)
        inside.release()

    engine.set_agent(lambda: [step(n) for n in range(3)]).finalize()
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(engine())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []
    assert sorted(results) == [False] + [True] * 7
    assert performed == [0, 1, 2] * 8
    assert len(DocumentStore(Store(), "sdk").load().trajectories) == 1  # type: ignore[union-attr]


def test_calling_the_engine_from_its_own_agent_is_refused(isolated_store: Path) -> None:
    engine = Engine()

    @engine.function()
    def noop() -> None:
        pass

    engine.set_agent(lambda: engine()).finalize()
    with pytest.raises(EngineBusy, match="from inside its own agent"):
        engine()


def test_a_tool_called_from_another_thread_is_performed_but_not_recorded(
    isolated_store: Path,
) -> None:
    engine = Engine()
    seen: list[str] = []

    @engine.function()
    def note(text: str) -> None:
        seen.append(text)

    def agent() -> None:
        note("main")
        t = threading.Thread(target=note, args=("worker",))
        t.start()
        t.join()

    engine.set_agent(agent)
    with pytest.warns(RuntimeWarning, match="called from another thread"):
        engine()
    assert seen == ["main", "worker"]
    doc = DocumentStore(Store(), "sdk").load()
    assert doc is not None and [s.args for s in doc.trajectories[0].steps] == [["main"]]


def test_a_non_json_argument_is_a_clear_error_and_the_tool_does_not_run(
    isolated_store: Path,
) -> None:
    engine = Engine()
    ran: list[object] = []

    @engine.function()
    def use(thing: object) -> None:
        ran.append(thing)

    engine.set_agent(lambda: use(threading.Lock())).finalize()
    with pytest.raises(UnstorableValue, match=r"tool '.*use', positional argument 0: .*lock"):
        engine()
    with pytest.raises(TypeError):  # what muscle-mem users would catch
        engine()
    assert ran == []
    assert DocumentStore(Store(), "sdk").load() is None


def test_an_unstorable_capture_is_a_clear_error(isolated_store: Path) -> None:
    engine = Engine()

    @engine.function(pre_check=Check(lambda: object(), lambda a, b: True))
    def act() -> None:
        pass

    engine.set_agent(lambda: act()).finalize()
    with pytest.raises(UnstorableValue, match=r"tool '.*act', pre_check: .*object"):
        engine()
