"""The fallback agent's sandbox: it may act on the display, not on what `mm` trusts.

Approval is the one check a person makes on what an agent learned (`mm approve`): the
agent that healed, and anything it starts, must not be able to make it. So a hand-over's
agent runs under bubblewrap (`bwrap`, from Debian's `bubblewrap`; unprivileged, through
user namespaces):

- the whole file system as it is, but the store read-only (its recordings, history,
  locks: nothing there can be approved, edited or deleted from inside);
- folders holding credentials for a store in a bucket hidden behind an empty one
  (`~/.aws`), and the standard AWS variables left out of its environment;
- a process namespace of its own: whatever the agent leaves running is stopped when it
  exits (a child that would run `mm approve` in a loop once the heal is saved).

The display, the session bus, the network and every other file stay as they are: the
agent does its task as before. Where bubblewrap cannot run, `Sandbox.unavailable` says
why and the agent runs as before, with a warning (docs/safety.md).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

CREDENTIAL_FOLDERS = (".aws",)
"""Folders under the home folder that hold credentials for a store in a bucket."""
CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
)
"""The standard environment variables through which a store in a bucket is written."""
INSTALL = "apt-get install bubblewrap"


@dataclass(frozen=True)
class Sandbox:
    read_only: tuple[Path, ...] = ()
    """Folders the agent may read but not change (the store)."""
    bucket: bool = False
    """The store is a bucket: its credentials are hidden from the agent."""
    hidden: tuple[Path, ...] = field(default=())
    """Folders the agent sees empty."""

    @classmethod
    def for_store(cls, root: Path | None) -> Sandbox:
        """The sandbox of a hand-over on a store in folder `root` (None: in a bucket)."""
        if root is not None:
            return cls(read_only=(root.resolve(),))
        home = Path.home()
        hidden = tuple(p for p in (home / f for f in CREDENTIAL_FOLDERS) if p.is_dir())
        return cls(bucket=True, hidden=hidden)

    @property
    def unavailable(self) -> str | None:
        """Why the agent cannot be sandboxed here (None: it can)."""
        return _unavailable()

    def wrap(self, command: Sequence[str]) -> list[str]:
        """`command` run inside the sandbox (as it is when bubblewrap cannot run)."""
        bwrap = shutil.which("bwrap")
        if bwrap is None or self.unavailable is not None:
            return list(command)
        argv = [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent"]
        for path in self.read_only:
            if path.exists():
                argv += ["--ro-bind", str(path), str(path)]
        for path in self.hidden:
            argv += ["--tmpfs", str(path)]
        return [*argv, "--", *command]

    def left_out(self) -> tuple[str, ...]:
        """Environment variables the agent does not get."""
        return CREDENTIAL_VARIABLES if self.bucket else ()


@functools.cache
def _unavailable() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bubblewrap is not installed ({INSTALL})"
    try:
        done = subprocess.run(
            [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--", "true"],
            capture_output=True,
            timeout=10,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap does not run here: {e}"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap does not run here: {reason[-1] if reason else done.returncode}"
    return None
