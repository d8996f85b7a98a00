"""A save that fails half-way (disk full, read-only, I/O error) leaves the store as it was:
the previous recording and its thumbnails, and none of the new files."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mmcli.errors import StoreError
from mmcli.store.recordings import Store
from tests.faults.conftest import THUMBNAILS, save_sample, snapshot
from tests.helpers import sample_recording

NEW_THUMBNAILS = {f"n-{i:04d}.png": b"new" * 100 for i in range(4)}


def failing_replace(
    monkeypatch: pytest.MonkeyPatch, fails: Callable[[str], bool], code: int
) -> None:
    """The rename (or, for a new file, the link) that puts a written file in place fails
    for the destinations `fails` names (a name relative to its folder is given as
    `/NAME`)."""
    real_replace, real_link = os.replace, os.link

    def failing(real: Callable[..., None]) -> Callable[..., None]:
        def call(src: str | os.PathLike[str], dst: str | os.PathLike[str], **kw: object) -> None:
            shown = os.fspath(dst)
            if kw.get("dst_dir_fd") is not None:
                shown = "/" + shown
            if fails(shown):
                raise OSError(code, os.strerror(code))
            real(src, dst, **kw)

        return call

    monkeypatch.setattr(os, "replace", failing(real_replace))
    monkeypatch.setattr(os, "link", failing(real_link))


@pytest.mark.parametrize(
    ("where", "code", "reason"),
    [
        ("sample.toml", errno.ENOSPC, "disk full"),
        ("n-0002.png", errno.ENOSPC, "disk full"),
        ("sample.toml", errno.EROFS, "store is read-only"),
        ("sample.toml", errno.EIO, "Input/output error"),
    ],
)
def test_failed_save_leaves_the_previous_recording_and_no_new_files(
    isolated_store: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    code: int,
    reason: str,
) -> None:
    before = save_sample(isolated_store)
    failing_replace(monkeypatch, lambda dst: dst.endswith("/" + where), code)
    rec = sample_recording()
    rec.command = ["new-agent"]
    with pytest.raises(StoreError) as err:
        Store(isolated_store).save(rec, NEW_THUMBNAILS)
    message = str(err.value)
    assert reason in message and "previous version is intact" in message
    assert "\n" not in message
    monkeypatch.undo()
    assert snapshot(isolated_store) == before
    assert not [p for p in isolated_store.rglob("*.tmp")]
    assert Store(isolated_store).load("sample").command == ["python", "agent.py", "--fast"]


def test_failed_first_save_leaves_no_trace(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_replace(monkeypatch, lambda dst: dst.endswith(".toml"), errno.ENOSPC)
    with pytest.raises(StoreError, match="disk full"):
        Store(isolated_store).save(sample_recording("fresh"), THUMBNAILS)
    monkeypatch.undo()
    assert Store(isolated_store).names() == []
    assert not (isolated_store / "fresh").exists()


def test_failed_save_keeps_thumbnails_it_shares_with_the_previous_version(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thumbnails the new version writes under the names the old one uses stay: the
    previous recording needs them."""
    before = save_sample(isolated_store)
    failing_replace(monkeypatch, lambda dst: dst.endswith(".toml"), errno.ENOSPC)
    with pytest.raises(StoreError):
        Store(isolated_store).save(sample_recording(), THUMBNAILS)
    monkeypatch.undo()
    assert snapshot(isolated_store) == before
