"""Parser errors: one `mm: error:` line with a hint, exit 2; the root's options accepted
after the subcommand; an agent command without `--` refused with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.cli.parser import hoist_globals
from mmcli.store.recordings import Store
from tests.helpers import sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def one_line(args: list[str]) -> str:
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 2, result.output
    err = result.stderr
    assert err.startswith("mm: error: ") and err.count("\n") == 1, err
    assert "Usage:" not in err
    return err.strip()


@pytest.mark.parametrize(
    "args,expected",
    [
        (["replay"], "missing argument 'name'; see `mm replay -h`"),
        (["bogus"], "no such command 'bogus'; see `mm -h`"),
        (["act", "press"], "missing argument 'key'; see `mm act press -h`"),
        (["act", "bogus"], "no such command 'bogus'; see `mm act -h`"),
        (["replay", "x", "--timeout", "abc"], "'abc' is not a valid float; see `mm replay -h`"),
        (["ls", "--bogus"], "no such option: --bogus"),
    ],
)
def test_parser_errors_are_one_line_with_a_hint(args: list[str], expected: str) -> None:
    assert expected in one_line(args)


def test_an_agent_option_before_dashdash_is_explained() -> None:
    err = one_line(["record", "x", "--name", "John"])
    assert "no such option: --name" in err
    assert "put the agent command after `--`: mm record NAME [OPTIONS] -- CMD --name" in err


def test_an_agent_command_without_dashdash_is_refused() -> None:
    err = one_line(["record", "x", "true"])
    assert err == "mm: error: put the agent command after `--`: mm record x [OPTIONS] -- true"


def test_root_options_after_the_subcommand(tmp_path: Path) -> None:
    Store(tmp_path / "other").save(sample_recording("elsewhere"))
    for args in (
        ["ls", "--json", "--store", str(tmp_path / "other")],
        ["ls", f"--store={tmp_path / 'other'}", "--lock-wait", "3", "--json"],
        ["--store", str(tmp_path / "other"), "ls", "--json"],
    ):
        result = runner.invoke(app, args, env=ENV)
        assert result.exit_code == 0, result.output
        assert '"name": "elsewhere"' in result.stdout


def test_root_options_after_dashdash_are_the_agents() -> None:
    args = ["record", "x", "--store", "s", "--", "agent", "--store", "mine"]
    assert hoist_globals(args) == ["--store", "s", "record", "x", "--", "agent", "--store", "mine"]
    assert hoist_globals(["--store", "s", "ls"]) == ["--store", "s", "ls"]
