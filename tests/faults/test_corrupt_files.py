"""Corrupt, truncated, hostile and future-version files met by the real commands: one line
naming the file, exit 1, no agent run over them, and not a byte of them changed."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mmcli.store import codec
from tests.faults.conftest import mm, one_line_error
from tests.helpers import sample_recording

pytestmark = pytest.mark.e2e

GOOD = codec.dumps(sample_recording("x"))

CORRUPT: dict[str, tuple[bytes, str]] = {
    "truncated": (GOOD[: len(GOOD) // 2].encode(), "not valid TOML"),
    "cut-before-steps": (GOOD[: GOOD.index("[[steps]]")].encode(), "no steps"),
    "not-utf8": (GOOD.encode().replace(b"python", b"\xff\xfe", 1), "not UTF-8"),
    "zeros": (bytes(4096), "not valid TOML"),
    "empty": (b"", "format_version"),
    "future": (GOOD.replace("format_version = 3", "format_version = 7", 1).encode(), "upgrade mm"),
    "loop": (GOOD.replace("id = 0\n", "id = 0\nparent = 3\n", 1).encode(), "loop of parents"),
    "escape": (
        GOOD.replace('thumbnail = "t-0000.png"', 'thumbnail = "../../secret.png"', 1).encode(),
        "plain file name",
    ),
    "other-name": (GOOD.replace('name = "x"', 'name = "y"', 1).encode(), "holds recording 'y'"),
}


def run_all(commands: list[list[str]]) -> list[object]:
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda args: mm(*args), commands))


def test_corrupt_files_are_reported_and_left_alone(
    xdisplay: str, isolated_store: Path, tmp_path: Path
) -> None:
    isolated_store.mkdir()
    for name, (data, _) in CORRUPT.items():
        (isolated_store / f"{name}.toml").write_bytes(data)
    marker = tmp_path / "agent-ran"
    commands = []
    for name in CORRUPT:
        commands.append(["replay", name])
    for name in ("truncated", "future", "loop"):
        commands += [
            ["replay", name, "--no-agent"],
            ["replay", name, "--agent", f"touch {marker}"],
            ["show", name],
            ["record", name, "--observe", "0", "--", "touch", str(marker)],
        ]
    results = run_all([*commands, ["ls", "--json"]])

    for args, result in zip(commands, results, strict=False):
        name = args[1]
        path = isolated_store / f"{name}.toml"
        line = one_line_error(result.stderr)  # type: ignore[attr-defined]
        assert result.returncode == 1, (args, result.stderr)  # type: ignore[attr-defined]
        if args[0] == "record":
            assert "already exists" in line
        else:
            assert str(path) in line and CORRUPT[name][1] in line, (args, line)
    listed = results[-1]
    assert listed.returncode == 0, listed.stderr  # type: ignore[attr-defined]
    errors = {r["name"]: r["error"] for r in json.loads(listed.stdout)}  # type: ignore[attr-defined]
    assert set(errors) == set(CORRUPT)
    for name, (_, problem) in CORRUPT.items():
        assert problem in errors[name]

    assert not marker.exists()
    for name, (data, _) in CORRUPT.items():
        assert (isolated_store / f"{name}.toml").read_bytes() == data
    assert sorted(p.name for p in isolated_store.iterdir() if p.name != ".mm") == sorted(
        f"{name}.toml" for name in CORRUPT
    )
