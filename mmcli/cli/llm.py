"""`mm proxy`'s skin: serve the model-API memory (the core is `mmcli.llm.run.serve`).
Kept apart from app.py, which it borrows its output from."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mmcli.cli.options import open_store
from mmcli.cli.output import progress, say
from mmcli.errors import UsageError

if TYPE_CHECKING:
    from mmcli.screen.matcher import Policy

TOKEN_ENV = "MM_PROXY_TOKEN"


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
