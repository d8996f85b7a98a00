"""The `mm` command's app: each command parses its arguments, calls one core function and
renders the result (`mm act` is in act.py, the model-API side in llm.py).

Human output goes to stderr (rich); `--json` data goes to stdout. Errors are mapped to a
one-line message and an exit code in `output.fail()` alone; `MM_DEBUG=1` shows the
traceback. Help is plain text (no rich panels): `mm --help` starts without rich.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.globals import get_current_context

from mmcli.cli.act import act_app
from mmcli.cli.fleet import batch_app
from mmcli.cli.fleet import worker as fleet_worker
from mmcli.cli.options import (
    DisplayOption,
    IgnoreOption,
    JsonOption,
    ParamOption,
    PolicyOption,
    SecretOption,
    StoreOption,
    UpstreamOption,
    display_named,
    is_vnc,
    not_negative,
    open_store,
    param_values,
    policy_named,
    regions,
    state,
)
from mmcli.cli.output import console, escape, fail, keep_writing_when_closed, progress, say
from mmcli.cli.parser import MMCommand, MMGroup, wants_json
from mmcli.errors import Aborted, ExitCode, MMError, Outcome, UsageError
from mmcli.model import plural, shown_command

app = typer.Typer(
    name="mm",
    cls=MMGroup,
    help="Muscle memory for computer-use agents: record an agent once, replay it without the "
    "agent, hand back to the agent only where the screen differs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(act_app, name="act")
app.add_typer(batch_app, name="batch")
app.command(cls=MMCommand)(fleet_worker)


def _show_version(value: bool) -> None:
    if value:
        from mmcli import __version__

        print(f"mm {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    store: StoreOption = None,
    lock_wait: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            callback=not_negative,
            envvar="MM_LOCK_WAIT",
            help="How long record/replay wait for another mm to free the display before exiting 1.",
        ),
    ] = 60.0,
    display: DisplayOption = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    state["store"] = store
    state["lock_wait"] = lock_wait
    state["display"] = display_named(display)


# ---- record / replay ------------------------------------------------------------------------

RecordInputOption = Annotated[
    bool,
    typer.Option(
        "--record-input",
        help="Record the agent's input that reaches the display through no channel mm "
        "records (pynput, nut.js, XTEST) from the input events themselves, instead of "
        "failing.",
    ),
]


@app.command(cls=MMCommand)
def record(
    name: Annotated[str, typer.Argument(help="Recording name: letters, digits, '.', '_', '-'.")],
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="-- CMD [ARG]...", help="The agent command (not with --demo)."),
    ] = None,
    param: ParamOption = None,
    secret: SecretOption = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing recording.")
    ] = False,
    add: Annotated[
        bool,
        typer.Option(
            "--add",
            help="Merge this run into an existing recording of the task: the steps it "
            "shares stay, the rest becomes a branch where it departs.",
        ),
    ] = False,
    ignore_region: IgnoreOption = None,
    agent_timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            callback=not_negative,
            help="Stop the agent after this many seconds.",
        ),
    ] = None,
    observe: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            callback=not_negative,
            help="Seconds to watch the idle screen first, to learn regions that change on "
            "their own (clocks); 0 to skip.",
        ),
    ] = 1.0,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm",
            help="Record at the model API instead of the screen: CMD's Anthropic/OpenAI "
            "SDK calls go through a local proxy (docs/llm.md).",
        ),
    ] = False,
    upstream: UpstreamOption = None,
    record_input: RecordInputOption = False,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Record a person doing the task on the display (no CMD), until Ctrl+Alt+End "
            "or Pause, which is not recorded.",
        ),
    ] = False,
) -> None:
    """Run CMD as the agent and record its actions; saved only when CMD exits 0.

    A secret's value given as --secret K=V shows in `ps`: prefer --secret K with
    MM_SECRET_<K> in the environment.

    Example: mm record loan -- python examples/loan_agent.py --layout /tmp/l.json --name John

    Example: mm record loan --demo --param name=John
    """
    if llm:
        if ignore_region or demo or record_input:
            raise UsageError(
                "--ignore-region, --demo and --record-input are for screen recordings, not --llm"
            )
        from mmcli.cli.llm import record_llm

        record_llm(name, command or [], param, secret, overwrite, add, upstream, agent_timeout)
    from mmcli.backends import open_backend
    from mmcli.capture.record import record as record_task
    from mmcli.capture.record import record_demo
    from mmcli.desktop.display import display_lock
    from mmcli.store.recordings import validate_name

    validate_name(name)
    if is_vnc(state["display"]):
        raise UsageError(
            "mm record does not drive a VNC display yet: record on the X display the agent "
            "acts on, then replay with --display vnc://..."
        )
    if command and not get_current_context().meta.get("mm.dashdash", True):
        raise UsageError(
            f"put the agent command after `--`: mm record {name} [OPTIONS] -- {shlex.join(command)}"
        )
    values = param_values(param, secret)
    if demo and command:
        raise UsageError("--demo records a person: give no agent command with it")
    if not demo and not command:
        raise UsageError(
            "no agent command given (put it after `--`, or record a person with --demo)"
        )
    if demo and (record_input or agent_timeout is not None):
        raise UsageError("--record-input and --agent-timeout are for an agent, not --demo")
    ignore = regions(ignore_region)
    store = open_store()
    with (
        open_backend(state["display"]) as backend,
        display_lock(state["lock_wait"], state["display"], on_wait=progress),
    ):
        if demo:
            result = record_demo(
                store,
                backend,
                name,
                values,
                overwrite=overwrite,
                add=add,
                ignore=ignore,
                observe=observe,
                progress=progress,
            )
        else:
            result = record_task(
                store,
                backend,
                name,
                command or [],
                values,
                overwrite=overwrite,
                add=add,
                ignore=ignore,
                agent_timeout=agent_timeout,
                observe=observe,
                progress=progress,
                record_input=record_input,
            )
    if result.merged:
        pass  # the core said where the branch went
    elif result.saved:
        say(f"[green]recorded[/] {name!r}: {plural(result.steps, 'step')} in {store.where}")
    else:
        say(f"[yellow]not saved[/]: {result.reason}")
    raise typer.Exit(result.returncode)


@app.command(cls=MMCommand)
def replay(
    name: Annotated[str, typer.Argument(help="The recording to replay.")],
    param: ParamOption = None,
    secret: SecretOption = None,
    agent: Annotated[
        str | None,
        typer.Option(
            metavar="CMD",
            help="Agent command for divergences, run in the current folder ({{key}} filled "
            "in; default: the recorded command, in the folder it was recorded in).",
        ),
    ] = None,
    no_agent: Annotated[
        bool, typer.Option("--no-agent", help="On divergence stop before acting and exit 3.")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            callback=not_negative,
            help="Seconds to wait for each step's screen.",
        ),
    ] = 10.0,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the screen, act on nothing.")
    ] = False,
    policy: PolicyOption = "default",
    ignore_region: IgnoreOption = None,
    relocate: Annotated[
        bool,
        typer.Option(
            "--relocate",
            help="Where the task's window has moved, find it and act there: only when the "
            "whole task area matches at one new position.",
        ),
    ] = False,
    agent_timeout: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            callback=not_negative,
            help="Stop a fallback agent after this many seconds (exit 4); 0 for no limit.",
        ),
    ] = 600.0,
    params_file: Annotated[
        Path | None,
        typer.Option(
            metavar="CSV", help="Run once per row of this CSV file (header = param names)."
        ),
    ] = None,
    before_each: Annotated[
        str | None,
        typer.Option(
            metavar="CMD",
            help="With --params-file: shell command run before each row to bring the app "
            "to the task's first screen (e.g. restart it).",
        ),
    ] = None,
    upstream: UpstreamOption = None,
    record_input: RecordInputOption = False,
    trust_new: Annotated[
        bool,
        typer.Option(
            "--trust-new",
            help="Follow branches still pending approval (a heal that ended on an outcome "
            "never seen before) as if approved.",
        ),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Replay a recording, checking the screen before every action and the outcome after
    the last one.

    Exit codes: 0 done (from memory or healed) and the recorded outcome seen, 3 diverged
    with no agent allowed, 4 the agent failed (or healed nothing), 5 done but what was
    learned could not be saved (do not retry), 6 the steps were performed but the outcome
    differs, or a heal ended on a new outcome (check before retrying), 1 other error,
    2 usage error, 130 aborted.

    A secret's value given as --secret K=V shows in `ps`: prefer --secret K with
    MM_SECRET_<K> in the environment.

    Example: mm replay loan --no-agent

    Example: MM_VNC_PASSWORD_FILE=~/.vnc-pw mm replay loan --no-agent --display vnc://10.0.0.5
    """
    from mmcli.backends import open_backend
    from mmcli.desktop.display import display_lock
    from mmcli.replay.replayer import preflight
    from mmcli.replay.replayer import replay as replay_task
    from mmcli.replay.report import ReplayOptions
    from mmcli.store.recordings import validate_name

    validate_name(name)
    if agent and no_agent:
        raise UsageError("--agent and --no-agent exclude each other")
    if is_vnc(state["display"]) and not (no_agent or dry_run):
        raise UsageError(
            "over VNC, mm replay takes --no-agent or --dry-run: an agent's run over VNC "
            "cannot be recorded yet"
        )
    chosen = policy_named(policy)
    values = param_values(param, secret)
    store = open_store()
    agent_cmd: list[str] | None = shlex.split(agent) if agent else None
    if store.exists(name) and store.kind(name) == "llm":
        if dry_run or relocate or ignore_region or params_file is not None:
            raise UsageError(
                "--dry-run, --relocate, --ignore-region and --params-file are for screen "
                f"recordings; {name!r} was recorded at the model API"
            )
        from mmcli.cli.llm import replay_llm

        replay_llm(name, values, agent_cmd, no_agent, chosen, upstream, agent_timeout, json_out)
    agent_cwd = None
    if agent_cmd is None and not no_agent and store.exists(name):
        recorded = store.load(name)
        agent_cmd, agent_cwd = recorded.command or None, recorded.cwd
    options = ReplayOptions(
        timeout=timeout,
        policy=chosen,
        dry_run=dry_run,
        agent=agent_cmd,
        agent_cwd=agent_cwd,
        agent_timeout=agent_timeout if agent_timeout > 0 else None,
        ignore=regions(ignore_region),
        relocate=relocate,
        record_input=record_input,
        trust_new=trust_new,
    )
    if params_file is not None:
        _replay_batch(store, name, values, options, params_file, before_each, json_out)
    if before_each:
        raise UsageError("--before-each goes with --params-file")
    preflight(store, name, values, options)
    with (
        open_backend(state["display"]) as backend,
        display_lock(state["lock_wait"], state["display"], on_wait=progress),
    ):
        report = replay_task(store, backend, name, values, options, progress=progress)
    if json_out:
        print(json.dumps(report.as_json()))
    _render_report(report, dry_run)
    raise typer.Exit(report.exit_code)


