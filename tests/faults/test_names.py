"""Hostile recording names are refused (exit 2, one line) before anything touches the disk,
by `mm record`, `mm replay` and `mm show` alike."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli.cli.app import main
from tests.faults.conftest import mm, one_line_error

BAD_NAMES = [
    "",
    ".",
    "..",
    "a/b",
    "../escape",
    "x/../../y",
    "/etc/passwd",
    "a\\b",
    "a b",
    "a\nb",
    "a\x00b",
    "a" * 101,
    "a" * 5000,
    "naïve",
    "名前",
    "rocket🚀",
    "a:b",
    "a*",
    "loan.toml",  # its thumbnails folder would be the file of recording "loan"
    ".mm",  # the store's own bookkeeping folder
]
COMMANDS = {
    "record": lambda name, marker: ["record", name, "--", "touch", str(marker)],
    "replay": lambda name, marker: ["replay", name, "--agent", f"touch {marker}"],
    "show": lambda name, marker: ["show", name],
}


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.fixture
def untouched(tmp_path: Path, isolated_store: Path) -> Iterator[Path]:
    """A marker the agent would create if it ran; afterwards, nothing new anywhere under
    the test's directory (the store is not even created) and no agent ran."""
    marker = tmp_path / "agent-ran"
    before = files_under(tmp_path)
    yield marker
    assert files_under(tmp_path) == before
    assert not isolated_store.exists()
    assert not marker.exists()


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The real entry point in-process: argv can carry what exec cannot (a NUL)."""
    saved_argv, saved_handler = sys.argv, signal.getsignal(signal.SIGINT)
    sys.argv = ["mm", *args]
    try:
        with pytest.raises(SystemExit) as exit_:
            main()
    finally:
        sys.argv = saved_argv
        signal.signal(signal.SIGINT, saved_handler)
    code = exit_.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", BAD_NAMES, ids=range(len(BAD_NAMES)))
def test_bad_names_are_refused_before_touching_the_disk(
    name: str, command: str, untouched: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(COMMANDS[command](name, untouched), capsys)
    assert code == 2, err
    line = one_line_error(err)
    assert "recording name" in line
    assert len(line) < 200


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", ["../escape", "a" * 5000, "名前"])
def test_bad_names_are_refused_by_the_real_command(
    name: str, command: str, untouched: Path
) -> None:
    result = mm(*COMMANDS[command](name, untouched))
    assert result.returncode == 2, result.stderr
    assert "recording name" in one_line_error(result.stderr)


def test_a_name_cannot_reach_outside_the_store(tmp_path: Path, isolated_store: Path) -> None:
    result = mm("record", "../outside", "--", "true")
    assert result.returncode == 2
    assert not (tmp_path / "outside.toml").exists()
    assert not (tmp_path / "outside").exists()
    assert os.listdir(tmp_path) == []
