"""The CLI skin: arguments, output streams, error messages and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.store.recordings import Store
from tests.helpers import CREATED, literal_fingerprint, sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def mm(*args: str) -> subprocess.CompletedProcess[str]:
    """The real `mm` in a subprocess (for the error path through main())."""
    return subprocess.run(
        [sys.executable, "-m", "mmcli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=60,
    )


def test_path_prints_the_store(isolated_store: Path) -> None:
    result = runner.invoke(app, ["path"], env=ENV)
    assert result.exit_code == 0
    assert result.stdout.strip() == str(isolated_store.resolve())


def test_store_option_wins_over_env(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--store", str(tmp_path / "x"), "path"], env=ENV)
    assert result.stdout.strip() == str((tmp_path / "x").resolve())


def test_ls_json_lists_recordings_and_flags_corrupt_ones(isolated_store: Path) -> None:
    Store().save(sample_recording("good"))
    (isolated_store / "bad.toml").write_text("format_version = 1\nname = \n")
    result = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["good"]["steps"] == 5 and rows["good"]["branches"] == 1
    assert rows["good"]["params"] == ["name"]
    assert rows["bad"]["error"] and "bad.toml" in rows["bad"]["error"]


def test_ls_table_warns_about_corrupt_recordings(isolated_store: Path) -> None:
    Store().save(sample_recording("good"))
    (isolated_store / "bad.toml").write_text("garbage = [")
    result = runner.invoke(app, ["ls"], env=ENV)
    assert result.exit_code == 0
    assert "good" in result.stdout and "warning" in result.stderr and "bad" in result.stdout
    assert "warning" not in result.stdout  # the table is the result; warnings are not


def test_show_draws_the_tree() -> None:
    Store().save(sample_recording("tree"))
    result = runner.invoke(app, ["show", "tree"], env=ENV)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "5 steps, 1 branch;" in lines[0]
    assert any("branch:" in line and "press enter" in line for line in lines)
    assert any("type 'Hello {{name}}'" in line for line in lines)


def test_show_json() -> None:
    Store().save(sample_recording("tree"))
    data = json.loads(runner.invoke(app, ["show", "tree", "--json"], env=ENV).stdout)
    # The branch (id 4: the agent pressed enter instead of typing) right after step 2.
    steps = [(s["id"], s["depth"]) for s in data["steps"]]
    assert steps == [(0, 0), (1, 1), (4, 1), (2, 2), (3, 3)]


def test_unknown_recording_is_exit_1_with_one_line() -> None:
    result = mm("show", "nope")
    assert result.returncode == 1
    assert (
        result.stderr.strip() == f"mm: error: no recording named 'nope' in {os.environ['MM_HOME']}"
    )


def test_corrupt_recording_is_exit_1_one_line_and_untouched(isolated_store: Path) -> None:
    isolated_store.mkdir()
    bad = isolated_store / "bad.toml"
    bad.write_text("format_version = 1\nname = 'bad'\n[[steps]\nid=0\n")
    before = bad.read_bytes()
    result = mm("show", "bad")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert str(bad) in result.stderr and "not valid TOML" in result.stderr
    assert "Traceback" not in result.stderr
    assert bad.read_bytes() == before


def test_debug_env_shows_the_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "show", "nope"],
        capture_output=True,
        text=True,
        env={**os.environ, "MM_DEBUG": "1"},
        timeout=60,
    )
    assert "Traceback" in result.stderr and result.returncode == 1


@pytest.mark.parametrize("name", ["../evil", "a/b", "bad name", "x" * 200])
def test_bad_names_are_usage_errors_before_touching_disk(name: str, isolated_store: Path) -> None:
    result = mm("record", name, "--", "true")
    assert result.returncode == 2
    assert "invalid recording name" in result.stderr or "too long" in result.stderr
    assert not isolated_store.exists()


def test_bad_param_is_a_usage_error() -> None:
    result = mm("replay", "x", "--param", "novalue")
    assert result.returncode == 2
    assert "expected KEY=VALUE" in result.stderr


def test_secret_from_missing_env_is_a_usage_error() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_SECRET_")}
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "replay", "x", "--secret", "pin"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert "MM_SECRET_PIN" in result.stderr


def test_no_display_is_exit_1_with_a_hint() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "record", "x", "--", "true"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 1
    assert "no display" in result.stderr


def test_unknown_option_is_exit_2() -> None:
    assert mm("ls", "--frobnicate").returncode == 2


def test_every_command_has_help_with_an_example() -> None:
    for command in (
        ["record"],
        ["replay"],
        ["ls"],
        ["show"],
        ["path"],
        ["act", "click"],
        ["act", "type"],
        ["act", "press"],
        ["act", "hotkey"],
        ["act", "scroll"],
        ["act", "move"],
        ["act", "drag"],
    ):
        result = runner.invoke(app, [*command, "--help"], env=ENV)
        assert result.exit_code == 0, command
        assert "Example" in result.stdout, command


def test_ls_index_follows_changes_to_documents_and_history(isolated_store: Path) -> None:
    store = Store()
    store.save(sample_recording("one"))
    first = json.loads(runner.invoke(app, ["ls", "--json"], env=ENV).stdout)
    assert [(r["name"], r["steps"], r["replays"]) for r in first] == [("one", 5, 0)]
    assert (isolated_store / ".mm" / "index.json").exists()

    rec = store.load("one")
    rec.steps = rec.steps[:2]
    store.save(rec)
    store.runs.append("one", {"at": "2026-11-20T10:00:00+00:00", "outcome": "healed"})
    (isolated_store / "two.toml").write_text("not toml [")
    again = json.loads(runner.invoke(app, ["ls", "--json"], env=ENV).stdout)
    assert [(r["name"], r["steps"], r["replays"], r["healed"]) for r in again] == [
        ("one", 2, 1, 1),
        ("two", 0, 0, 0),
    ]
    assert again[1]["error"] and "two.toml" in again[1]["error"]


def test_ls_survives_a_damaged_index(isolated_store: Path) -> None:
    Store().save(sample_recording("one"))
    runner.invoke(app, ["ls", "--json"], env=ENV)
    (isolated_store / ".mm" / "index.json").write_text('{"version": 1, "entries": {"one": 5}}')
    result = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["steps"] == 5


def test_ls_rebuilds_a_malformed_index_entry(isolated_store: Path) -> None:
    Store().save(sample_recording("one"))
    runner.invoke(app, ["ls", "--json"], env=ENV)
    index = isolated_store / ".mm" / "index.json"
    data = json.loads(index.read_text())
    data["entries"]["one"]["doc"] = 5
    index.write_text(json.dumps(data))
    result = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["steps"] == 5


def test_saving_puts_the_recording_in_the_index(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store().save(sample_recording("fresh"))
    import mmcli.inventory.catalog as catalog

    def no_parsing(store: Store, name: str) -> dict[str, object]:
        raise AssertionError(f"{name} was parsed although it was just saved")

    monkeypatch.setattr(catalog, "_describe", no_parsing)
    listed = json.loads(runner.invoke(app, ["ls", "--json"], env=ENV).stdout)
    assert [(r["name"], r["steps"]) for r in listed] == [("fresh", 5)]


SDK_GOLDEN = Path(__file__).parents[1] / "sdk" / "fixtures" / "sdk-v1.toml"


def test_show_lists_an_sdk_documents_trajectories(isolated_store: Path) -> None:
    isolated_store.mkdir(parents=True)
    (isolated_store / "sdk.toml").write_bytes(SDK_GOLDEN.read_bytes())
    result = runner.invoke(app, ["show", "sdk"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "2 trajectories" in result.stdout
    assert "type_text({{name}}, interval=0.1)" in result.stdout
    assert "trajectory 2 tags forms, branch of 1 after step 1:" in result.stdout
    listed = json.loads(runner.invoke(app, ["show", "sdk", "--json"], env=ENV).stdout)
    assert [len(t["steps"]) for t in listed["trajectories"]] == [2, 2]
    html = runner.invoke(app, ["show", "sdk", "--html", str(isolated_store / "x.html")], env=ENV)
    assert html.exit_code == 2 and "no screens" in html.stderr
    assert not (isolated_store / "x.html").exists()


def test_ls_says_when_it_has_many_recordings_to_read(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mmcli.inventory.catalog as catalog

    for name in ("a", "b", "c"):
        Store().save(sample_recording(name))
    monkeypatch.setattr(catalog, "READ_NOTICE", 2)
    listed = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert "not in the store's index" not in listed.stderr  # saving indexed them
    Store().index_path().unlink()
    listed = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert "reading 3 recordings that are not in the store's index yet" in listed.stderr
    assert [r["name"] for r in json.loads(listed.stdout)] == ["a", "b", "c"]
    again = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert "index" not in again.stderr


def test_show_says_how_much_of_the_task_area_each_step_leaves_unchecked() -> None:
    from dataclasses import replace

    from mmcli.capture.integrate import weak_steps
    from mmcli.screen.fingerprint import Rect

    recording = sample_recording("weak")  # task area 300 x 260 at (60, 160)
    masked = replace(
        recording.steps[2].fingerprint, masks=(Rect(60, 160, 120, 260), Rect(60, 160, 10, 10))
    )
    recording.steps[2] = replace(recording.steps[2], fingerprint=masked)
    Store().save(recording)
    result = runner.invoke(app, ["show", "weak"], env=ENV)
    line = next(x for x in result.stdout.splitlines() if "hotkey" in x)
    assert "unchecked: 40% of the task area" in line
    data = json.loads(runner.invoke(app, ["show", "weak", "--json"], env=ENV).stdout)
    shares = {s["id"]: s["masked_share"] for s in data["steps"]}
    assert [shares[i] for i in range(3)] == [0.0, 0.0, 0.4]
    (warning,) = weak_steps(recording)
    assert warning.startswith("warning: step 3 (id 2, hotkey") and "40%" in warning


def _branch_before_the_first_step() -> Recording:
    """A 9-step trunk and a 2-step branch that departs before step 1 (`parent = None`),
    plus one departing after step 4."""
    fp = literal_fingerprint
    trunk = [
        Step(i, i - 1 if i else None, Action(ActionKind.CLICK, x=100 + i, y=200), fp(i))
        for i in range(9)
    ]
    branch = [
        Step(9, None, Action(ActionKind.PRESS, keys=("escape",)), fp(9, None)),
        Step(10, 9, Action(ActionKind.CLICK, x=500, y=500), fp(10)),
        Step(11, 3, Action(ActionKind.PRESS, keys=("tab",)), fp(11, None)),
    ]
    return Recording(name="early", steps=trunk + branch, created=CREATED, command=["agent"])


def test_show_puts_a_branch_under_the_step_it_replaces() -> None:
    Store().save(_branch_before_the_first_step())
    result = runner.invoke(app, ["show", "early"], env=ENV)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()[1:]
    # (A recording built here has no thumbnails: warnings about them follow the tree.)
    lines = lines[: next((i for i, line in enumerate(lines) if line.startswith("warning:")), None)]
    # The branch at step 1 follows step 1, its own steps after it, then the trunk goes on.
    assert lines[0].strip() == "1. click at (100, 200)"
    assert "branch:" in lines[1] and "1. press escape" in lines[1] and "branch id 9" in lines[1]
    assert lines[2].strip() == "2. click at (500, 500)"
    assert lines[2].index("2. click") == lines[1].index("1. press")  # under its first step
    assert lines[1].index("└─") > 0 and lines[3].index("2.") < lines[2].index("2.")
    assert lines[3].strip() == "2. click at (101, 200)"
    at_5 = next(i for i, line in enumerate(lines) if "click at (104, 200)" in line)
    assert lines[at_5].strip() == "5. click at (104, 200)"
    assert "branch:" in lines[at_5 + 1] and "5. press tab" in lines[at_5 + 1]
    assert lines[at_5 + 2].strip() == "6. click at (105, 200)"
    assert lines[-1].strip() == "9. click at (108, 200)"
    ids = [
        s["id"] for s in json.loads(runner.invoke(app, ["show", "early", "--json"]).stdout)["steps"]
    ]
    assert ids == [0, 9, 10, 1, 2, 3, 4, 11, 5, 6, 7, 8]


def _no_display_env(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return {**env, **ENV, "MM_HOME": str(store)}


@pytest.mark.parametrize(
    "args,code,said",
    [
        (["replay", "sample", "--json"], 2, "needs --param name=..."),
        (["replay", "nothing-here", "--no-agent", "--json"], 1, "no recording named"),
        (["replay", "bad/name", "--json"], 2, "bad/name"),
        (["replay", "sample", "--json", "--param", "name=X"], 1, "no display"),
        (["replay", "sample", "--json", "--timeout", "x"], 2, "not a valid float"),
        (["replay", "sample", "--bogus", "--json"], 2, "no such option"),
        (["show", "nothing-here", "--json"], 1, "no recording named"),
        (["ls", "--json", "--bogus"], 2, "no such option"),
    ],
)
def test_json_prints_one_object_on_errors_too(
    isolated_store: Path, args: list[str], code: int, said: str
) -> None:
    """A cron job's JSONL log has a line for every run: usage and lookup errors included,
    with the one-line error on stderr as well."""
    Store().save(sample_recording("sample"))
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", *args],
        capture_output=True,
        text=True,
        env=_no_display_env(isolated_store),
        timeout=60,
    )
    assert result.returncode == code, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    data = json.loads(lines[0])
    assert data["outcome"] == "error" and data["exit_code"] == code
    assert said in data["error"]
    assert result.stderr.count("mm: error: ") == 1 and said in result.stderr


def test_a_mistyped_recording_name_gets_a_did_you_mean(isolated_store: Path) -> None:
    Store().save(sample_recording("loan"))
    env = _no_display_env(isolated_store)
    for args in (["replay", "laon", "--no-agent"], ["show", "laon"], ["rm", "laon", "--yes"]):
        result = subprocess.run(
            [sys.executable, "-m", "mmcli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert result.returncode == 1, args
        assert "no recording named 'laon'" in result.stderr
        assert "did you mean 'loan'?" in result.stderr, args
    far = runner.invoke(app, ["show", "zzzzzz"], env=ENV)
    assert far.exit_code == 1 and "did you mean" not in far.stderr


def test_a_mistyped_param_key_gets_a_did_you_mean(isolated_store: Path) -> None:
    Store().save(sample_recording("loan"))  # its param: name
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "replay", "loan", "--param", "nmae=X"],
        capture_output=True,
        text=True,
        env=_no_display_env(isolated_store),
        timeout=60,
    )
    assert result.returncode == 2
    assert "unknown param 'nmae', did you mean 'name'?" in result.stderr
    assert "needs --param name=..." in result.stderr


def test_show_numbers_steps_from_1_and_labels_ids() -> None:
    """One numbering for people: `mm show`'s lines, its `--json` "step" and a divergence's
    step, from a history line of today (1-based "step", 0-based "depth") or of before
    (a 0-based "step" alone)."""
    store = Store()
    store.save(sample_recording("tree"))
    for at, divergence in (
        ("2026-11-20T10:00:00+00:00", {"step": 1, "reason": "old line"}),
        ("2026-11-21T10:00:00+00:00", {"step": 2, "depth": 1, "reason": "new line"}),
    ):
        store.runs.append("tree", {"at": at, "outcome": "diverged", "divergence": divergence})
    data = json.loads(runner.invoke(app, ["show", "tree", "--json"], env=ENV).stdout)
    assert [(s["step"], s["id"]) for s in data["steps"]] == [(1, 0), (2, 1), (2, 4), (3, 2), (4, 3)]
    assert [(d["step"], d["reason"]) for d in data["divergences"]] == [
        (2, "new line"),
        (2, "old line"),
    ]
    shown = runner.invoke(app, ["show", "tree"], env=ENV).stdout
    assert "at step 2: new line" in shown and "at step 2: old line" in shown
    assert "branch id 4" in shown


def test_results_go_to_stdout_unwrapped_and_progress_to_stderr(isolated_store: Path) -> None:
    """`mm ls | grep NAME` and `mm show NAME > out` find the result; a pipe gets one line
    per line, however narrow COLUMNS would make a terminal."""
    long_name = "invoice-" + "x" * 90
    Store().save(sample_recording(long_name))
    listed = subprocess.run(
        [sys.executable, "-m", "mmcli", "ls"],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV, "COLUMNS": "80"},
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert long_name in listed.stdout  # whole, on one line
    assert long_name not in listed.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "mmcli", "show", long_name],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0].startswith(f"{long_name}: 5 steps")
    assert "5 steps" not in shown.stderr
    # Its diagnostics (no thumbnails in this sample) on stderr, one line each.
    warnings = shown.stderr.splitlines()
    assert warnings and all(w.startswith("warning: step ") for w in warnings), warnings
