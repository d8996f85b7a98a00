"""The `mm` command's app: each command parses its arguments, calls one core function and
renders the result (`mm act` is in act.py, the model-API side in llm.py).

Human output goes to stderr (rich); `--json` data goes to stdout. Errors are mapped to a
one-line message and an exit code in `output.fail()` alone; `MM_DEBUG=1` shows the
traceback. Help is plain text (no rich panels): `mm --help` starts without rich.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from mmcli.backends import interrupts
from mmcli.cli import render
from mmcli.cli.act import act_app
from mmcli.cli.fleet import WORKER_EPILOG, batch_app
from mmcli.cli.fleet import worker as fleet_worker
from mmcli.cli.options import (
    AddOption,
    AgentOption,
    AllowAgentOption,
    BeforeEachOption,
    CommandArgument,
    DeadBranchesOption,
    DeclareCommitOption,
    DemoOption,
    DisplayOption,
    DryRunOption,
    FallbackLimitOption,
    IgnoreOption,
    JsonOption,
    KeepOption,
    LLMOption,
    NameArgument,
    NoAgentOption,
    ObserveOption,
    OlderThanOption,
    OverwriteOption,
    ParamOption,
    ParamsFileOption,
    PlanOnlyOption,
    PolicyOption,
    RecordInputOption,
    RecordLimitOption,
    RelocateOption,
    SecretOption,
    StoreOption,
    TimeoutOption,
    TrustNewOption,
    UnusedForOption,
    UpstreamOption,
    YesDeleteOption,
    after_dashdash,
    agent_command,
    display_named,
    no_limit,
    not_negative,
    open_store,
    param_values,
    policy_named,
    regions,
    seat,
    state,
)
from mmcli.cli.output import (
    escape,
    fail,
    keep_writing_when_closed,
    progress,
    results,
    say,
)
from mmcli.cli.parser import MMCommand, MMGroup, wants_json
from mmcli.errors import Aborted, ExitCode, MMError, UsageError
from mmcli.model import plural

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
app.command(cls=MMCommand, epilog=WORKER_EPILOG)(fleet_worker)


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

SECRET_ON_COMMAND_LINE = (
    "A secret's value given as --secret K=V shows in `ps`: prefer --secret K with "
    "MM_SECRET_<K> in the environment."
)
RECORD_EPILOG = f"""{SECRET_ON_COMMAND_LINE}

Example: mm record loan -- python examples/loan_agent.py --layout /tmp/l.json --name John

Example: mm record loan --demo --param name=John

Example: mm record loan --display vnc://10.0.0.5 -- python agent.py (over VNC the agent
connects to $MM_VNC_ADDRESS with the password in $MM_VNC_PASSWORD)"""
REPLAY_EPILOG = (
    "Exit codes: 0 done (from memory or healed) and the recorded outcome seen, 3 diverged "
    "with no agent allowed, 4 the agent failed (or healed nothing), 5 done but what was "
    "learned could not be saved (do not retry), 6 the steps were performed but the outcome "
    "differs, or a heal ended on a new outcome (check before retrying), 1 other error, "
    "2 usage error, 130 aborted.\n\n"
    f"{SECRET_ON_COMMAND_LINE}\n\n"
    "Example: mm replay loan --no-agent\n\n"
    "Example: MM_VNC_PASSWORD_FILE=~/.vnc-pw mm replay loan --no-agent --display vnc://10.0.0.5"
)


@app.command(cls=MMCommand, epilog=RECORD_EPILOG)
def record(
    name: NameArgument,
    command: CommandArgument = None,
    param: ParamOption = None,
    secret: SecretOption = None,
    overwrite: OverwriteOption = False,
    add: AddOption = False,
    ignore_region: IgnoreOption = None,
    agent_timeout: RecordLimitOption = None,
    observe: ObserveOption = 1.0,
    llm: LLMOption = False,
    upstream: UpstreamOption = None,
    record_input: RecordInputOption = False,
    demo: DemoOption = False,
    commit_steps: DeclareCommitOption = None,
) -> None:
    """Run CMD as the agent and record its actions; saved only when CMD exits 0."""
    from mmcli.verbs.record import RecordRequest
    from mmcli.verbs.record import record as record_run

    if not llm:
        after_dashdash(name, command)
    request = RecordRequest(
        name, command or [], param_values(param, secret), seat(),
        overwrite=overwrite, add=add, demo=demo, llm=llm, ignore=regions(ignore_region),
        agent_timeout=agent_timeout, observe=observe, upstream=upstream,
        record_input=record_input, commit_steps=commit_steps,
    )  # fmt: skip
    store = open_store()
    raise render.recorded(record_run(store, request, progress), name, store.where)


@app.command(cls=MMCommand, epilog=REPLAY_EPILOG)
def replay(
    name: Annotated[str, typer.Argument(help="The recording to replay.")],
    param: ParamOption = None,
    secret: SecretOption = None,
    agent: AgentOption = None,
    no_agent: NoAgentOption = False,
    timeout: TimeoutOption = 10.0,
    dry_run: DryRunOption = False,
    policy: PolicyOption = "default",
    ignore_region: IgnoreOption = None,
    relocate: RelocateOption = False,
    agent_timeout: FallbackLimitOption = 600.0,
    params_file: ParamsFileOption = None,
    before_each: BeforeEachOption = None,
    upstream: UpstreamOption = None,
    record_input: RecordInputOption = False,
    trust_new: TrustNewOption = False,
    allow_agent: AllowAgentOption = None,
    json_out: JsonOption = False,
) -> None:
    """Replay a recording, checking the screen before every action and the outcome after
    the last one."""
    from mmcli.verbs.replay import ReplayRequest
    from mmcli.verbs.replay import replay as replay_run

    request = ReplayRequest(
        name, param_values(param, secret), seat(),
        agent=agent_command(agent), no_agent=no_agent, timeout=timeout,
        policy=policy_named(policy), dry_run=dry_run, ignore=regions(ignore_region),
        relocate=relocate, agent_timeout=no_limit(agent_timeout), params_file=params_file,
        before_each=before_each, upstream=upstream, record_input=record_input,
        trust_new=trust_new, allow_agents=tuple(allow_agent or ()),
    )  # fmt: skip
    raise render.replayed(replay_run(open_store(), request, progress), json_out, dry_run)


# ---- inventory --------------------------------------------------------------------------------


@app.command("ls", cls=MMCommand)
def ls(json_out: JsonOption = False) -> None:
    """List recordings with their steps, branches and replay counts.

    Example: mm ls --json
    """
    from mmcli.inventory.catalog import summarize

    store = open_store()
    render.listing(summarize(store, notice=progress), json_out, store.shown())


@app.command(cls=MMCommand)
def show(
    name: Annotated[str, typer.Argument(help="The recording to show.")],
    html_file: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write one self-contained HTML page: the tree as a picture (branches "
            "where they depart), each step's thumbnail with a marker where it acted, and for "
            "recent divergences the recorded and live task area side by side, the regions "
            "that differed outlined.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Show a recording's steps as a tree, and the steps whose thumbnail is missing or
    unreadable (replay checks those with the coarse grid only).

    Example: mm show loan --html loan.html
    """
    from mmcli.verbs.show import show as show_view

    render.shown(show_view(open_store(), name, html_file), json_out)