def _replay_batch(
    store: Any,
    name: str,
    values: Any,
    options: Any,
    params_file: Path,
    before_each: str | None,
    json_out: bool,
) -> None:
    from mmcli.backends import open_backend
    from mmcli.desktop.display import display_lock
    from mmcli.replay.batch import check_columns, outcome_exit, read_rows, run_batch

    rows = read_rows(params_file)
    if store.exists(name) and store.kind(name) == "cli":
        check_columns(store.load(name), rows, values, params_file, progress)
    with (
        open_backend(state["display"]) as backend,
        display_lock(state["lock_wait"], state["display"], on_wait=progress),
    ):
        results = run_batch(store, backend, name, rows, values, options, before_each, progress)
    if json_out:
        print(json.dumps([r.as_json() for r in results]))
    from rich.table import Table

    table = Table("row", "params", "outcome", "detail")
    for r in results:
        style = "green" if r.ok else "red"
        params = ", ".join(f"{k}={v}" for k, v in r.params.items())
        table.add_row(str(r.row), escape(params), f"[{style}]{r.outcome}[/]", escape(r.detail))
    console().print(table)
    failed = sum(1 for r in results if not r.ok)
    say(
        f"{len(results) - failed} of {len(results)} rows done"
        + (f", {failed} failed" if failed else "")
    )
    raise typer.Exit(outcome_exit(results))


