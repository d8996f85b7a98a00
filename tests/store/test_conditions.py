"""A store is trusted only on a server that honours conditional writes: checked against
a real one (SeaweedFS) and a real one that ignores them (`rclone serve s3`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli.store.conditions import check
from mmcli.store.objects import Folder
from mmcli.store.s3 import S3Objects
from tests.servers import S3Server, rclone_s3


@pytest.fixture(scope="module")
def rclone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with rclone_s3(tmp_path_factory.mktemp("rclone")) as server:
        yield server


def test_a_server_that_honours_them_passes(s3_url: str) -> None:
    verdict = check(S3Objects(s3_url))
    assert verdict.ok and verdict.winners == 1 and verdict.stale_refused
    assert S3Objects(s3_url).listing() == []  # the check leaves nothing behind


def test_a_local_folder_passes(tmp_path: Path) -> None:
    assert check(Folder(tmp_path / "store")).ok


def test_a_server_that_ignores_them_is_refused(
    rclone: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in rclone.env().items():
        monkeypatch.setenv(key, value)
    verdict = check(S3Objects(rclone.url("fleet")))
    assert not verdict.ok
    assert verdict.winners > 1 or not verdict.stale_refused
    assert "ignored" in verdict.detail


def test_mm_doctor_refuses_it_and_says_why(
    rclone: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, **rclone.env()}
    env.pop("DISPLAY", None)
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "doctor", "--json", "--store", rclone.url("fleet")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 1
    store = next(f for f in json.loads(result.stdout) if f["check"] == "store")
    assert store["status"] == "fail"
    assert "conditional writes are ignored" in store["detail"]
    assert "do not share this store" in store["fix"]


def test_a_store_url_that_is_not_one_is_a_one_line_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "ls", "--store", "s3://"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert "s3://BUCKET" in result.stderr


def _ls(url: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmcli", "ls", "--store", url],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


def test_what_goes_wrong_with_a_bucket_is_one_line_a_user_can_act_on(s3_env: S3Server) -> None:
    unreachable = _ls("s3://mm-store/x", AWS_ENDPOINT_URL="http://127.0.0.1:1")
    denied = _ls("s3://mm-store/x", AWS_SECRET_ACCESS_KEY="wrong")
    missing = _ls("s3://no-such-bucket/x")
    for result in (unreachable, denied, missing):
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1, result.stderr
    assert "cannot reach the server at http://127.0.0.1:1" in unreachable.stderr
    assert "access denied" in denied.stderr and "AWS_SECRET_ACCESS_KEY" in denied.stderr
    assert "no such bucket" in missing.stderr
