"""What several commands share: the root's settings (`state`: the store, the display, the
display lock's wait), the store they name, and the options that mean the same everywhere (`--store`,
`--param`, `--secret`, `--ignore-region`, `--json`, `--policy`, ...), parsed once."""

from __future__ import annotations

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
        "(password in $MM_VNC_PASSWORD or a file named by $MM_VNC_PASSWORD_FILE), or an X "
        "display such as :99 (default: $MM_DISPLAY, else $DISPLAY).",
        show_default=False,
    ),
]


def display_named(value: str | None) -> str | None:
    """The `--display` given, checked (a VNC address is parsed here: a bad one is a usage
    error before anything runs)."""
    if not value:
        return None
    from mmcli.desktop.display import vnc_address

    vnc_address(value)
    return value


def is_vnc(display: str | None) -> bool:
    from mmcli.desktop.display import vnc_address

    return display is not None and vnc_address(display) is not None


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
