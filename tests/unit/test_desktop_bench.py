"""The real-desktop benchmark's bookkeeping: how a replay's outcome is classified and how
much of the task window a recording masks."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.desktop.bench import Outcome, classify, masked_fraction
from benchmarks.desktop.desktop import Geometry
from benchmarks.desktop.scenarios import SCENARIOS, Label

RIGHT = "Ada|Paris"


@pytest.mark.parametrize(
    ("label", "exit_code", "record", "outcome"),
    [
        (Label.HARMLESS, 0, RIGHT, Outcome.CORRECT),
        (Label.HARMLESS, 3, None, Outcome.FALSE_DIVERGENCE),
        (Label.HARMLESS, 0, None, Outcome.WRONG_ACTION),  # "done", nothing submitted
        (Label.HARMLESS, 0, "AdaAda|Paris", Outcome.WRONG_ACTION),
        (Label.HARMLESS, 1, None, Outcome.ERROR),
        (Label.UNSAFE, 3, None, Outcome.CORRECT),
        (Label.UNSAFE, 0, RIGHT, Outcome.CORRECT),
        (Label.UNSAFE, 0, "MalloryAda|Paris", Outcome.WRONG_ACTION),
        (Label.UNSAFE, 3, "DISCARDED", Outcome.WRONG_ACTION),  # stopped, but too late
        (Label.UNSAFE, 1, None, Outcome.ERROR),
        (Label.HARMLESS, 6, RIGHT, Outcome.FLAGGED),  # an outcome not as recorded: said
        (Label.HARMLESS, 6, "Grace|Paris", Outcome.WRONG_ACTION),  # caught, but written
    ],
)
def test_classify(label: Label, exit_code: int, record: str | None, outcome: Outcome) -> None:
    assert classify(label, exit_code, record, RIGHT) is outcome


def test_masked_fraction_is_the_largest_union_inside_the_window(tmp_path: Path) -> None:
    toml = tmp_path / "task.toml"
    toml.write_text(
        "[[steps]]\n[steps.screen]\nmasks = [[100, 100, 50, 100], [120, 100, 50, 100]]\n"
        "[[steps]]\n[steps.screen]\nmasks = [[0, 0, 150, 150], [1000, 700, 40, 40]]\n"
        "[[steps]]\n[steps.screen]\n"
    )
    window = Geometry(100, 100, 200, 100)
    # step 1: union 70x100 of 200x100; step 2: the part inside is 50x50, the rest is outside
    assert masked_fraction(toml, window) == pytest.approx(0.35)


def test_scenario_keys_are_unique_and_both_labels_are_covered() -> None:
    keys = [s.key for s in SCENARIOS]
    assert len(keys) == len(set(keys))
    assert {s.label for s in SCENARIOS} == {Label.HARMLESS, Label.UNSAFE}
