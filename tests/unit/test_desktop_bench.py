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


@pytest.mark.parametrize(
    ("exit_code", "record", "outcome"),
    [
        (3, None, Outcome.CORRECT),
        (0, RIGHT, Outcome.WRONG_ACTION),  # acted under the other window, right by luck
        (6, RIGHT, Outcome.WRONG_ACTION),
    ],
)
def test_acting_under_another_window_is_wrong_whatever_the_record(
    exit_code: int, record: str | None, outcome: Outcome
) -> None:
    assert classify(Label.UNSAFE, exit_code, record, RIGHT, under_window=True) is outcome


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


def test_matrix_merges_slices_later_runs_replacing_earlier_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slices of the full matrix merge: a run of the same desktop, style, app, scenario
    and recording in a later file replaces the earlier; a file without its desktop is
    named on the command line; a wrong action anywhere makes the exit status 1."""
    import json
    import sys

    from benchmarks.desktop import matrix

    def run(scenario: str, label: str, recording: int, outcome: str) -> dict[str, object]:
        return {
            "app": "gtk",
            "scenario": scenario,
            "label": label,
            "recording": recording,
            "outcome": outcome,
            "stderr": f"mm: {outcome} at #{recording}\n",
        }

    old = tmp_path / "old.json"
    old.write_text(json.dumps({"commit": "a", "runs": [run("plain", "harmless", 0, "flagged")]}))
    new = tmp_path / "new.json"
    new.write_text(
        json.dumps(
            {
                "commit": "b",
                "desktop": "xfce",
                "style": "xdotool",
                "runs": [
                    run("plain", "harmless", 0, "correct"),
                    run("plain", "harmless", 1, "false divergence"),
                ],
            }
        )
    )
    monkeypatch.setattr(sys, "argv", ["matrix", f"{old}=xfce/xdotool", str(new)])
    assert matrix.main() == 0
    out = capsys.readouterr().out
    assert "1ok 1fd" in out and "1flag" not in out, out
    assert "false divergences 50.0%" in out and "2/10" in out
    monkeypatch.setattr(sys, "argv", ["matrix", str(old)])
    with pytest.raises(SystemExit, match="does not say its desktop"):
        matrix.main()
    wrong = tmp_path / "wrong.json"
    wrong.write_text(
        json.dumps(
            {
                "desktop": "icewm",
                "style": "pyautogui",
                "runs": [run("moved", "unsafe", 3, "wrong action")],
            }
        )
    )
    monkeypatch.setattr(sys, "argv", ["matrix", str(new), str(wrong)])
    assert matrix.main() == 1
    assert "WRONG icewm pyautogui gtk moved #3" in capsys.readouterr().out