def _render_report(report: Any, dry_run: bool = False) -> None:
    d = report.divergence
    where = escape(f" at step {d.step + 1} ({d.expected}): {d.reason}") if d else ""
    messages = {
        Outcome.FROM_MEMORY: f"[green]done from memory[/]: {plural(report.steps_replayed, 'step')}",
        Outcome.HEALED: f"[green]healed[/]: {plural(report.steps_replayed, 'step')} from memory, "
        f"{report.agent_steps} by the agent{where}",
        Outcome.RECORDED: f"[green]recorded[/] {report.name!r} with the agent: "
        f"{plural(report.agent_steps, 'step')}",
        Outcome.DIVERGED: f"[red]diverged[/]{where}",
        Outcome.AGENT_FAILED: f"[red]agent failed[/] (exit {report.agent_returncode})"
        + escape(f": {report.detail}" if report.detail else "")
        + where,
        Outcome.NOT_SAVED: "[yellow]done, not saved[/]: "
        + escape(f"{report.detail}; the task was done: do not retry it"),
        Outcome.WOULD_REPLAY: "[green]dry run[/]: the screen matches step "
        f"{report.steps_replayed + 1}",
        Outcome.OUTCOME_DIFFERS: "[red]outcome differs[/]: "
        + escape(
            f"{plural(report.steps_replayed, 'step')} performed, but "
            f"{d.reason if d else 'the outcome was not seen'}; check the task before "
            f"retrying (mm show {report.name} --html {report.name}.html shows both screens)"
        ),
        Outcome.HEALED_PENDING: "[yellow]healed, unverified[/]: "
        + escape(f"{report.agent_steps} steps by the agent; {report.detail}"),
    }
    say(messages.get(report.outcome, str(report.outcome)), soft_wrap=True)
    if report.outcome is Outcome.DIVERGED:
        say(escape(next_steps(report.name, dry_run)), soft_wrap=True)


