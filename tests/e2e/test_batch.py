"""Batch replay from a CSV file, on the real app restarted before each row."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.world import HERE, LoanApp, agent_command, restart_detached, stop_detached
from tests.e2e.conftest import mm

pytestmark = pytest.mark.e2e

ROWS = [
    ("Ada Lovelace", "1000"),
    ("Alan Turing", "2500"),
    ("Grace Hopper", "-5"),  # the app refuses it: no confirmation, the row diverges
    ("Edsger Dijkstra", "700"),
    ("Barbara Liskov", "1234"),
    ("Donald Knuth", "4096"),
]


@pytest.fixture
def app_dir(xdisplay: str, tmp_path: Path) -> Iterator[Path]:
    workdir = tmp_path / "app"
    workdir.mkdir()
    yield workdir
    stop_detached(workdir)


def test_csv_batch_runs_every_row_and_reports_the_diverged_one(
    app_dir: Path, tmp_path: Path
) -> None:
    restart_detached(app_dir)
    app = LoanApp(app_dir)
    recorded = mm(
        "record",
        "loan",
        "--param",
        "name=John Smith",
        "--param",
        "amount=1200",
        "--observe",
        "0",
        "--",
        *agent_command(app),
    )
    assert recorded.returncode == 0, recorded.stderr
    app.out.unlink()

    rows = tmp_path / "rows.csv"
    rows.write_text("name,amount\n" + "".join(f"{n},{a}\n" for n, a in ROWS))
    hook = f"{sys.executable} {HERE / 'world.py'} restart {app_dir}"
    result = mm(
        "replay",
        "loan",
        "--no-agent",
        "--params-file",
        str(rows),
        "--before-each",
        hook,
        "--timeout",
        "2",
        "--json",
    )
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert [r["outcome"] for r in report] == ["from-memory"] * 2 + ["diverged"] + [
        "from-memory"
    ] * 3
    assert report[2]["params"] == {"name": "Grace Hopper", "amount": "-5"}
    assert "step" in report[2]["detail"]
    assert "5 of 6 rows done, 1 failed" in result.stderr
    entered = [(r["name"], str(r["amount"])) for r in app.records()]
    assert entered == [row for row in ROWS if row[1] != "-5"]


def test_bad_params_file_is_a_usage_error(xdisplay: str, tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("na me,amount\nx,1\n")
    result = mm("replay", "loan", "--no-agent", "--params-file", str(rows))
    assert result.returncode == 2 and "invalid param name" in result.stderr
    missing = mm("replay", "loan", "--params-file", str(tmp_path / "nope.csv"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_first_replay_of_an_unknown_name_records_with_the_agent(
    app_dir: Path, isolated_store: Path
) -> None:
    restart_detached(app_dir)
    app = LoanApp(app_dir)
    agent = subprocess.list2cmdline(agent_command(app))
    result = mm("replay", "fresh", "--agent", agent)
    assert result.returncode == 0, result.stderr
    assert "recorded" in result.stderr
    assert (isolated_store / "fresh.toml").exists()
    assert len(app.records()) == 1
