"""End-to-end fixtures: a real X server (Xvfb), the real example app, the real `mm`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli.display import VirtualDisplay

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "examples" / "loan_form.py"
AGENT = ROOT / "examples" / "loan_agent.py"


@pytest.fixture(scope="session")
def xdisplay() -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    with VirtualDisplay() as display:
        yield display.display


class LoanApp:
    """The example form app as a subprocess: start it, read what it submitted, stop it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.out = workdir / "submitted.jsonl"
        self.layout = workdir / "layout.json"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *flags: str) -> LoanApp:
        self.stop()
        ready = self.workdir / "ready"
        ready.unlink(missing_ok=True)
        self.layout.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, str(APP), "--out", str(self.out), "--layout", str(self.layout),
             "--ready-file", str(ready), *flags]
        )
        deadline = time.monotonic() + 20
        while not (ready.exists() and self.layout.exists()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"example app did not start (flags {flags})")
            time.sleep(0.05)
        time.sleep(0.3)  # first paint done; let Tk settle its idle tasks
        return self

    def records(self) -> list[dict[str, object]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines() if line.strip()]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


@pytest.fixture
def loan_app(xdisplay: str, tmp_path: Path) -> Iterator[LoanApp]:
    app = LoanApp(tmp_path)
    yield app
    app.stop()


def agent_command(app: LoanApp, counter: Path | None = None, **fields: str) -> list[str]:
    """The example agent's command line; with `counter`, each start appends a line to it."""
    values = {"name": "John Smith", "email": "john@example.com", "amount": "1200",
              "product": "Auto", **fields}
    args = [sys.executable, str(AGENT), "--layout", str(app.layout), "--think", "0.05"]
    for key, value in values.items():
        args += [f"--{key}", value]
    if counter is None:
        return args
    quoted = " ".join(_sh_quote(a) for a in args)
    return ["sh", "-c", f"echo started >> {_sh_quote(str(counter))}; exec {quoted}"]


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def mm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run the real `mm` command in a subprocess, output captured."""
    result = subprocess.run([sys.executable, "-m", "mmcli", *args], capture_output=True,
                            text=True, timeout=timeout, env={**os.environ, "COLUMNS": "120"})
    sys.stderr.write(result.stderr)
    return result
