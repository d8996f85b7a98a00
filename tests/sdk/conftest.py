"""A small scripted world for engine tests: a screen name that tools change, a log of
what was performed, and an agent that plays a script of tool calls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mmcli import Check, Engine
from mmcli.sdk.document import SDKDocument
from mmcli.sdk.storage import DocumentStore
from mmcli.store.recordings import Store


@dataclass
class World:
    screen: str = "s0"
    moves: dict[tuple[str, str], str] = field(default_factory=dict)
    """(screen, label) -> the screen after `act(label)`; unlisted moves keep the screen."""
    log: list[str] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)

    def act(self, label: str) -> None:
        self.log.append(label)
        self.screen = self.moves.get((self.screen, label), self.screen)


@dataclass
class Scripted:
    """An agent that performs `script` with the `act` tool, whatever the task."""

    act: Callable[[str], None]
    script: list[str] = field(default_factory=list)
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(args)
        for label in self.script:
            self.act(label)


@dataclass
class Rig:
    world: World
    engine: Engine
    agent: Scripted
    act: Callable[[str], None]

    def document(self) -> SDKDocument:
        doc = DocumentStore(Store(), self.engine.name).load()
        assert doc is not None
        return doc

    def trajectories(self) -> int:
        doc = DocumentStore(Store(), self.engine.name).load()
        return 0 if doc is None else len(doc.trajectories)


def screen_check(world: World) -> Check[..., str]:
    def capture(label: str) -> str:
        world.captures.append(label)
        return world.screen

    return Check(capture, lambda current, candidate: current == candidate)


@pytest.fixture
def rig(isolated_store: Path) -> Rig:
    world = World()
    engine = Engine()

    @engine.function(pre_check=screen_check(world))
    def act(label: str) -> None:
        world.act(label)

    agent = Scripted(act)
    engine.set_agent(agent).finalize()
    return Rig(world, engine, agent, act)
