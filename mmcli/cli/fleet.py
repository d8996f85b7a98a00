"""The fleet's commands: `mm worker` on each display host, `mm batch submit` and
`mm batch status` anywhere (the core is `mmcli.fleet`; `temporalio` is imported only when
one of them runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from mmcli.cli.options import (
    AllowAgentOption,
    FallbackLimitOption,
    JsonOption,
    ParamOption,
    PolicyOption,
    SecretOption,
    TimeoutOption,
    agent_command,
    no_limit,
    open_store,
    param_values,
    policy_named,
    seat,
    state,
)
from mmcli.cli.output import escape, progress, results, say
from mmcli.cli.parser import MMCommand, MMGroup
from mmcli.errors import ExitCode, UsageError

batch_app = typer.Typer(
    cls=MMGroup,
    help="Spread the rows of a CSV over the workers of a fleet (mm worker), and follow them.\n\n"
    "Example: mm batch submit loan --params-file rows.csv --temporal 10.0.0.5:7233",
    no_args_is_help=True,
    rich_markup_mode=None,
)

TemporalOption = Annotated[
    str,
    typer.Option(
        "--temporal",
        metavar="HOST:PORT",
        envvar="MM_TEMPORAL",
        help="The Temporal server's frontend ($MM_TEMPORAL).",
    ),
]
NamespaceOption = Annotated[
    str, typer.Option("--namespace", metavar="NAME", help="The Temporal namespace.")
]


def _needs_temporalio() -> None:
    try:
        import temporalio  # noqa: F401
    except ImportError:
        raise UsageError("the fleet commands need temporalio: pip install 'mmcli[fleet]'") from None


WorkerIdOption = Annotated[
    str | None,
    typer.Option(
        "--id",
        metavar="WORKER",
        help="This worker's name in claims and status (default: HOST:DISPLAY-PID).",
        show_default=False,
    ),
]
RowStartOption = Annotated[
    str | None,
    typer.Option(
        metavar="CMD",
        help="Shell command run before each row to bring the app to the task's first "
        "screen (e.g. restart it).",
    ),
]
RowAgentOption = Annotated[
    str | None,
    typer.Option(
        metavar="CMD",
        help="Agent command for divergences (default: each recording's own, where "
        "--allow-agent allows it; else none).",
    ),
]
StopRowOption = Annotated[
    bool, typer.Option("--no-agent", help="On divergence stop the row (diverged).")
]
CommitStepsOption = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        min=1,
        help="How many actions at the end of the task commit (2: a Submit click and "
        "its confirmation's OK): the claim is written before the first of them (default: "
        "what the recording declares, `mm record --commit-steps`, else 1).",
        show_default=False,
    ),
]
WORKER_EPILOG = (
    "Before a row's committing step (its last action) and before a hand-over to the agent, "
    "a claim is written to the store: a row is never committed twice. Secrets come from "
    "--secret K with $MM_SECRET_<K>, never from the batch.\n\n"
    "Example: mm --store s3://bucket/mm worker loan --temporal 10.0.0.5:7233"
)


def worker(
    names: Annotated[list[str], typer.Argument(metavar="NAME...", help="The recordings to run.")],
    temporal: TemporalOption,
    namespace: NamespaceOption = "default",
    worker_id: WorkerIdOption = None,
    before_each: RowStartOption = None,
    agent: RowAgentOption = None,
    no_agent: StopRowOption = False,
    allow_agent: AllowAgentOption = None,
    timeout: TimeoutOption = 10.0,
    agent_timeout: FallbackLimitOption = 600.0,
    commit_steps: CommitStepsOption = None,
    policy: PolicyOption = "default",
    param: ParamOption = None,
    secret: SecretOption = None,
) -> None:
    """Take rows of batches for these recordings from Temporal and replay them on this
    display, one at a time, until Ctrl-C or SIGTERM (the row under way is finished or,
    if its committing step is not claimed yet, handed back for another worker)."""
    from mmcli.replay.report import ReplayOptions

    _check_worker(names, agent, no_agent)
    from mmcli.fleet.worker import FleetWorker, WorkerSettings, default_worker_id

    options = ReplayOptions(
        timeout=timeout, policy=policy_named(policy), agent=agent_command(agent),
        agent_timeout=no_limit(agent_timeout),
    )  # fmt: skip
    settings = WorkerSettings(
        names, temporal, namespace, worker_id or default_worker_id(state["display"]), options,
        use_recorded_agent=not agent and not no_agent, values=param_values(param, secret),
        before_each=before_each, commit_steps=commit_steps,
        allow_agents=tuple(allow_agent or ()),
    )  # fmt: skip
    with seat().opened(progress) as backend:
        FleetWorker(open_store(), backend, settings, progress).serve()


def _check_worker(names: list[str], agent: str | None, no_agent: bool) -> None:
    from mmcli.store.recordings import validate_name

    for name in names:
        validate_name(name)
    if agent and no_agent:
        raise UsageError("--agent and --no-agent exclude each other")
    _needs_temporalio()


BatchIdOption = Annotated[
    str | None,
    typer.Option(
        "--id",
        metavar="BATCH",
        show_default=False,
        help="The batch's id (default: NAME and a digest of the rows: submitting the "
        "same file again starts nothing new).",
    ),
]
RowsOption = Annotated[
    Path, typer.Option("--params-file", metavar="CSV", help="The rows (header = param names).")
]


@batch_app.command(cls=MMCommand)
def submit(
    name: Annotated[str, typer.Argument(help="The recording the rows are for.")],
    params_file: RowsOption,
    temporal: TemporalOption,
    namespace: NamespaceOption = "default",
    batch_id: BatchIdOption = None,
    json_out: JsonOption = False,
) -> None:
    """Start one Temporal workflow per row (ID mm-BATCH-ROW, never started twice) and keep
    the batch's manifest in the store (.mm/batches/BATCH.json). Prints the batch id.

    Example: mm batch submit loan --params-file rows.csv --temporal 10.0.0.5:7233
    """
    from mmcli.fleet.batches import check_batch_name, default_batch, rows_for
    from mmcli.fleet.batches import submit as submit_rows
    from mmcli.replay.batch import read_rows
    from mmcli.store.recordings import validate_name

    validate_name(name)
    store = open_store()
    used = rows_for(store, name, read_rows(params_file), str(params_file), progress)
    batch = check_batch_name(batch_id) if batch_id else default_batch(name, used)
    _needs_temporalio()
    done = submit_rows(store.objects, temporal, namespace, batch, name, used)
    if json_out:
        print(json.dumps({"batch": batch, "started": done.started, "already": done.already}))
    else:
        print(batch)
    again = f", {done.already} already started" if done.already else ""
    say(f"batch {escape(batch)}: {done.started} rows started{again} (queue mm-{escape(name)})")


@batch_app.command(cls=MMCommand)
def status(
    batch: Annotated[str, typer.Argument(help="The batch id (printed by mm batch submit).")],
    temporal: TemporalOption,
    namespace: NamespaceOption = "default",
    wait: Annotated[bool, typer.Option("--wait", help="Wait until no row is pending.")] = False,
    json_out: JsonOption = False,
) -> None:
    """How the batch's rows stand: done (from memory), healed, diverged, failed, unknown
    (claimed, or performed without the outcome seen: check by hand), pending; and which
    worker ran each.

    Exit codes: 0 every row done or healed, 1 otherwise (some pending, diverged, failed or
    unknown).

    Example: mm batch status loan-3f2a9c01d4 --temporal 10.0.0.5:7233 --wait
    """
    from mmcli.fleet.batches import check_batch_name, counts
    from mmcli.fleet.batches import status as batch_status

    check_batch_name(batch)
    _needs_temporalio()
    store = open_store()
    manifest, rows = batch_status(store.objects, temporal, namespace, batch, wait=wait)
    tally = counts(rows)
    if json_out:
        print(
            json.dumps(
                {
                    "batch": batch,
                    "recording": manifest.recording,
                    "submitted": manifest.submitted,
                    "counts": tally,
                    "rows": [r.as_json() for r in rows],
                }
            )
        )
    _render(rows, tally, json_out)
    finished = tally["done"] + tally["healed"]
    raise typer.Exit(ExitCode.OK if finished == len(rows) else ExitCode.ERROR)


def _render(rows: list[Any], tally: dict[str, int], json_out: bool = False) -> None:
    from rich.table import Table

    colours = {"done": "green", "healed": "green", "pending": "blue"}
    table = Table("row", "params", "state", "worker", "detail")
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r.params.items())
        style = colours.get(r.state, "red" if r.state == "failed" else "yellow")
        table.add_row(
            str(r.row), escape(params), f"[{style}]{r.state}[/]", escape(r.worker), escape(r.detail)
        )
    results(to_stderr=json_out).print(table)
    say(", ".join(f"{n} {s}" for s, n in tally.items()) + f" (of {len(rows)} rows)")
