"""A VNC server for an X display: x11vnc on 127.0.0.1 and a free port, as the tests and
the benchmark use it to give `mm --display vnc://...` a remote desktop to drive.

    python examples/vncserver.py :99      # serves :99 until Ctrl-C, prints its address
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path


class VncServer:
    """x11vnc serving `display` on 127.0.0.1; with `password`, VNC auth (the password in a
    file x11vnc reads, never on its command line); `extra`: more of x11vnc's options (a
    server that sends its changes late: `-defer 400`)."""

    def __init__(
        self, display: str, password: str | None = None, extra: Sequence[str] = ()
    ) -> None:
        if shutil.which("x11vnc") is None:
            raise RuntimeError("x11vnc is not installed (apt-get install x11vnc)")
        self.display = display
        self.password = password
        self.extra = list(extra)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="mm-vnc-"))

    @property
    def address(self) -> str:
        return f"vnc://127.0.0.1:{self.port}"

    def start(self) -> VncServer:
        # x11vnc finds its port itself from a free one up (`-autoport`) and says which
        # (`PORT=`): a port picked here and bound there later may be another's by then,
        # and clients would reach that server's desktop.
        first = _free_port()
        auth = ["-nopw"]
        if self.password is not None:
            stored = self._dir / "passwd"
            _store_password(self.password, stored)
            auth = ["-rfbauth", str(stored)]
        log = open(self._dir / "x11vnc.log", "wb")  # noqa: SIM115 - closed in stop()
        # `-noshm`: x11vnc's ~60 System V shared memory segments outlive it when it is
        # killed, and a machine's 4096 run out after ~65 such kills ("shmget: No space left
        # on device", and no server starts); polled with XGetImage, just as fast here.
        self.process = subprocess.Popen(
            ["x11vnc", "-display", self.display, "-autoport", str(first), "-localhost",
             "-forever", "-shared", "-quiet", "-noshm", *auth, *self.extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "DISPLAY": self.display},
        )  # fmt: skip
        self._log = log
        deadline = time.monotonic() + 20
        while not self.port or not _listening(self.port):
            code = self.process.poll()
            if code is not None or time.monotonic() > deadline:
                printed = self.log().strip() or "(it printed nothing)"
                how = f"exited {code}" if code is not None else "not listening after 20 s"
                self.stop()
                raise RuntimeError(f"x11vnc on {self.display} did not start ({how}): {printed}")
            said = re.search(r"^PORT=(\d+)$", self.log(), re.M)
            self.port = int(said.group(1)) if said else 0
            time.sleep(0.05)
        return self

    def log(self) -> str:
        path = self._dir / "x11vnc.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if getattr(self, "_log", None) is not None:
            self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> VncServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _store_password(password: str, path: Path) -> None:
    """A VNC password file as `x11vnc -storepasswd` writes it (the password given on its
    command line only for this short run; test passwords only)."""
    subprocess.run(["x11vnc", "-storepasswd", password, str(path)], capture_output=True, check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    with VncServer(sys.argv[1] if len(sys.argv) > 1 else os.environ["DISPLAY"]) as server:
        print(server.address, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.process.wait() if server.process else None
