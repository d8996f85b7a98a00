"""`mm prune` through the CLI: plan, dry run, refusal without a terminal, --yes, asking."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.store.recordings import Store
from tests.helpers import sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def _two(isolated_store: Path) -> Store:
    store = Store()
    for name in ("alpha", "beta"):
        store.save(sample_recording(name))
    return store


def test_dry_run_shows_the_plan_and_deletes_nothing(isolated_store: Path) -> None:
    _two(isolated_store)
    result = runner.invoke(app, ["prune", "--older-than", "1d", "--dry-run"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "prune plan" in result.stderr and "alpha" in result.stderr
    assert "dry run: nothing deleted" in result.stderr
    assert Store().names() == ["alpha", "beta"]


def test_without_a_terminal_it_refuses_to_delete_without_yes(isolated_store: Path) -> None:
    _two(isolated_store)
    result = runner.invoke(app, ["prune", "--older-than", "1d"], env=ENV)
    assert result.exit_code == 2
    assert "add --yes" in result.stderr
    assert Store().names() == ["alpha", "beta"]


def test_yes_deletes_and_json_lists_what_went(isolated_store: Path) -> None:
    _two(isolated_store)
    result = runner.invoke(app, ["prune", "--unused-for", "1h", "--yes", "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    deleted = json.loads(result.stdout)["deleted"]
    assert sorted(d["name"] for d in deleted) == ["alpha", "beta"]
    assert {d["what"] for d in deleted} == {"recording"}
    assert Store().names() == []
    assert not (isolated_store / "alpha").exists()


def test_keep_removes_old_branches_only(isolated_store: Path) -> None:
    _two(isolated_store)
    result = runner.invoke(app, ["prune", "--keep", "0", "--yes"], env=ENV)
    assert result.exit_code == 0, result.output
    rec = Store().load("alpha")
    assert rec.branch_count() == 0 and len(rec.steps) == 4


def test_bad_duration_and_nothing_to_do(isolated_store: Path) -> None:
    bad = runner.invoke(app, ["prune", "--older-than", "soon"], env=ENV)
    assert bad.exit_code == 2 and "invalid duration 'soon'" in bad.stderr
    none = runner.invoke(app, ["prune", "--older-than", "30d"], env=ENV)
    assert none.exit_code == 0 and "nothing to prune" in none.stderr


def _prune_on_a_terminal(answer: bytes) -> tuple[int, str]:
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mmcli", "prune", "--older-than", "1d"],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **ENV},
    )
    os.close(secondary)
    os.write(primary, answer)
    _, err = proc.communicate(timeout=60)
    os.close(primary)
    return proc.returncode, err.decode()


def test_on_a_terminal_it_asks_first(isolated_store: Path) -> None:
    _two(isolated_store)
    code, err = _prune_on_a_terminal(b"n\n")
    assert code == 1 and "Delete these 2 item(s)?" in err and "nothing deleted" in err
    assert Store().names() == ["alpha", "beta"]
    code, err = _prune_on_a_terminal(b"y\n")
    assert code == 0, err
    assert Store().names() == []
