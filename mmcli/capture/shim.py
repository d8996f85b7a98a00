"""The `xdotool` first on a recorded agent's PATH: a shell script in front of
hook/_mm_xdotool.py.

A command line that starts with an xdotool command and has no input command among its
words (`getmouselocation`, `search ... windowactivate`) runs the real xdotool, the next
on PATH, straight from the shell: through Python it would cost 15-20 ms more. Any other
line (input, a script file, options, no arguments) goes to `_mm_xdotool.main`, which
reports the input to the recorder before running the real xdotool, and is the one that
decides what a line means.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

HOOK_DIR = Path(__file__).parents[1] / "hook"

INPUT = """click key keydown keyup mousedown mousemove mousemove_relative mouseup
    type""".split()  # noqa: SIM905 - a word list reads better as words
"""xdotool's commands that give input: a line with one of these words goes to Python."""
PASSING = """behave behave_screen_edge exec get_desktop get_desktop_for_window
    get_desktop_viewport get_num_desktops getactivewindow getdisplaygeometry
    getmouselocation getwindowclassname getwindowfocus getwindowgeometry getwindowname
    getwindowpid help search selectwindow set_desktop set_desktop_for_window
    set_desktop_viewport set_num_desktops set_window sleep version windowactivate
    windowclose windowfocus windowkill windowlower windowmap windowminimize windowmove
    windowquit windowraise windowreparent windowsize windowstate windowunmap""".split()  # noqa: SIM905
"""xdotool's other commands (`_mm_xdotool.COMMANDS` without `INPUT`): a line starting with
one of them and with no input word passes through."""

SCRIPT = """#!/bin/sh
# mm's recording xdotool (mmcli/capture/shim.py): a line with no input in it runs the
# real xdotool at once; any other goes through mmcli/hook/_mm_xdotool.py.
case "$1" in
{passing})
  case " $* " in
  {input}) ;;
  *)
    set -f
    IFS=:
    for dir in $PATH; do
      if [ -n "$dir" ] && [ -f "$dir/xdotool" ] && [ -x "$dir/xdotool" ] \\
        && ! [ "$dir/xdotool" -ef "$0" ]; then
        unset IFS
        exec "$dir/xdotool" "$@"
      fi
    done
    unset IFS
    set +f ;;
  esac ;;
esac
exec {python} -IS -c {code} "$@"
"""


def script(bin_dir: str) -> str:
    """The shell script, for a shim living in `bin_dir`."""
    code = (
        f"import sys; sys.path.insert(0, {str(HOOK_DIR)!r}); import _mm_xdotool; "
        f"sys.exit(_mm_xdotool.main(sys.argv[1:], {bin_dir!r}))"
    )
    return SCRIPT.format(
        passing="|".join(PASSING),
        input="|".join(f'*" {word} "*' for word in INPUT),
        python=shlex.quote(sys.executable),
        code=shlex.quote(code),
    )


def write(bin_dir: str) -> None:
    """Create `bin_dir` with the recording `xdotool` in it."""
    os.mkdir(bin_dir)
    path = os.path.join(bin_dir, "xdotool")
    with open(path, "w") as f:
        f.write(script(bin_dir))
    os.chmod(path, 0o755)
