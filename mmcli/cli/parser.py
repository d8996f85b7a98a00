"""The command line's grammar around typer: parser errors as one line with a hint, the
root's options accepted after the subcommand, and `MMError`s mapped to their exit codes
inside each command (`MMCommand`), whichever way the app is invoked."""

from __future__ import annotations

import sys
from typing import Any

import typer

# typer carries its own copy of click (never imported on its own)
from typer._click import exceptions as click_errors
from typer.core import TyperCommand, TyperGroup

from mmcli.cli.output import fail, failed_json
from mmcli.errors import ExitCode, MMError


class MMCommand(TyperCommand):
    """Maps `MMError` to its one-line message and exit code inside the command, so every
    way of invoking the app (the `mm` script, `python -m mmcli`, a test runner) agrees."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (click_errors.ClickException, typer.Exit, typer.Abort):
            raise
        except MMError as e:
            raise typer.Exit(_failed(ctx, e)) from None
        except Exception as e:  # a bug: still one line, an exit code and the JSON object
            error = MMError(
                f"internal error: {type(e).__name__}: {e} (a bug in mm; MM_DEBUG=1 shows "
                "the traceback: please report it)"
            )
            error.__cause__ = e
            raise typer.Exit(_failed(ctx, error)) from None


def _failed(ctx: Any, error: MMError) -> int:
    name = ctx.params.get("name")
    json_out = bool(ctx.params.get("json_out"))
    return fail(error, json_out, name if isinstance(name, str) else None)


GLOBAL_OPTIONS = ("--store", "--lock-wait", "--display")
"""The root's options that take a value: accepted after the subcommand too (`mm ls --store X`)."""


class OneLineUsageError(click_errors.UsageError):
    """A parser error as one `mm: error:` line with a hint (not click's usage box), and
    the error's JSON object on stdout when the command line asked for `--json`."""

    def __init__(self, message: str, ctx: Any = None, json_out: bool = False) -> None:
        super().__init__(message, ctx)
        self.json_out = json_out

    def show(self, file: Any = None) -> None:
        print(f"mm: error: {self.message}", file=file or sys.stderr)
        if self.json_out:
            failed_json(self.message, ExitCode.USAGE)


def wants_json(args: list[str]) -> bool:
    """`--json` among the options, before any `--` (after it, the words are the agent's)."""
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def one_line(e: click_errors.UsageError) -> click_errors.UsageError:
    if isinstance(e, (OneLineUsageError, click_errors.NoArgsIsHelpError)):
        return e  # the latter shows the help
    json_out = e.ctx is not None and bool(e.ctx.meta.get("mm.json"))
    message = e.format_message().rstrip(".")
    message = message[:1].lower() + message[1:]
    path = e.ctx.command_path if e.ctx is not None else "mm"
    hint = f"see `{path} -h`"
    if isinstance(e, click_errors.NoSuchOption) and path.endswith(" record"):
        hint = (
            f"if {e.option_name} is for the agent, put the agent command after `--`: "
            f"mm record NAME [OPTIONS] -- CMD {e.option_name} ..."
        )
    elif isinstance(e, click_errors.NoSuchOption):
        hint = f"see `{path} -h` for its options"
    return OneLineUsageError(f"{message}; {hint}", e.ctx, json_out)


def hoist_globals(args: list[str]) -> list[str]:
    """`mm ls --store X` as `mm --store X ls`: the root's options moved before the
    subcommand, up to a `--` (after it, everything is the agent's)."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        option = arg.split("=", 1)[0]
        if option in GLOBAL_OPTIONS and rest:
            takes = 1 if "=" in arg else 2
            front += args[i : i + takes]
            i += takes
            continue
        rest.append(arg)
        i += 1
    return front + rest


class MMGroup(TyperGroup):
    """Parser errors as one line with a hint; the root's options anywhere before `--`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if ctx.parent is None:
            ctx.meta["mm.dashdash"] = "--" in args
            ctx.meta["mm.json"] = wants_json(args)
            args = hoist_globals(args)
        try:
            return super().parse_args(ctx, args)
        except click_errors.UsageError as e:
            raise one_line(e) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except click_errors.UsageError as e:
            raise one_line(e) from None
