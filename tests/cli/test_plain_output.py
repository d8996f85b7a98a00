"""Human output to a log or a pipe: plain lines, as rich would print them there, without
loading rich; and the process's exit once the command has returned, output flushed."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape

from mmcli.cli.output import escape, plain

TEXTS = [
    "plain text",
    "a [field] typed",
    "[green]not a tag here[/]",
    "back\\slash",
    "ends with a backslash\\",
    "ends with two\\\\",
    "\\[escaped already]",
    "[ upper] and [Upper] and [1]",
    "nested [[red]] brackets",
]


@pytest.mark.parametrize("text", TEXTS)
def test_escape_is_riches_own(text: str) -> None:
    assert escape(text) == rich_escape(text)


@pytest.mark.parametrize("text", [t for t in TEXTS if not t.endswith("\\")])
def test_escaped_text_reads_as_it_was(text: str) -> None:
    assert plain(escape(text)) == text
    assert plain(f"[green]done[/]: {escape(text)}") == f"done: {text}"


MARKUP = [
    *(escape(t) for t in TEXTS),
    *(f"[red]{escape(t)}[/]" for t in TEXTS),
    "[green]done from memory[/]: 3 steps",
    "[red]diverged[/]" + escape(" at step 2 (click at (1, 2)): [dialog] over the target"),
    "[yellow]done, not saved[/]: " + escape("disk full\\"),
    "[bold]x[/bold] \\\\[green]y[/] \\[not a tag]",
]


@pytest.mark.parametrize("markup", MARKUP)
def test_plain_is_what_rich_prints_without_a_terminal(markup: str) -> None:
    out = io.StringIO()
    Console(file=out, force_terminal=False, highlight=False, width=1000).print(markup)
    assert plain(markup) + "\n" == out.getvalue()


RUN = """
import sys
from mmcli.cli.output import leave, progress, say
say("[green]done from memory[/]: 3 steps")
progress("step 1/3: type 'a[b]c\\r'")
print("stdout " + str("rich" in sys.modules))
leave(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])
print("never")
"""


def run(code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", RUN, code], capture_output=True, text=True, timeout=60, env=env
    )


def test_to_a_pipe_lines_are_plain_and_rich_is_not_loaded() -> None:
    done = run("0")
    assert done.stderr == "done from memory: 3 steps\nstep 1/3: type 'a[b]c'\n"
    assert done.stdout == "stdout False\n"
    assert done.returncode == 0


def test_leave_flushes_what_was_written_and_exits_with_the_code() -> None:
    done = run("3")  # stdout to a pipe is block-buffered: lost unless flushed
    assert (done.returncode, done.stdout) == (3, "stdout False\n")


def test_leave_with_a_message_exits_1_with_it() -> None:
    done = run("no such thing")
    assert done.returncode == 1
    assert done.stderr.endswith("no such thing\n")


def test_text_from_outside_is_written_out_never_run_by_a_terminal() -> None:
    from mmcli.cli.output import escape, inert

    hostile = "w1\x1b]0;pwned\x07\x1b[2J\x9b2J line\tend\r"
    assert inert(hostile) == "w1\\x1b]0;pwned\\x1b[2J\\x9b2J line\tend"
    assert escape("[red]" + hostile) == "\\[red]w1\\x1b]0;pwned\\x1b[2J\\x9b2J line\tend"
