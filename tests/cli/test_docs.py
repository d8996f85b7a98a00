"""The CLI reference in docs/ is generated from the app; every command shows an example."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.cli.reference import reference

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_docs_cli_md_is_up_to_date() -> None:
    current = (ROOT / "docs" / "cli.md").read_text()
    assert current == reference(), (
        "docs/cli.md is stale: run `.venv/bin/python -m mmcli.cli.reference > docs/cli.md`"
    )


def _commands() -> list[list[str]]:
    root = get_command(app)
    out = []
    for name, command in getattr(root, "commands", {}).items():
        out.append([name])
        out += [[name, sub] for sub in getattr(command, "commands", {})]
    return out


@pytest.mark.parametrize("words", _commands(), ids=" ".join)
def test_every_command_has_help_with_an_example(words: list[str]) -> None:
    result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0
    assert "Example:" in result.stdout, f"mm {' '.join(words)} --help shows no example"