def next_steps(name: str, dry_run: bool = False) -> str:
    """What to try after a divergence with no agent allowed (exit 3)."""
    show = f"see the live and recorded screens with mm show {name} --html {name}.html"
    if dry_run:
        return f"next: {show}"
    return (
        "next: replay without --no-agent (or with --agent CMD) to let the agent finish from "
        f"here and learn this screen; {show}"
    )


# ---- inventory --------------------------------------------------------------------------------


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n = n // 1024
    return f"{n} GB"


@app.command("ls", cls=MMCommand)
def ls(json_out: JsonOption = False) -> None:
    """List recordings with their steps, branches and replay counts.

    Example: mm ls --json
    """
    from mmcli.inventory.catalog import summarize

    summaries = summarize(open_store(), notice=progress)
    if json_out:
        print(json.dumps([s.as_json() for s in summaries]))
        return
    if not summaries:
        say(f"no recordings yet in {escape(open_store().shown())}")
        say("record one with: mm record NAME -- CMD")
        return
    from rich.table import Table

    table = Table(
        "name",
        "steps",
        "branches",
        "params",
        "created",
        "last replayed",
        "replays",
        "memory",
        "healed",
        "diverged",
        "size",
    )
    for s in summaries:
        if s.error:
            say(f"[yellow]warning[/]: {s.error}")
            table.add_row(
                s.name, "-", "-", "-", "-", "-", "-", "-", "-", "-", _size(s.size), style="red"
            )
            continue
        created = s.created.strftime("%Y-%m-%d %H:%M") if s.created else "-"
        table.add_row(
            s.name,
            str(s.steps),
            str(s.branches) + (f" ({s.pending} pending)" if s.pending else ""),
            ",".join(s.params) or "-",
            created,
            (s.last_replayed or "-")[:16].replace("T", " "),
            str(s.replays),
            str(s.from_memory),
            str(s.healed),
            str(s.diverged) + (f" (+{s.outcome_differs} outcome)" if s.outcome_differs else ""),
            _size(s.size),
        )
    console().print(table)


