"""Objects planted in a store, far bigger than anything mm writes, are never read whole:
a 1 GiB document made `mm ls` reach 2 GB resident before it warned, a 300 MB history made
`mm show` reach 621 MB. The real `mm`, its own peak resident memory (`wait4`), on a local
folder and on SeaweedFS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mmcli.store.recordings import Store
from mmcli.store.s3 import S3Objects
from tests.helpers import peak_memory, sample_recording

PEAK_MB = 200


def peak_of(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`mm ARGS`: its result and its own peak resident memory in MB."""
    return peak_memory(sys.executable, "-m", "mmcli", *args)


def test_a_huge_document_and_history_in_a_folder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    Store(store).save(sample_recording("loan"))
    with open(store / "huge.toml", "wb") as f:  # sparse: no disk to speak of
        f.truncate(1 << 30)
    history = store / ".mm" / "history"
    history.mkdir(parents=True, exist_ok=True)
    with open(history / "loan.jsonl", "wb") as f:
        f.write(b'{"outcome": "from-memory", "at": "2026-01-01T00:00:00+00:00"}\n' * 5_000_000)
    listed, peak = peak_of("--store", str(store), "ls")
    assert listed.returncode == 0 and "larger than 64 MiB" in listed.stderr, listed.stderr
    assert peak < PEAK_MB, f"mm ls: {peak:.0f} MB"
    shown, peak = peak_of("--store", str(store), "show", "loan")
    assert shown.returncode == 0, shown.stderr
    assert peak < PEAK_MB, f"mm show: {peak:.0f} MB"


def test_a_huge_document_and_history_object_in_a_bucket(s3_url: str) -> None:
    store = Store(s3_url)
    with store.lock("loan"):
        store.save(sample_recording("loan"))
    objects = S3Objects(s3_url)
    objects.put("huge.toml", b"x" * (100 << 20))
    objects.put(".mm/history/loan/20260101T000000.000000000-abcdef.json", b"\n" * (100 << 20))
    listed, peak = peak_of("--store", s3_url, "ls")
    assert listed.returncode == 0 and "larger than 64 MiB" in listed.stderr, listed.stderr
    assert peak < PEAK_MB + 100, f"mm ls: {peak:.0f} MB"
    shown, peak = peak_of("--store", s3_url, "show", "loan")
    assert shown.returncode == 0, shown.stderr
    assert peak < PEAK_MB + 100, f"mm show: {peak:.0f} MB"


@pytest.fixture(autouse=True)
def _s3_credentials(request: pytest.FixtureRequest) -> None:
    """The bucket test's subprocesses get the server's credentials (`s3_env`)."""
    if "s3_url" in request.fixturenames:
        request.getfixturevalue("s3_env")
