"""Fixtures for the example world: a private Xvfb and the loan form app as a subprocess.

Independent of mmcli on purpose: these tests check the example app and agent themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "examples" / "loan_form.py"
AGENT = ROOT / "examples" / "loan_agent.py"


def _start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    # -displayfd lets Xvfb pick a free display number and tell us once it accepts clients.
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_fd),
            "-screen",
            "0",
            "1920x1080x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    if not number:
        proc.kill()
        pytest.fail("Xvfb did not report a display number")
    return proc, f":{number}"


@pytest.fixture(scope="module")
def x_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Environment for subprocesses that talk to a fresh Xvfb of their own."""
    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb): the example world needs X")
    proc, display = _start_xvfb()
    # pyautogui refuses to import without an Xauthority file, even an empty one.
    xauth = tmp_path_factory.mktemp("x") / "Xauthority"
    xauth.touch()
    env = {**os.environ, "DISPLAY": display, "XAUTHORITY": str(xauth)}
    for key in [k for k in env if k.startswith("MM_PARAM_")]:
        del env[key]
    try:
        yield env
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


class LoanForm:
    """examples/loan_form.py as a subprocess."""

    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env = env
        self.out = workdir / "out.jsonl"
        self.layout_path = workdir / "layout.json"
        self.ready = workdir / "ready"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, *flags: str) -> LoanForm:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(APP),
                "--out",
                str(self.out),
                "--layout",
                str(self.layout_path),
                "--ready-file",
                str(self.ready),
                *flags,
            ],
            env=self.env,
        )
        deadline = time.monotonic() + 15
        while not (self.ready.exists() and self.layout_path.exists()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"loan_form.py did not start with flags {flags}")
            time.sleep(0.05)
        return self

    def layout(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.layout_path.read_text())
        return result

    def records(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines() if line]

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def loan_form(x_env: dict[str, str], tmp_path: Path) -> Iterator[LoanForm]:
    app = LoanForm(x_env, tmp_path)
    yield app
    app.stop()


def run_agent(
    app: LoanForm, *extra: str, env: dict[str, str] | None = None, **values: str
) -> subprocess.CompletedProcess[str]:
    wanted = {
        "name": "John",
        "email": "john@example.com",
        "amount": "1200",
        "product": "Auto",
        **values,
    }
    args = [sys.executable, str(AGENT), "--layout", str(app.layout_path), "--think", "0.05"]
    for key, value in wanted.items():
        args += [f"--{key}", value]
    result = subprocess.run(
        [*args, *extra], env={**app.env, **(env or {})}, capture_output=True, text=True, timeout=40
    )
    sys.stderr.write(result.stderr)  # shown by pytest when a test fails
    return result
