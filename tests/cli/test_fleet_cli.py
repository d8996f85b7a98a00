"""`mm worker` and `mm batch`: what is refused before any server is reached, and a server
that cannot be reached, each with its one line and exit code."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.store.recordings import Store
from tests.helpers import sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def rows(tmp_path: Path, text: str) -> str:
    path = tmp_path / "rows.csv"
    path.write_text(text)
    return str(path)


def test_submit_refuses_a_secret_column(isolated_store: Path, tmp_path: Path) -> None:
    Store().save(replace(sample_recording("loan"), secrets=["name"]))
    csv = rows(tmp_path, "name\nAda\n")
    result = runner.invoke(
        app, ["batch", "submit", "loan", "--params-file", csv, "--temporal", closed_port()], env=ENV
    )
    assert result.exit_code == 2
    assert "secrets never travel in a batch" in result.output
    assert not list(Store().objects.listing(".mm/batches/"))


def test_submit_needs_the_recording_and_its_columns(isolated_store: Path, tmp_path: Path) -> None:
    args = ["batch", "submit", "loan", "--temporal", closed_port(), "--params-file"]
    result = runner.invoke(app, [*args, rows(tmp_path, "name\nAda\n")], env=ENV)
    assert result.exit_code == 1 and "loan" in result.output
    Store().save(sample_recording("loan"))
    result = runner.invoke(app, [*args, rows(tmp_path, "nam\nAda\n")], env=ENV)
    assert result.exit_code == 2 and "no column 'name'" in result.output


def test_an_unreachable_temporal_is_one_line(isolated_store: Path, tmp_path: Path) -> None:
    Store().save(sample_recording("loan"))
    csv = rows(tmp_path, "name\nAda\n")
    result = runner.invoke(
        app, ["batch", "submit", "loan", "--params-file", csv, "--temporal", closed_port()], env=ENV
    )
    assert result.exit_code == 1
    assert "cannot reach Temporal at 127.0.0.1:" in result.output


def test_status_of_an_unknown_batch(isolated_store: Path) -> None:
    result = runner.invoke(app, ["batch", "status", "nope", "--temporal", closed_port()], env=ENV)
    assert result.exit_code == 1 and "no batch 'nope'" in result.output
    result = runner.invoke(app, ["batch", "status", "../x", "--temporal", closed_port()], env=ENV)
    assert result.exit_code == 2 and "invalid batch id" in result.output


def test_worker_refuses_agent_and_no_agent() -> None:
    result = runner.invoke(
        app,
        ["worker", "loan", "--temporal", closed_port(), "--agent", "x", "--no-agent"],
        env=ENV,
    )
    assert result.exit_code == 2 and "exclude each other" in result.output
