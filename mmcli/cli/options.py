"""What several commands share: the root's settings (`state`: the store, the display, the
display lock's wait), the store they name, and the options that mean the same everywhere (`--store`,
`--param`, `--secret`, `--ignore-region`, `--json`, `--policy`, ...), parsed once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mmcli.cli.output import progress
from mmcli.errors import UsageError

state: dict[str, Any] = {"store": None, "lock_wait": 60.0, "display": None}


def open_store():  # type: ignore[no-untyped-def]
    from mmcli.store.recordings import Store

    return Store(state["store"])


StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="DIR|URL",
        help="Where recordings live: a directory, or s3://BUCKET/PREFIX on an S3-compatible "
        "server (AWS_* environment variables) (default: $MM_HOME or ./recordings).",
        show_default=False,
    ),
]
DisplayOption = Annotated[
    str | None,
    typer.Option(
        "--display",
        metavar="DISPLAY",
        envvar="MM_DISPLAY",
        help="The display to drive: vnc://HOST[:PORT] for a remote desktop over VNC "
        "(password in $MM_VNC_PASSWORD or a file named by $MM_VNC_PASSWORD_FILE), "
        "cdp://HOST[:PORT] for a browser's page through its DevTools (a browser started "
        "with --remote-debugging-port), or an X display such as :99 (default: "
        "$MM_DISPLAY, else $DISPLAY).",
        show_default=False,
    ),
]


def display_named(value: str | None) -> str | None:
    """The `--display` given, checked (a VNC or DevTools address is parsed here: a bad one
    is a usage error before anything runs)."""
    if not value:
        return None
    from mmcli.desktop.display import cdp_address, vnc_address

    vnc_address(value)
    cdp_address(value)
    return value


def is_remote(display: str | None) -> bool:
    """A display mm reaches by its own connection (VNC, a browser's DevTools)."""
    from mmcli.desktop.display import is_remote

    return is_remote(display)


ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        "-p",
        metavar="K=V",
        help="A param: typed text equal to V becomes "
        "a placeholder; replay types the value given then.",
    ),
]
SecretOption = Annotated[
    list[str] | None,
    typer.Option(
        "--secret",
        "-s",
        metavar="K[=V]",
        help="A param whose value is never written anywhere. Prefer K alone, with the "
        "value in $MM_SECRET_<K>: a K=V on the command line is visible to others in `ps`.",
    ),
]
IgnoreOption = Annotated[
    list[str] | None,
    typer.Option(
        "--ignore-region",
        metavar="X,Y,W,H",
        help="A screen region to leave out of every check (a clock, an ad banner).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
UpstreamOption = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help="With --llm: the model server to forward to (default: $ANTHROPIC_BASE_URL / "
        "$OPENAI_BASE_URL, else the providers' own).",
    ),
]


PolicyOption = Annotated[
    str,
    typer.Option(
        metavar="POLICY", help="How strictly screens are compared: strict, default or loose."
    ),
]


def policy_named(value: str) -> Any:
    """The `--policy` named (a `mmcli.screen.matcher.Policy`)."""
    from mmcli.screen.matcher import Policy

    try:
        return Policy(value)
    except ValueError:
        raise UsageError(f"--policy must be one of {', '.join(p.value for p in Policy)}") from None


def not_negative(value: float | None) -> float | None:
    if value is not None and value < 0:
        raise typer.BadParameter("must be 0 or more (seconds)")
    return value


def param_values(params: list[str] | None, secrets: list[str] | None) -> Any:
    from mmcli.params import parse_values

    values = parse_values(params or [], secrets or [])
    for item in secrets or []:
        key, sep, _ = item.partition("=")
        if sep:
            progress(
                f"warning: --secret {key}=... puts the value on the command line, where other "
                f"users can see it (ps); use --secret {key} with MM_SECRET_{key.upper()} set"
            )
    return values


def regions(items: list[str] | None) -> list[Any]:
    from mmcli.screen.fingerprint import Rect

    out = []
    for item in items or []:
        try:
            out.append(Rect.parse(item))
        except ValueError as e:
            raise UsageError(f"--ignore-region: {e}") from None
    return out


def seat() -> Any:
    """The display the root options name (`--display`, `--lock-wait`), for a run."""
    from mmcli.verbs.display import Display

    return Display(state["display"], state["lock_wait"])


# ---- the options of record, replay and mm worker ------------------------------------------

CommandArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="-- CMD [ARG]...", help="The agent command (not with --demo)."),
]
OverwriteOption = Annotated[
    bool, typer.Option("--overwrite", help="Replace an existing recording.")
]
AddOption = Annotated[
    bool,
    typer.Option(
        "--add",
        help="Merge this run into an existing recording of the task: the steps it "
        "shares stay, the rest becomes a branch where it departs.",
    ),
]
RecordLimitOption = Annotated[
    float | None,
    typer.Option(
        "--agent-timeout",
        metavar="SECONDS",
        callback=not_negative,
        help="Stop the agent after this many seconds.",
    ),
]
ObserveOption = Annotated[
    float,
    typer.Option(
        metavar="SECONDS",
        callback=not_negative,
        help="Seconds to watch the idle screen first, to learn regions that change on "
        "their own (clocks); 0 to skip.",
    ),
]
LLMOption = Annotated[
    bool,
    typer.Option(
        "--llm",
        help="Record at the model API instead of the screen: CMD's Anthropic/OpenAI "
        "SDK calls go through a local proxy (docs/llm.md).",
    ),
]
RecordInputOption = Annotated[
    bool,
    typer.Option(
        "--record-input",
        help="Record the agent's input that reaches the display through no channel mm "
        "records (pynput, nut.js, XTEST) from the input events themselves, instead of "
        "failing.",
    ),
]
DemoOption = Annotated[
    bool,
    typer.Option(
        "--demo",
        help="Record a person doing the task on the display (no CMD), until Ctrl+Alt+End "
        "or Pause, which is not recorded.",
    ),
]
DeclareCommitOption = Annotated[
    int | None,
    typer.Option(
        "--commit-steps",
        metavar="N",
        min=1,
        help="How many actions at the end of the task commit it (2: a Submit click and its "
        "confirmation's OK), kept with the recording: a fleet's worker claims a row before "
        "the first of them (default: the last action).",
        show_default=False,
    ),
]
AgentOption = Annotated[
    str | None,
    typer.Option(
        metavar="CMD",
        help="Agent command for divergences, run in the current folder ({{key}} filled "
        "in; default: the recorded command, in the folder it was recorded in).",
    ),
]
NoAgentOption = Annotated[
    bool, typer.Option("--no-agent", help="On divergence stop before acting and exit 3.")
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        metavar="SECONDS", callback=not_negative, help="Seconds to wait for each step's screen."
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Check the screen, act on nothing.")]
RelocateOption = Annotated[
    bool,
    typer.Option(
        "--relocate",
        help="Where the task's window has moved, find it and act there: only when the "
        "whole task area matches at one new position.",
    ),
]
FallbackLimitOption = Annotated[
    float,
    typer.Option(
        "--agent-timeout",
        metavar="SECONDS",
        callback=not_negative,
        help="Stop a fallback agent after this many seconds (exit 4); 0 for no limit.",
    ),
]
ParamsFileOption = Annotated[
    Path | None,
    typer.Option(metavar="CSV", help="Run once per row of this CSV file (header = param names)."),
]
BeforeEachOption = Annotated[
    str | None,
    typer.Option(
        metavar="CMD",
        help="With --params-file: shell command run before each row to bring the app "
        "to the task's first screen (e.g. restart it).",
    ),
]
AllowAgentOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-agent",
        metavar="CMD",
        help="A recorded agent command this machine runs (on a divergence; for a model-API "
        "recording, the whole replay) when the "
        "recording comes from a shared store (a bucket; `mm worker`: any store), written "
        "as the recording keeps it, placeholders and all (`mm show NAME`); repeatable. "
        "It runs in this machine's folder, never the one the document names.",
        show_default=False,
    ),
]
TrustNewOption = Annotated[
    bool,
    typer.Option(
        "--trust-new",
        help="Follow branches still pending approval (a heal that ended on an outcome "
        "never seen before) as if approved.",
    ),
]


def agent_command(agent: str | None) -> list[str] | None:
    """`--agent CMD` as the argv it names (split as a shell would)."""
    import shlex

    return shlex.split(agent) if agent else None


def no_limit(seconds: float) -> float | None:
    """An `--agent-timeout` of 0 is no limit."""
    return seconds if seconds > 0 else None


# ---- mm prune's options ---------------------------------------------------------------------

OlderThanOption = Annotated[
    str | None, typer.Option(metavar="DUR", help="Delete recordings created before DUR ago.")
]
UnusedForOption = Annotated[
    str | None,
    typer.Option(metavar="DUR", help="Delete recordings not replayed (nor created) in DUR."),
]
KeepOption = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Per recording, keep the trunk and the N newest approved branches (those "
        "pending approval are neither counted nor deleted).",
    ),
]
DeadBranchesOption = Annotated[
    str | None, typer.Option(metavar="DUR", help="Delete branches no replay has taken in DUR.")
]
PlanOnlyOption = Annotated[bool, typer.Option("--dry-run", help="Show the plan, delete nothing.")]
YesDeleteOption = Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")]
NameArgument = Annotated[
    str, typer.Argument(help="Recording name: letters, digits, '.', '_', '-'.")
]


def after_dashdash(name: str, command: list[str] | None) -> None:
    """An agent command must follow `--` (so its options are not taken for mm's)."""
    import shlex

    from typer._click.globals import get_current_context

    if command and not get_current_context().meta.get("mm.dashdash", True):
        raise UsageError(
            f"put the agent command after `--`: mm record {name} [OPTIONS] -- {shlex.join(command)}"
        )
