"""The engine's contract: tags, params, methods, finalize, checks, branches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mmcli import Check, Engine
from mmcli.errors import InvalidName
from mmcli.sdk.errors import EngineNotReady
from mmcli.sdk.storage import DocumentStore
from mmcli.store.recordings import Store
from tests.sdk.conftest import Rig


def test_tags_partition_the_cache(rig: Rig) -> None:
    rig.agent.script = ["x"]
    assert rig.engine("task", tags=["a"]) is False
    assert rig.engine("task", tags=["a"]) is True
    assert rig.engine("task", tags=["b"]) is False
    assert rig.engine("task") is False
    assert rig.engine("task", tags=["b"]) is True
    assert [t.tags for t in rig.document().trajectories] == [("a",), ("b",), ()]
    with pytest.raises(TypeError, match="tags must be a list of strings"):
        rig.engine("task", tags="a")


def test_the_agent_gets_the_task_arguments(rig: Rig) -> None:
    rig.agent.script = ["x"]
    rig.engine("fill the form", 3, tags=["t"], params={"who": "Ann"}, mode="fast")
    assert rig.agent.calls == [("fill the form", 3)]


def test_params_are_matched_by_equality_and_substituted(isolated_store: Path) -> None:
    engine = Engine()
    typed: list[Any] = []

    @engine.function()
    def fill(field: str, value: Any, *, times: int = 1, flag: bool = False) -> None:
        typed.append((field, value, times, flag))

    def agent(name: str, age: int) -> None:
        fill("name", name)
        fill("age", age, times=age)
        fill("tags", ["a", 1], flag=True)

    engine.set_agent(agent)
    values = {"name": "John", "age": 1, "tags": ["a", 1]}
    assert engine("John", 1, params=values) is False
    steps = DocumentStore(Store(), "sdk").load().trajectories[0].steps  # type: ignore[union-attr]
    assert steps[0].args == ["name", {"$param": "name"}]
    assert steps[1].args == ["age", {"$param": "age"}]
    assert steps[1].kwargs == {"times": {"$param": "age"}}
    assert steps[2].args == ["tags", {"$param": "tags"}]
    assert steps[2].kwargs == {"flag": True}  # True is not the param 1
    typed.clear()
    assert engine("Jane", 7, params={"name": "Jane", "age": 7, "tags": ["b"]}) is True
    assert typed == [("name", "Jane", 1, False), ("age", 7, 7, False), ("tags", ["b"], 1, True)]
    assert engine("Jane", 7) is False  # the stored calls need params this call lacks


def test_method_tools_store_no_self_and_replay_on_the_context(isolated_store: Path) -> None:
    engine = Engine()

    class Client:
        def __init__(self, who: str) -> None:
            self.who = who
            self.said: list[str] = []

        def capture(self, text: str) -> str:
            return self.who

        @engine.method(pre_check=Check(capture, lambda cur, cand: cur == cand))
        def say(self, text: str) -> None:
            self.said.append(text)

    recorder, replayer = Client("bot"), Client("bot")
    engine.set_agent(lambda: recorder.say("hi")).set_context(replayer).finalize()
    assert engine() is False
    step = DocumentStore(Store(), "sdk").load().trajectories[0].steps[0]  # type: ignore[union-attr]
    assert (step.method, step.args, step.pre) == (True, ["hi"], "bot")
    assert engine() is True
    assert (recorder.said, replayer.said) == (["hi"], ["hi"])


def test_finalize_names_what_is_missing(isolated_store: Path) -> None:
    engine = Engine()
    with pytest.raises(EngineNotReady, match="at least one tool"):
        engine.finalize()

    class Thing:
        @engine.method()
        def poke(self) -> None:
            pass

    with pytest.raises(ValueError, match="must have an agent"):
        engine.finalize()
    engine.set_agent(lambda: None)
    with pytest.raises(ValueError, match=r"method tools \(.*Thing.poke\).*set_context"):
        engine.finalize()
    with pytest.raises(ValueError, match="set_context"):
        engine("task")  # an engine call finalizes first
    engine.set_context(Thing()).finalize()
    with pytest.raises(ValueError, match="finalized"):
        engine.set_agent(lambda: None)
    with pytest.raises(ValueError, match="finalized"):
        engine.function()


def test_a_failed_post_check_hands_over_and_the_branch_replays_next_time(
    isolated_store: Path,
) -> None:
    engine = Engine()
    world = {"screen": "home", "opens": "form"}
    log: list[str] = []

    def look(*args: Any) -> str:
        return world["screen"]

    same = Check(look, lambda cur, cand: cur == cand)

    @engine.function(pre_check=same, post_check=same)
    def open_form() -> None:
        log.append("open")
        world["screen"] = world["opens"]

    @engine.function(pre_check=same)
    def type_text(text: str) -> None:
        log.append(text)
        if text == "dismiss":
            world["screen"] = "form"

    def agent() -> None:
        if world["screen"] == "home":
            open_form()
        if world["screen"] == "error":
            type_text("dismiss")
        type_text("hello")

    engine.set_agent(agent)
    assert engine() is False and log == ["open", "hello"]

    world.update(screen="home", opens="error")
    log.clear()
    assert engine() is False  # open_form ran; its post-check saw "error", not "form"
    assert log == ["open", "dismiss", "hello"]
    branch = DocumentStore(Store(), "sdk").load().trajectories[1]  # type: ignore[union-attr]
    assert (branch.branch_of, branch.branch_step, len(branch.steps)) == (1, 1, 3)

    world.update(screen="home", opens="error")
    log.clear()
    assert engine() is True  # the branch, verified step by step
    assert log == ["open", "dismiss", "hello"]
    world.update(screen="home", opens="form")
    log.clear()
    assert engine() is True  # and the first trajectory still serves the old world
    assert log == ["open", "hello"]


def test_a_float_similarity_passes_at_the_threshold(isolated_store: Path) -> None:
    score = {"value": 1.0}
    engine = Engine()

    @engine.function(pre_check=Check(lambda: 0, lambda cur, cand: score["value"]))
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    assert engine() is False
    score["value"] = 0.9
    assert engine() is True
    score["value"] = 0.89
    assert engine() is False


def test_a_check_with_a_timeout_waits_for_the_environment(isolated_store: Path) -> None:
    engine = Engine()
    ready = {"polls": 0}

    def capture() -> str:
        ready["polls"] += 1
        return "ready" if ready["polls"] >= 3 else "loading"

    @engine.function(pre_check=Check(capture, lambda a, b: a == b, timeout=2, interval=0.01))
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    ready["polls"] = 10
    assert engine() is False  # recorded on a "ready" screen
    ready["polls"] = 0
    assert engine() is True
    assert ready["polls"] == 3


def test_an_agent_that_calls_no_tool_stores_nothing(rig: Rig) -> None:
    rig.agent.script = []
    assert rig.engine("task") is False
    assert rig.engine("task") is False
    assert rig.trajectories() == 0
    assert len(rig.agent.calls) == 2


def test_a_tool_called_by_a_tool_is_not_recorded_twice(isolated_store: Path) -> None:
    engine = Engine()
    log: list[str] = []

    @engine.function()
    def key(k: str) -> None:
        log.append(k)

    @engine.function()
    def word(w: str) -> None:
        for k in w:
            key(k)

    engine.set_agent(lambda: word("hi")).finalize()
    assert engine() is False
    assert engine() is True
    assert log == ["h", "i", "h", "i"]
    doc = DocumentStore(Store(), "sdk").load()
    assert doc is not None and len(doc.trajectories[0].steps) == 1


def test_tools_outside_an_engine_call_just_run(rig: Rig) -> None:
    rig.act("x")
    assert rig.world.log == ["x"]
    assert rig.trajectories() == 0


def test_engines_with_different_names_keep_separate_documents(isolated_store: Path) -> None:
    engines = [Engine(name="one"), Engine(name="two", store=isolated_store / "elsewhere")]
    for engine in engines:

        @engine.function()
        def act() -> None:
            pass

        engine.set_agent(lambda: act())
        assert engine() is False
    assert (isolated_store / "one.toml").is_file()
    assert (isolated_store / "elsewhere" / "two.toml").is_file()
    with pytest.raises(InvalidName, match="invalid recording name"):
        Engine(name="../x")


def test_every_call_is_journaled_for_mm_ls(rig: Rig) -> None:
    rig.agent.script = ["x"]
    rig.engine("task")
    rig.engine("task")
    rig.world.screen = "elsewhere"
    rig.engine("task")
    outcomes = [h["outcome"] for h in Store().runs.read("sdk")]
    assert outcomes == ["recorded", "from-memory", "healed"]
