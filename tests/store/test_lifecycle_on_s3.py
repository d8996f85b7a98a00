"""The run lifecycle on a store in a bucket: an SDK call on `s3://...` marks its document
in use on this machine (`mm rm`, `mm mv`, `mm import --overwrite`, `mm prune` and a second
`mm record --overwrite` leave it), and journals its line as one object of the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcli.store.recordings import Store
from tests.e2e.test_run_lifecycle import NAME, SDK, mm, refused, started, steps


def test_an_sdk_call_on_a_bucket_keeps_its_document_and_journals_once(
    s3_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MM_HOME", s3_url)
    kind = SDK(tmp_path / "work")
    kind.work.mkdir()
    kind.make(tmp_path)
    archive = tmp_path / "task.tar.gz"
    assert mm("export", NAME, str(archive)).returncode == 0
    run = kind.start()
    try:
        started(kind, run)
        refused(mm("rm", NAME, "--yes"))
        refused(mm("mv", NAME, "other"))
        refused(mm("import", str(archive), "--overwrite"))
        pruned = mm("prune", "--older-than", "0s", "--yes")
        assert pruned.returncode == 0 and f"skipped {NAME}" in pruned.stderr, pruned.stderr
        refused(mm(*kind.record("--overwrite")))
        assert not (kind.work / "second-ran").exists()
    finally:
        (kind.work / "go").touch()
        err = run.communicate(timeout=120)[1]
    assert run.returncode == 0, err
    assert steps(NAME) == 2
    history = Store(s3_url).runs.read(NAME)
    assert [(h["kind"], h["recording"], h["outcome"]) for h in history] == [
        ("sdk", NAME, "recorded"),
        ("sdk", NAME, "recorded"),
    ]
    assert all(h["worker"] and isinstance(h["seconds"], float) for h in history)
    assert mm("rm", NAME, "--yes").returncode == 0
