"""The Python examples of docs/sdk.md, and running one as a program of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "sdk.md"
BLOCK = re.compile(r"(<!-- needs a display -->\n)?```python\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Example:
    index: int
    code: str
    needs_display: bool


def examples() -> list[Example]:
    found = BLOCK.findall(DOC.read_text())
    return [Example(i, code, bool(marker)) for i, (marker, code) in enumerate(found)]


def run_example(example: Example, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Run the example in `workdir` with its own store; fails the test on a non-zero exit."""
    script = workdir / f"example_{example.index}.py"
    script.write_text(example.code)
    repo = str(DOC.parents[1])
    env = {**os.environ, "MM_HOME": str(workdir / "store"), "PYTHONPATH": repo}
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=workdir,
        env=env,
    )
    assert done.returncode == 0, f"example {example.index} failed:\n{done.stderr}"
    return done