@app.command(cls=MMCommand)
def show(
    name: Annotated[str, typer.Argument(help="The recording to show.")],
    html_file: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write one self-contained HTML page: the tree as a picture (branches "
            "where they depart), each step's thumbnail with a marker where it acted, and the "
            "live vs recorded screens of recent divergences.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Show a recording's steps as a tree, and the steps whose thumbnail is missing or
    unreadable (replay checks those with the coarse grid only).

    Example: mm show loan --html loan.html
    """
    from mmcli.capture.integrate import masked_share
    from mmcli.inventory.catalog import recent_divergences, tree
    from mmcli.store.thumbnails import describe, unusable

    if open_store().kind(name) == "sdk":
        _show_sdk(name, html_file, json_out)
        return
    if open_store().kind(name) == "llm":
        from mmcli.cli.llm import show_llm

        show_llm(name, html_file, json_out)
        return
    recording = open_store().load(name)
    lines = list(tree(recording))
    divergences = recent_divergences(open_store(), name)
    problems = {step.id: problem for step, problem in unusable(open_store(), recording)}
    if html_file is not None:
        _write_html(recording, divergences, html_file)
    if json_out:
        print(
            json.dumps(
                {
                    "name": recording.name,
                    "command": shown_command(recording.command),
                    "cwd": recording.cwd,
                    "params": recording.params,
                    "window_title": recording.window_title,
                    "steps": [
                        {
                            "step": t.depth + 1,
                            "id": t.step.id,
                            "parent": t.step.parent,
                            "depth": t.depth,
                            "action": t.step.action.describe(),
                            "thumbnail": t.step.thumbnail,
                            "thumbnail_problem": problems.get(t.step.id),
                            "masks": [m.as_list() for m in t.step.fingerprint.masks],
                            "masked_share": round(masked_share(recording, t.step), 3),
                            "pending": t.step.pending,
                            "outcome": t.step.outcome.thumbnail if t.step.outcome else None,
                        }
                        for t in lines
                    ],
                    "divergences": divergences,
                }
            )
        )
        return
    out = console()
    agent = shlex.join(shown_command(recording.command))
    agent = agent if len(agent) <= 100 else agent[:97] + "..."
    agent += f" (in {recording.cwd})" if recording.command and recording.cwd else ""
    out.print(
        f"[bold]{recording.name}[/]: {plural(len(recording.steps), 'step')}, "
        f"{plural(recording.branch_count(), 'branch', 'branches')}; agent: {escape(agent)}"
    )
    for t in lines:
        # A branch's steps stand under its first one, right of the mark that starts it.
        mark = "  └─ branch: " if t.branch_start else ""
        pad = " " * len("  └─ branch: ") * (t.indent - 1 if t.branch_start else t.indent)
        share = masked_share(recording, t.step)
        masked = f"  (unchecked: {share:.0%} of the task area)" if share >= 0.005 else ""
        masked += f"  (branch id {t.step.id})" if t.branch_start else ""
        if t.step.pending:
            masked += f"  pending: ended on a new outcome; mm approve {name} {t.step.id}"
        out.print(f"{pad}{mark}{t.depth + 1:>3}. {t.step.action.describe()}{masked}", markup=False)
    for t in lines:
        if t.step.id in problems:
            what = describe(recording.name, t.step, problems[t.step.id])
            out.print(
                f"warning: step {t.depth + 1} (id {t.step.id}): {what}; replay checks it with "
                "the coarse grid only, and --policy strict does not act on it",
                markup=False,
            )
    for d in divergences:
        out.print(
            f"diverged {d['at']} ({d['outcome']}) at step {d['step'] or '?'}: {d['reason']}",
            markup=False,
        )
        out.print(f"  live screen: {d['live']}\n  recorded:    {d['recorded']}", markup=False)


def _show_sdk(name: str, html_file: Path | None, json_out: bool) -> None:
    """An SDK document: its trajectories and their calls (there are no screens to draw)."""
    from mmcli.sdk.document import outline

    if html_file is not None:
        raise UsageError(
            f"{name!r} was written by the Python SDK: it has no screens for an HTML report"
        )
    found = outline((open_store(), name))
    if json_out:
        print(json.dumps(found))
        return
    out = console()
    runs = found["trajectories"]
    out.print(
        f"[bold]{escape(name)}[/]: Python SDK document, "
        f"{plural(len(runs), 'trajectory', 'trajectories')}"
    )
    for t in runs:
        tags = f" tags {', '.join(t['tags'])}" if t["tags"] else ""
        branch = (
            f", branch of {t['branch_of']} after step {t['branch_step']}"
            if t["branch_of"] is not None
            else ""
        )
        out.print(f"trajectory {t['id']}{tags}{branch}:", markup=False)
        for i, step in enumerate(t["steps"], 1):
            out.print(f"  {i:>3}. {step}", markup=False)


def _write_html(recording: Any, divergences: Any, html_file: Path) -> None:
    from mmcli.inventory.report import render
    from mmcli.store.recordings import atomic_write

    store = open_store()
    page = render(recording, lambda f: store.read_thumbnail(recording.name, f), divergences)
    try:
        atomic_write(html_file, page.encode("utf-8"))
    except OSError as e:
        raise MMError(f"{html_file}: cannot write ({e.strerror})") from None
    say(f"wrote {escape(str(html_file))} ({plural(len(recording.steps), 'step')})")


@app.command(cls=MMCommand)
def prune(
    older_than: Annotated[
        str | None, typer.Option(metavar="DUR", help="Delete recordings created before DUR ago.")
    ] = None,
    unused_for: Annotated[
        str | None,
        typer.Option(metavar="DUR", help="Delete recordings not replayed (nor created) in DUR."),
    ] = None,
    keep: Annotated[
        int | None,
        typer.Option(metavar="N", help="Per recording, keep the trunk and the N newest branches."),
    ] = None,
    dead_branches: Annotated[
        str | None,
        typer.Option(metavar="DUR", help="Delete branches no replay has taken in DUR."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan, delete nothing.")] = (
        False
    ),
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Delete old or unused recordings and branches: shows the plan, then asks.

    DUR is like 90m, 12h, 30d or 2w. Without a terminal nothing is deleted unless --yes.

    Example: mm prune --unused-for 30d --dead-branches 14d --dry-run
    """
    from mmcli.inventory.prune import Criteria, execute, make_plan, parse_duration

    criteria = Criteria(
        older_than=parse_duration(older_than, "--older-than") if older_than else None,
        unused_for=parse_duration(unused_for, "--unused-for") if unused_for else None,
        keep=keep,
        dead_for=parse_duration(dead_branches, "--dead-branches") if dead_branches else None,
    )
    store = open_store()
    plan = make_plan(store, criteria)
    _render_plan(plan, dry_run)
    if dry_run or not plan.deletions:
        if json_out:
            print(json.dumps({"deleted": [], "plan": [d.as_json() for d in plan.deletions]}))
        return
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("not a terminal: add --yes to delete, or --dry-run to only look")
        if not typer.confirm(f"Delete these {len(plan.deletions)} item(s)?", err=True):
            say("nothing deleted")
            raise typer.Exit(ExitCode.ERROR)
    deleted = execute(store, plan, progress)
    if json_out:
        print(json.dumps({"deleted": [d.as_json() for d in deleted], "plan": []}))
    say(f"deleted {len(deleted)} of {len(plan.deletions)} item(s)")


def _render_plan(plan: Any, dry_run: bool) -> None:
    if not plan.deletions:
        say("nothing to prune")
        return
    from rich.table import Table

    table = Table("recording", "what", "steps", "size", "why", title="prune plan")
    for d in plan.deletions:
        what = "whole recording" if d.branch is None else f"branch at step id {d.branch}"
        size = _size(d.size) if d.branch is None else "-"
        table.add_row(escape(d.name), what, str(d.steps), size, escape(d.reason))
    console().print(table)
    if dry_run:
        say("dry run: nothing deleted")


def _confirm(question: str, yes: bool) -> None:
    """Ask before a destructive step (or go on with `yes`); refuse without a terminal."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError("not a terminal: add --yes to go ahead")
    if not typer.confirm(question, err=True):
        say("nothing changed")
        raise typer.Exit(ExitCode.ERROR)


YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")]


@app.command("rm", cls=MMCommand)
def rm(
    name: Annotated[str, typer.Argument(help="The recording to delete.")],
    branch: Annotated[
        int | None,
        typer.Option(
            metavar="STEP",
            help="Delete only the branch that starts at this step id (`mm show NAME` gives "
            "it: 'branch id N'), not the recording.",
        ),
    ] = None,
    yes: YesOption = False,
    json_out: JsonOption = False,
) -> None:
    """Delete a recording (any kind) or one of its branches: shows what goes, then asks.

    Without a terminal nothing is deleted unless --yes.

    Example: mm rm loan --branch 7
    """
    from mmcli.inventory.manage import plan_removal, remove

    store = open_store()
    removal = plan_removal(store, name, branch)
    say(f"to delete: {escape(removal.describe())}")
    _confirm("Delete it?", yes)
    remove(store, removal)
    if json_out:
        print(json.dumps({"deleted": [removal.as_json()]}))
    say("deleted " + escape(removal.describe()))


@app.command("mv", cls=MMCommand)
def mv(
    old: Annotated[str, typer.Argument(help="The recording to rename.")],
    new: Annotated[str, typer.Argument(help="Its new name (not taken).")],
) -> None:
    """Rename a recording (any kind); its thumbnails and replay history go with it.

    Example: mm mv loan loan-v1
    """
    from mmcli.inventory.manage import move

    move(open_store(), old, new, progress=progress)


@app.command("export", cls=MMCommand)
def export(
    name: Annotated[str, typer.Argument(help="The recording to export.")],
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The archive to write (.tar.gz).")],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace FILE if it exists.")
    ] = False,
) -> None:
    """Write a recording (its TOML and thumbnails) to one archive file, for `mm import`.

    Example: mm export loan loan.tar.gz
    """
    from mmcli.inventory.manage import export as export_recording

    steps, thumbs = export_recording(open_store(), name, file, overwrite=overwrite)
    say(
        f"exported {escape(name)} to {escape(str(file))} "
        f"({plural(steps, 'step')}, {plural(thumbs, 'thumbnail')})"
    )


@app.command("import", cls=MMCommand)
def import_(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="An archive from `mm export`.")],
    as_name: Annotated[
        str | None,
        typer.Option("--as", metavar="NAME", help="Import under this name instead."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a recording of the same name.")
    ] = False,
) -> None:
    """Add the recording in an archive from `mm export` to the store, checked in full first.

    Example: mm import loan.tar.gz --as loan-copy
    """
    from mmcli.inventory.manage import import_archive

    store = open_store()
    doc = import_archive(store, file, as_name, overwrite=overwrite)
    say(f"imported {escape(doc.name)} ({plural(doc.steps, 'step')}) into {escape(store.where)}")


@app.command(cls=MMCommand)
def approve(
    name: Annotated[str, typer.Argument(help="The recording.")],
    branch: Annotated[
        int | None,
        typer.Argument(
            metavar="[BRANCH]",
            help="The step id the pending branch starts at (`mm show NAME` gives it); "
            "all pending branches when left out.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Trust a branch a heal learned that ended on an outcome never seen before.

    Such a branch is pending: replay does not follow it unattended (the agent is called
    again there; --no-agent exits 3) until a person has checked its result and approves it.

    Example: mm approve loan 7
    """
    from mmcli.inventory.approve import approve as approve_branches

    done = approve_branches(open_store(), name, branch)
    if json_out:
        print(json.dumps({"name": done.name, "approved": done.branches}))
    ids = ", ".join(map(str, done.branches))
    say(
        f"approved: the branch of {escape(name)!r} at step id {escape(ids)} is replayed from memory"
    )


@app.command(cls=MMCommand)
def doctor(json_out: JsonOption = False) -> None:
    """Check the display, screenshots, input, the store and the fail-safe; say what to fix.

    Exits 1 when a check fails (warnings do not count).

    Example: DISPLAY=:99 mm doctor
    """
    from mmcli.backends import open_backend
    from mmcli.inventory.doctor import Status, diagnose, exit_code

    findings = diagnose(open_store(), lambda: open_backend(state["display"]), state["display"])
    if json_out:
        print(json.dumps([f.as_json() for f in findings]))
    styles = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.SKIP: "dim"}
    out = console()
    for f in findings:
        style = styles[f.status]
        out.print(f"[{style}]{f.status:>4}[/] {f.check:<10} {escape(f.detail)}")
        if f.fix:
            out.print(f"{'':15}fix: {escape(f.fix)}")
    raise typer.Exit(exit_code(findings))


@app.command(cls=MMCommand)
def proxy(
    port: Annotated[int, typer.Option(metavar="P", help="Port on 127.0.0.1 (0: any free one).")] = (
        8765
    ),
    param: ParamOption = None,
    secret: SecretOption = None,
    policy: PolicyOption = "default",
    upstream: UpstreamOption = None,
    no_upstream: Annotated[
        bool, typer.Option("--no-upstream", help="Answer from memory only; refuse a miss.")
    ] = False,
) -> None:
    """Serve the model-API memory for agents elsewhere, the recording named in the path.

    Only requests carrying the proxy's token are answered (401 otherwise): point the agent
    at http://127.0.0.1:P/t/TOKEN/r/NAME (ANTHROPIC_BASE_URL) or
    http://127.0.0.1:P/t/TOKEN/r/NAME/v1 (OPENAI_BASE_URL). The token is $MM_PROXY_TOKEN,
    else a new one, printed. Each new model answer is saved at once.

    Example: MM_PROXY_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
    mm proxy --port 8765
    """
    from mmcli.cli.llm import serve_proxy

    serve_proxy(port, param, secret, policy_named(policy), upstream, no_upstream)


@app.command(cls=MMCommand)
def path() -> None:
    """Print where the recordings store is: its directory (resolved), or its s3:// URL.

    Example: cd "$(mm path)"
    """
    print(open_store().shown())


# ---- entry point ------------------------------------------------------------------------------


def main() -> None:
    hook = sys.modules.get("_mm_record_hook")
    if hook is not None:  # mm run by a recorded agent: its own input is reported by `mm act`
        hook.disable()
    signal.signal(signal.SIGINT, _interrupted)
    keep_writing_when_closed()
    try:
        app(prog_name="mm")
    except MMError as e:  # raised outside a command (Ctrl-C before one runs)
        sys.exit(fail(e, wants_json(sys.argv[1:])))


def _interrupted(signum: int, frame: object) -> None:
    # Ctrl-C outside a run's own handling: an error like any other, exit 130.
    raise Aborted("interrupted")
