"""The README's quick starts that start servers, run as written: the block is read from
README.md (after its `<!-- quickstart-NAME` marker) and run by bash from the clone, then
the servers it started are stopped by their process group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def block(name: str) -> str:
    """The `sh` block after README.md's `<!-- quickstart-NAME` marker."""
    found = re.search(
        rf"<!-- quickstart-{name} .*?-->\n```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S
    )
    assert found, f"README.md has no quickstart-{name} block"
    return found.group(1)


def test_the_fleet_quickstart_starts_a_bucket_and_temporal(xdisplay: str) -> None:
    script = block("fleet")
    shutil.rmtree("/tmp/mm-try", ignore_errors=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "MM_"))  # as a new shell has them
    }
    env.update(PATH=f"{BIN}{os.pathsep}{env['PATH']}", DISPLAY=xdisplay)
    # What the block exported, asked once it is done, in the same shell.
    after = 'echo "---"; mm ls --json; echo "rc=$?"; echo "temporal=$MM_TEMPORAL"'
    shell = subprocess.Popen(
        ["bash", "-c", f"{script}\n{after}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = shell.communicate(timeout=120)
        doctor, _, rest = out.partition("---\n")
        assert re.search(r"ok store .*conditional writes honoured", doctor), doctor + err
        listing, _, after_ls = rest.partition("rc=")
        assert after_ls.startswith("0") and listing.strip() == "[]", out + err  # an empty bucket
        address = after_ls.partition("temporal=")[2].strip()
        assert address == "127.0.0.1:7233"
        assert asyncio.run(_temporal_answers(address)), (ROOT / "temporal.log", err)
    finally:
        _stop_group(shell.pid)  # the servers it left running


def _stop_group(group: int) -> None:
    """SIGTERM to the process group, SIGKILL to what is left of it after 10 s; returns
    once none of it runs (the fixed ports are free again), or 15 s on."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
        started = time.monotonic()
        while time.monotonic() - started < 15:
            os.killpg(group, 0)  # ProcessLookupError once the group is gone
            if time.monotonic() - started > 10:
                os.killpg(group, signal.SIGKILL)
            time.sleep(0.1)


async def _temporal_answers(address: str, within: float = 30) -> bool:
    """A Temporal client connects to `address` and reads the server's system info."""
    from temporalio.client import Client

    deadline = time.monotonic() + within
    while True:
        try:
            client = await Client.connect(address)
            await client.service_client.check_health()
            return True
        except Exception:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.5)
