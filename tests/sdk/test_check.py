"""Check verdicts, metrics, and trajectories whose snapshot classes are missing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mmcli import Check, Engine
from mmcli.sdk.check import verdict
from mmcli.sdk.document import Trajectory, now
from mmcli.sdk.storage import DocumentStore
from mmcli.store.recordings import Store


@pytest.mark.parametrize(
    "result, passed",
    [
        (True, True),
        (False, False),
        (0.9, True),
        (0.8999, False),
        (1, True),
        (0, False),
        (np.bool_(True), True),
        (np.float32(0.95), True),
        (np.array([0.5]), False),
        ("yes", True),
        (None, False),
    ],
)
def test_verdicts(result: object, passed: bool) -> None:
    assert verdict(result) is passed


def test_a_check_refuses_a_negative_timeout() -> None:
    with pytest.raises(ValueError, match="timeout"):
        Check(lambda: 0, lambda a, b: True, timeout=-1)


def test_metrics_time_each_phase(isolated_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine = Engine()

    same = Check(lambda n: 0, lambda a, b: a == b)

    @engine.function(pre_check=same, post_check=same)
    def act(n: int) -> None:
        pass

    engine.set_agent(lambda: [act(1), act(2)]).finalize()
    engine.metrics.report()
    assert capsys.readouterr().out == ""  # disabled: silent, as muscle-mem
    engine.metrics.enable()
    engine()
    engine()
    engine.metrics.report()
    report = json.loads(capsys.readouterr().out)
    assert report["query"]["count"] == 2
    assert report["filter"]["capture"]["count"] == 1
    assert report["runtime"]["precheck"]["capture"]["count"] == 1
    assert report["runtime"]["postcheck"]["compare"]["count"] == 2
    assert report["filter"]["compare"]["avg_time"].endswith(("s", "ms", "us"))
    engine.reset_metrics()
    assert engine.metrics.metrics["query"]["count"] == 0


def test_a_trajectory_whose_snapshot_class_is_missing_is_skipped(isolated_store: Path) -> None:
    engine = Engine()
    calls: list[str] = []

    @engine.function(pre_check=Check(lambda: 0, lambda a, b: True))
    def act() -> None:
        calls.append("act")

    engine.set_agent(lambda: act()).finalize()
    assert engine() is False
    docs = DocumentStore(Store(), "sdk")
    recorded = docs.load().trajectories[0]  # type: ignore[union-attr]
    missing = {"$dataclass": {"class": "not_imported_module:Shot", "fields": {}}}
    docs.add(Trajectory(0, ("x",), [replace(recorded.steps[0], pre=missing)], now()))
    assert engine(tags=["x"]) is False  # skipped, not an error: the agent runs
    assert calls == ["act", "act"]