@app.command(cls=MMCommand)
def prune(
    older_than: OlderThanOption = None,
    unused_for: UnusedForOption = None,
    keep: KeepOption = None,
    dead_branches: DeadBranchesOption = None,
    dry_run: PlanOnlyOption = False,
    yes: YesDeleteOption = False,
    json_out: JsonOption = False,
) -> None:
    """Delete old or unused recordings and branches: shows the plan, then asks.

    DUR is like 90m, 12h, 30d or 2w. Without a terminal nothing is deleted unless --yes.

    Example: mm prune --unused-for 30d --dead-branches 14d --dry-run
    """
    from mmcli.inventory.prune import Criteria, execute, make_plan

    store = open_store()
    plan = make_plan(store, Criteria.parse(older_than, unused_for, keep, dead_branches))
    render.prune_plan(plan, dry_run)
    if dry_run or not plan.deletions:
        render.pruned(plan, None, json_out)
        return
    question = f"Delete these {len(plan.deletions)} item(s)?"
    _confirm(question, yes, "add --yes to delete, or --dry-run to only look", "nothing deleted")
    render.pruned(plan, execute(store, plan, progress), json_out)


def _confirm(
    question: str,
    yes: bool,
    hint: str = "add --yes to go ahead",
    declined: str = "nothing changed",
) -> None:
    """Ask before a destructive step (or go on with `yes`); refuse without a terminal."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(f"not a terminal: {hint}")
    if not typer.confirm(question, err=True):
        say(declined)
        raise typer.Exit(ExitCode.ERROR)


YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")]


@app.command("rm", cls=MMCommand)
def rm(
    name: Annotated[str, typer.Argument(help="The recording to delete.")],
    branch: Annotated[
        int | None,
        typer.Option(
            metavar="ID",
            help="Delete only this branch, not the recording (its id: `mm show NAME` says "
            "'branch id N').",
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
            help="The pending branch's id (`mm show NAME` says 'branch id N'); "
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
    which = "branch" if len(done.branches) == 1 else "branches"
    say(f"approved: {which} {escape(ids)} of {escape(name)!r}, replayed from memory from now on")


@app.command(cls=MMCommand)
def doctor(json_out: JsonOption = False) -> None:
    """Check the display, screenshots, input, the window structure (and whether a
    compositing manager keeps each window's pixels), the store, the fail-safe and how
    typed text is read back; say what to fix.

    Exits 1 when a check fails (warnings do not count).

    Example: DISPLAY=:99 mm doctor
    """
    from mmcli.backends import open_backend
    from mmcli.inventory.doctor import Status, diagnose, exit_code

    findings = diagnose(open_store(), lambda: open_backend(state["display"]), state["display"])
    if json_out:
        print(json.dumps([f.as_json() for f in findings]))
    styles = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.SKIP: "dim"}
    out = results(to_stderr=json_out)
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
    interrupts.install(_interrupted)
    keep_writing_when_closed()
    try:
        app(prog_name="mm")
    except MMError as e:  # raised outside a command (Ctrl-C before one runs)
        sys.exit(fail(e, wants_json(sys.argv[1:])))


def _interrupted() -> Aborted:
    # Ctrl-C outside a run's own handling: an error like any other, exit 130.
    return Aborted("interrupted")
