"""What the `mm` commands show: an error as one `mm: error:` line (`fail`, the one place
errors become messages and exit codes), and progress and diagnostics on stderr through rich,
a command's result on stdout (`results`; `--json` data too, written by the commands).

rich is imported where output is rendered: `mm --help` and `mm act` start without it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import traceback
from typing import IO, TYPE_CHECKING, Any, NoReturn

from mmcli.errors import Aborted, ExitCode, MMError, Outcome

if TYPE_CHECKING:
    from rich.console import Console


def fail(error: MMError, json_out: bool = False, name: str | None = None) -> ExitCode:
    """The one place an `MMError` becomes what the user sees: one `mm: error:` line on
    stderr (with `MM_DEBUG=1`, the traceback first) and, for a command given `--json`, its
    one JSON object on stdout (`failed_json`); returns the exit code to exit with."""
    if os.environ.get("MM_DEBUG") == "1":
        traceback.print_exception(error)
    print(f"mm: error: {error}", file=sys.stderr)
    if json_out:
        failed_json(str(error), error.exit_code, name, aborted=isinstance(error, Aborted))
    return error.exit_code


def failed_json(message: str, code: int, name: str | None = None, aborted: bool = False) -> None:
    """A command given `--json` that ends in an error still prints its one JSON object:
    `{"outcome": "error", "exit_code": 2, "error": "..."}` (a cron log has a line for
    every run)."""
    outcome = str(Outcome.ABORTED) if aborted else "error"
    data: dict[str, object] = {"outcome": outcome, "exit_code": int(code), "error": message}
    if name is not None:
        data["name"] = name
    print(json.dumps(data))


class Unbroken:
    """A text stream (stdout, stderr) whose reader may go away mid-run (`mm replay ... |
    head -1`): a write or flush that meets a closed pipe is dropped silently, and the
    stream's descriptor is pointed at /dev/null, so that a replay is never stopped between
    two actions by its own output, finishes and writes its history line."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        # What is still buffered, and every later write (the interpreter's last flush
        # included), goes nowhere instead of raising again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def leave(code: object) -> NoReturn:
    """End the process with `code` (a `SystemExit` code) once the command has returned:
    its files are written and closed, its displays and threads closed, its output flushed
    here. What Python would still do is free every object one by one (numpy arrays, the
    screens a replay judged, the modules): 0.1-0.15 s after a 20-step replay, measured
    between the last line and the exit. So the process exits at once. A code that is not
    an int (a message) is left to `sys.exit`."""
    if code is not None and not isinstance(code, int):
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):  # closed: nothing reaches it
                stream.flush()
    os._exit(code if code is not None else ExitCode.OK)


def keep_writing_when_closed() -> None:
    """stdout and stderr as `Unbroken` streams (Python already ignores SIGPIPE: a write to
    a closed pipe raises `BrokenPipeError`, which would end the run wherever it is)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, Unbroken):
            setattr(sys, name, Unbroken(stream))


def console() -> Console:
    """Human output on stderr: progress, diagnostics, what a run did."""
    return results(to_stderr=True)


def results(to_stderr: bool = False) -> Console:
    """A command's result for people (`mm ls`'s table, `mm show`'s tree, `mm doctor`'s
    report) on stdout, where `| grep` and `> file` find it; on stderr with `to_stderr`
    (the command printed its `--json` on stdout). Off a terminal, never wrapped."""
    from rich.console import Console

    out = Console(stderr=to_stderr, highlight=False, soft_wrap=False)
    if not out.is_terminal:
        out.width = 10_000  # a log or a pipe gets one line per line, whatever COLUMNS says
    return out


_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
"""A tag of rich markup (`[green]`, `[/]`), with the backslashes before it: rich's own
grammar, so that `escape` and `plain` agree with rich where rich renders."""
_CONTROL = dict.fromkeys((7, 8, 11, 12, 13))
"""Control characters rich leaves out of printed text (bell, backspace, vertical tab,
form feed, carriage return): a line of progress reads the same either way."""
_TERMINAL: dict[int, str | None] = {
    c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\n\t"
}
_TERMINAL.update(_CONTROL)
"""Control characters a terminal would obey (ESC starts a sequence that sets the title or
clears the screen), shown as `\\x1b` instead, and those rich leaves out (`_CONTROL`) left
out: text from outside (a worker's name, a reason, a window title) is printed, never run."""


def inert(text: str) -> str:
    """`text` with every control character a terminal would obey written out (`\\x1b`)."""
    return text.translate(_TERMINAL)


def escape(text: str) -> str:
    """`text` shown as is in rich markup (as `rich.markup.escape`, without importing rich),
    and inert on a terminal (`inert`)."""
    text = inert(text)
    text = _TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)
    if text.endswith("\\") and not text.endswith("\\\\"):
        return text + "\\"
    return text


def plain(markup: str) -> str:
    """`markup` as rich prints it with no terminal to colour: tags left out, escaped tags
    shown as text."""

    def tag(m: re.Match[str]) -> str:
        backslashes, escaped = divmod(len(m.group(1)), 2)
        return "\\" * backslashes + (m.group(2) if escaped else "")

    return _TAG.sub(tag, markup)


def _to_terminal() -> bool:
    """Human output goes to a terminal (or colours are forced): rendered by rich. To a log
    or a pipe (cron), it is written as plain lines without loading rich (~70 ms of a
    replay's start) and without wrapping (a log is grepped: a line is not cut in two)."""
    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def say(message: str, soft_wrap: bool = False) -> None:
    if _to_terminal():
        console().print(message, soft_wrap=soft_wrap)
    else:
        print(plain(message).translate(_CONTROL), file=sys.stderr)


def progress(message: str) -> None:
    """Messages from the core: plain text (typed text may contain markup characters), each
    on one line however long (a log is grepped: a reason is not cut in two)."""
    if _to_terminal():
        console().print(inert(message), markup=False, soft_wrap=True)
    else:
        print(inert(message), file=sys.stderr)
