"""mm installed as the README tells a user (`pip install -e .` in a fresh venv, no dev
extras) keeps the window structure: pyautogui brings python3-xlib 0.15, which installs the
same `Xlib` package as python-xlib; where it was the one active, every window query of mm
failed and was answered "not known", silently (no window kept per step: the notification
rule, the keyboard rule and relocation by window off), and `mm doctor` said nothing.

On openbox (the `desktop` fixture) that venv's own `mm` records a click and a few typed
keys in the example form through `mm act`: both steps keep the form's window, and `mm
doctor` there says the window structure is read with python-xlib >= 0.33. The venv is
built once per run (pip's cache is used as a user's would be): about 15 s of the test.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop
from tests.e2e.conftest import LoanApp

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv made as the README says for users: `python -m venv`, then `pip install -e .`
    (no extras, no system site-packages)."""
    venv = tmp_path_factory.mktemp("readme") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-e", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return venv


@pytest.fixture
def form(desktop: Desktop, tmp_path: Path) -> Iterator[LoanApp]:
    app = LoanApp(tmp_path / "app").start()
    try:
        yield app
    finally:
        app.stop()


def _run(venv: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The venv's `mm` (its environment's python-xlib, not the dev venv's)."""
    done = subprocess.run(
        [str(venv / "bin" / "mm"), *argv],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "120"},
    )
    sys.stderr.write(done.stderr)
    return done


def _xlib(venv: Path) -> str:
    """Which python-xlib the venv imports (for the failure messages)."""
    code = "import Xlib; print(Xlib.__version__, Xlib.__file__)"
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True)
    return done.stdout.decode().strip() or done.stderr.decode()[-500:]


def test_a_recording_keeps_its_window_and_doctor_reads_the_window_structure(
    user_venv: Path, form: LoanApp, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    x, y = form.center("Name")
    act = shlex.quote(str(user_venv / "bin" / "mm")) + " act"
    task = f"{act} click {x} {y} && {act} type Ada"
    done = _run(
        user_venv, "--store", str(store), "record", "ada", "--observe", "0", "--", "sh", "-c", task
    )
    assert done.returncode == 0, done.stderr
    steps = tomllib.loads((store / "ada.toml").read_text())["steps"]
    kinds = [s["action"]["kind"] for s in steps]
    assert kinds == ["click", "type"], kinds
    xlib = _xlib(user_venv)
    for step in steps:  # the click's window at its point, the keys' window with the keyboard
        window = step.get("window", {})
        assert window.get("class", "").lower().endswith(".loanform"), (step["action"], xlib)

    doctor = _run(user_venv, "doctor", "--json")
    found = {f["check"]: f for f in json.loads(doctor.stdout)}
    windows = found["windows"]  # "ok" only with python-xlib >= 0.33 active
    assert windows["status"] == "ok", (windows, xlib)
