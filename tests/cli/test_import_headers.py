"""`mm import` bounds its memory before `tarfile` reads a header: a small archive whose pax
or GNU long-name header claims hundreds of MiB is refused having read none of it."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

CLAIMED = 300 * 1024 * 1024

# Runs `mm import` and prints the peak memory of it (KiB), alone in its own process.
MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def huge_header(path: Path, kind: bytes) -> None:
    """An archive whose first header is of `kind` and claims CLAIMED bytes (all there,
    compressed to a few hundred KB), then a member named as `mm export` names them."""
    info = tarfile.TarInfo("t.toml")
    info.size = CLAIMED
    info.type = kind
    header = info.tobuf(tarfile.USTAR_FORMAT)
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(header)
        block = (b"a" if kind != tarfile.XHDTYPE else b"9 a=bcd\n") * (1 << 17)
        for _ in range(CLAIMED // len(block)):
            out.write(block)
        out.write(tarfile.TarInfo("t.toml").tobuf(tarfile.USTAR_FORMAT))
        out.write(bytes(1024))


@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.GNUTYPE_LONGNAME])
def test_a_huge_extended_header_is_refused_unread(
    kind: bytes, isolated_store: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "x.tar.gz"
    huge_header(archive, kind)
    assert archive.stat().st_size < 4 * 1024 * 1024
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, sys.executable, "-m", "mmcli", "import", str(archive)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    code, peak_kib = (int(v) for v in result.stdout.split())
    assert peak_kib < 150 * 1024, f"peak memory {peak_kib >> 10} MiB"
    assert code == 1, result.stderr
    assert "extended tar header" in result.stderr and "not imported" in result.stderr
    assert not isolated_store.exists() or not any(isolated_store.iterdir())
