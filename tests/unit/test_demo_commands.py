"""The demo prints each command as a user would type it from the repository's root."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path

import pytest
from rich.console import Console

from examples import demo
from examples.world import LoanApp, agent_command

ROOT = Path(__file__).resolve().parents[2]


def test_a_record_command_is_shown_ready_to_paste(tmp_path: Path) -> None:
    app = LoanApp(demo.WORK / "app")
    args = ["record", "loan", "--param", "name=John Smith", "--", *agent_command(app, think=0.3)]
    text = demo.shown(args)
    words = shlex.split(text)
    assert words[:5] == ["mm", "--store", ".demo/recordings", "record", "loan"]
    assert words[5:8] == ["--param", "name=John Smith", "--"]
    assert words[8:10] == ["python", "examples/loan_agent.py"]
    assert words[words.index("--layout") + 1] == ".demo/app/layout.json"
    assert (ROOT / "examples" / "loan_agent.py").is_file()
    assert "'name=John Smith'" in text and "--name 'John Smith'" in text
    assert "mmcli" not in text and str(ROOT) not in text and sys.executable not in text
    assert "PYTHONPATH" not in text and "sh -c" not in text


def test_what_runs_is_what_is_shown() -> None:
    line = demo.command_line(["replay", "loan", "--param", "name=Jane Doe", "--no-agent"])
    run = demo._runnable(line)
    assert Path(run[0]).name == "mm" or run[1:3] == ["-m", "mmcli"]
    assert run[-len(line) + 1 :] == line[1:]
    agent = demo._runnable(demo.command_line(["record", "x", "--", "python", "a.py"]))
    assert agent[-2:] == [sys.executable, "a.py"]


def test_the_command_is_printed_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(demo, "console", Console(file=out, width=40, color_system=None))
    line = demo.command_line(["replay", "loan", "--param", "name=Jane [Doe]", "--no-agent"])
    demo.announce(line)
    assert out.getvalue() == "$ " + shlex.join(line) + "\n"
    assert shlex.split(out.getvalue()[2:]) == line
