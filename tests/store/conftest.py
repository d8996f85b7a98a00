from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmcli.store.objects import Folder, Objects
from mmcli.store.s3 import S3Objects
from tests.servers import S3Server, seaweedfs

_prefixes = itertools.count()


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with seaweedfs(tmp_path_factory.mktemp("seaweedfs")) as server:
        yield server


@pytest.fixture
def s3_env(seaweed: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    for key, value in seaweed.env().items():
        monkeypatch.setenv(key, value)
    return seaweed


@pytest.fixture
def s3_url(s3_env: S3Server, request: pytest.FixtureRequest) -> str:
    """A fresh prefix of the shared bucket for one test."""
    return s3_env.url(
        f"t{next(_prefixes)}-{request.node.name[:40]}".replace("[", "-").replace("]", "")
    )


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.e2e)])
def objects(request: pytest.FixtureRequest, tmp_path: Path) -> Objects:
    """The same test against a local folder and against a real S3 server."""
    if request.param == "folder":
        return Folder(tmp_path / "objects")
    return S3Objects(request.getfixturevalue("s3_url"))
