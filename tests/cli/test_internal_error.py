"""A bug inside a command is still one `mm: error:` line, exit 1 and, with `--json`, the
command's one JSON object on stdout: a cron log has a line for every run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

RUN = """
import sys
import mmcli.inventory.catalog as catalog

def broken(*args, **kwargs):
    raise ZeroDivisionError("division by zero")

catalog.summarize = broken
from mmcli.cli.app import main
sys.argv = ["mm", *sys.argv[1:]]
main()
"""


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


def test_a_bug_is_one_line_exit_1_and_its_json_object() -> None:
    result = run("ls", "--json")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("mm: error: internal error: ZeroDivisionError")
    assert "Traceback" not in result.stderr
    data = json.loads(result.stdout)
    assert data["outcome"] == "error" and data["exit_code"] == 1
    assert "ZeroDivisionError" in data["error"]


def test_mm_debug_shows_the_traceback() -> None:
    result = run("ls", MM_DEBUG="1")
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert ", in broken\n" in result.stderr  # the frame that raised
