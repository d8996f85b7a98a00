"""Generate docs/cli.md from the `mm` app itself, so the reference cannot drift from the
code (a test compares the file with this output).

    python -m mmcli.cli.reference > docs/cli.md
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import typer
from typer.main import get_command

from mmcli.cli.app import app

HEADER = """# `mm` command reference

Generated from the code by `python -m mmcli.cli.reference > docs/cli.md`; a test fails
when this file is stale. Exit codes and the fallback contract are in the README.
"""


def reference() -> str:
    root = get_command(app)
    ctx = typer.Context(root, info_name="mm")
    parts = [HEADER, _section("mm", root, ctx, level=2)]
    for name, command in _subcommands(root, ctx):
        sub_ctx = typer.Context(command, info_name=name, parent=ctx)
        parts.append(_section(f"mm {name}", command, sub_ctx, level=2))
        for sub_name, sub in _subcommands(command, sub_ctx):
            leaf_ctx = typer.Context(sub, info_name=sub_name, parent=sub_ctx)
            parts.append(_section(f"mm {name} {sub_name}", sub, leaf_ctx, level=3))
    return "\n".join(parts).rstrip() + "\n"


def _subcommands(command: Any, ctx: Any) -> list[tuple[str, Any]]:
    if not hasattr(command, "list_commands"):
        return []
    return [(n, command.get_command(ctx, n)) for n in command.list_commands(ctx)]


def _section(title: str, command: Any, ctx: Any, level: int) -> str:
    lines = [f"{'#' * level} `{title}`", ""]
    if command.help:
        lines += [inspect.cleandoc(command.help), ""]
    pieces = [str(p) for p in command.collect_usage_pieces(ctx)]
    lines += ["```", f"{title} {' '.join(pieces)}".rstrip(), "```", ""]
    found = (_param_row(p, ctx) for p in command.get_params(ctx))
    rows = [r for r in found if r is not None]
    if rows:
        lines += ["| argument / option | description |", "|---|---|", *rows, ""]
    return "\n".join(lines)


def _param_row(param: Any, ctx: Any) -> str | None:
    if param.param_type_name == "argument":
        name = f"`{param.metavar or (param.name or '').upper()}`"
        text = getattr(param, "help", None) or ""
    else:
        record = param.get_help_record(ctx)
        if record is None:
            return None
        name, text = record
        name = f"`{name}`"
    return f"| {name} | {_cell(text)} |"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


if __name__ == "__main__":
    sys.stdout.write(reference())
