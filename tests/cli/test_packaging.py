"""Installing mm prints no packaging deprecation warning (what `scripts/setup` shows)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_license_is_an_spdx_string() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"


def test_editable_install_prints_no_license_warning() -> None:
    # The metadata build of `pip install -e .`, in pip's own isolated build environment
    # (the setuptools pyproject.toml asks for), without installing anything.
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--dry-run", "-e", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "Would install mmcli" in output
    assert "project.license" not in output, output
    assert "deprecated" not in output, output
