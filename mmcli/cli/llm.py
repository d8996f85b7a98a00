"""The `mm` commands' skin for model-API recordings (`--llm`, `mm proxy`): call the core in
`mmcli.llm`, render the result. Kept apart from app.py, which it borrows its output from."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from mmcli.cli.options import open_store, param_values
from mmcli.cli.output import console, progress, say
from mmcli.errors import Outcome, UsageError
from mmcli.model import plural, shown_command

if TYPE_CHECKING:
    from mmcli.screen.matcher import Policy

TOKEN_ENV = "MM_PROXY_TOKEN"


def record_llm(
    name: str,
    command: list[str],
    param: list[str] | None,
    secret: list[str] | None,
    overwrite: bool,
    add: bool,
    upstream: str | None,
    agent_timeout: float | None,
) -> None:
    from mmcli.llm.run import record_llm as record

    values = param_values(param, secret)
    result = record(
        open_store(),
        name,
        command,
        values,
        overwrite=overwrite,
        add=add,
        upstream=upstream,
        agent_timeout=agent_timeout,
        progress=progress,
    )
    if result.saved:
        say(f"[green]recorded[/] {name!r}: {result.saved} model calls in {open_store().where}")
    elif result.outcome is Outcome.UNCHANGED:
        say("not saved: the recording's tree already holds this run")
    else:
        say(f"[yellow]not saved[/]: the agent exited {result.agent_returncode}")
    raise typer.Exit(result.exit_code)


def replay_llm(
    name: str,
    values: Any,
    agent: list[str] | None,
    no_agent: bool,
    policy: Any,
    upstream: str | None,
    agent_timeout: float | None,
    json_out: bool,
) -> None:
    from mmcli.llm.run import replay_llm as replay

    result = replay(
        open_store(),
        name,
        values,
        agent=agent,
        no_agent=no_agent,
        policy=policy,
        upstream=upstream,
        agent_timeout=agent_timeout,
        progress=progress,
    )
    if json_out:
        print(json.dumps(result.as_json()))
    where = escape(f": {result.reasons[0]}") if result.reasons else ""
    messages = {
        Outcome.FROM_MEMORY: f"[green]done from memory[/]: {result.hits} model calls answered",
        Outcome.HEALED: f"[green]healed[/]: {result.hits} answers from memory, "
        f"{result.forwarded} from the model, saved as a branch{where}",
        Outcome.DIVERGED: f"[red]diverged[/]: {result.refused} model calls refused{where}",
        Outcome.AGENT_FAILED: f"[red]agent failed[/] (exit {result.agent_returncode}){where}",
        Outcome.NOT_SAVED: f"[yellow]done, not saved[/] (do not retry the task){where}",
    }
    say(messages.get(result.outcome, result.outcome))
    raise typer.Exit(result.exit_code)


def show_llm(name: str, html_file: Path | None, json_out: bool) -> None:
    """A model-API recording: its exchanges as a tree."""
    from mmcli.llm.document import load, outline

    if html_file is not None:
        raise UsageError(f"{name!r} was recorded at the model API: no HTML report for it")
    rec = load(open_store(), name)
    lines = outline(rec)
    if json_out:
        print(
            json.dumps(
                {
                    "name": name,
                    "kind": "llm",
                    "command": shown_command(rec.command),
                    "params": rec.params,
                    "exchanges": [
                        {"id": n.id, "parent": n.parent, "depth": d, "answer": text}
                        for d, n, text in lines
                    ],
                }
            )
        )
        return
    out = console()
    out.print(
        f"[bold]{escape(name)}[/]: model-API recording, {plural(len(lines), 'model call')}, "
        f"{plural(rec.tree.branches(), 'branch', 'branches')}; "
        f"agent: {escape(shlex.join(shown_command(rec.command)))}"
    )
    for depth, _, text in lines:
        out.print(f"{'  ' * depth}{depth + 1:>3}. {text}", markup=False)


def serve_proxy(
    port: int,
    param: list[str] | None,
    secret: list[str] | None,
    policy: Policy,
    upstream: str | None,
    no_upstream: bool,
) -> None:
    from mmcli.llm.proxy import TOKEN_PATTERN
    from mmcli.llm.run import serve
    from mmcli.params import parse_values

    values = parse_values(param or [], secret or [])
    token = os.environ.get(TOKEN_ENV) or None
    if token is not None and not TOKEN_PATTERN.fullmatch(token):
        raise UsageError(
            f"{TOKEN_ENV} must be 22 to 128 letters, digits, '-' or '_' "
            "(e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )

    def ready(root: str, served: str) -> None:
        shown = f"${TOKEN_ENV}" if token is not None else served
        say(f"mm proxy on {root}/t/{shown}/r/NAME (Ctrl-C to stop)")
        if token is None:
            say(f"anyone with this token can use the proxy; set {TOKEN_ENV} to choose it")

    serve(
        open_store(),
        values,
        port=port,
        policy=policy,
        upstream=upstream,
        no_upstream=no_upstream,
        token=token,
        progress=progress,
        ready=ready,
    )
