from __future__ import annotations

import errno
import os
from dataclasses import replace
from pathlib import Path

import pytest

from mmcli.errors import (
    InvalidName,
    RecordingCorrupt,
    RecordingExists,
    RecordingNotFound,
    StoreError,
)
from mmcli.model import Action, ActionKind
from mmcli.store.recordings import Store, default_store_path, validate_name
from tests.helpers import sample_recording


@pytest.mark.parametrize("name", ["a", "loan-intake_v2.1", "A" * 100, "a...", "_a"])
def test_valid_names(name: str) -> None:
    assert validate_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "...a",
        ".hidden",
        "a/b",
        "../x",
        "a\x00b",
        "naïve",
        "a b",
        "A" * 101,
        "x/../../etc",
        "-rf",
        "--help",
        "-",
    ],
)
def test_invalid_names_are_refused(name: str, isolated_store: Path) -> None:
    with pytest.raises(InvalidName):
        Store().path(name)
    assert not isolated_store.exists()


def test_store_location_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MM_HOME", str(tmp_path / "env"))
    assert default_store_path(tmp_path / "flag") == tmp_path / "flag"
    assert default_store_path(None) == tmp_path / "env"
    monkeypatch.delenv("MM_HOME")
    assert default_store_path(None) == Path("recordings")


def test_save_and_load(isolated_store: Path) -> None:
    store = Store()
    rec = sample_recording()
    path = store.save(rec, {"t-0000.png": b"png"})
    assert path == isolated_store / "sample.toml"
    assert store.load("sample") == rec
    assert (isolated_store / "sample" / "t-0000.png").read_bytes() == b"png"
    assert store.names() == ["sample"]
    # No temporary files left behind.
    assert [p.name for p in isolated_store.iterdir() if p.name.endswith(".tmp")] == []


def test_save_refuses_to_replace_without_overwrite() -> None:
    store = Store()
    store.save(sample_recording())
    with pytest.raises(RecordingExists, match="--overwrite"):
        store.save(sample_recording(), overwrite=False)


def test_unreferenced_thumbnails_are_collected_after_save(isolated_store: Path) -> None:
    store = Store()
    store.save(sample_recording(), {"t-0000.png": b"a", "old.png": b"b"})
    assert not (isolated_store / "sample" / "old.png").exists()
    assert (isolated_store / "sample" / "t-0000.png").exists()


def test_missing_recording() -> None:
    with pytest.raises(RecordingNotFound, match="no recording named 'nope'"):
        Store().load("nope")


def test_corrupt_file_is_reported_and_left_untouched(isolated_store: Path) -> None:
    isolated_store.mkdir()
    path = isolated_store / "broken.toml"
    path.write_text("format_version = 1\nname = [\n")
    before = path.read_bytes()
    with pytest.raises(RecordingCorrupt, match=str(path)):
        Store().load("broken")
    entries = Store().entries()
    assert entries[0].error is not None and entries[0].recording is None
    assert path.read_bytes() == before


def test_file_holding_another_name_is_corrupt(isolated_store: Path) -> None:
    store = Store()
    store.save(sample_recording("one"))
    os.rename(isolated_store / "one.toml", isolated_store / "two.toml")
    with pytest.raises(RecordingCorrupt, match="holds recording 'one'"):
        store.load("two")


@pytest.mark.parametrize(
    ("err", "reason"), [(errno.ENOSPC, "disk full"), (errno.EROFS, "read-only")]
)
def test_failed_write_gives_a_clear_error_and_keeps_the_old_file(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch, err: int, reason: str
) -> None:
    store = Store()
    store.save(sample_recording())
    before = (isolated_store / "sample.toml").read_bytes()

    monkeypatch.setattr("builtins.open", _failing_open_for(".tmp", err))
    with pytest.raises(StoreError, match=f"{reason}.*previous version is intact"):
        store.save(sample_recording())
    assert (isolated_store / "sample.toml").read_bytes() == before
    assert not [p for p in isolated_store.iterdir() if p.name.endswith(".tmp")]


def _failing_open_for(suffix: str, err: int):  # type: ignore[no-untyped-def]
    real_open = open

    def fake_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file).endswith(suffix) and "w" in mode:
            raise OSError(err, os.strerror(err))
        return real_open(file, mode, *args, **kwargs)

    return fake_open


def test_history_appends_and_survives_a_torn_line(isolated_store: Path) -> None:
    store = Store()
    store.runs.append("sample", {"outcome": "from-memory"})
    store.runs.append("sample", {"outcome": "healed"})
    with open(isolated_store / ".mm" / "history" / "sample.jsonl", "a") as f:
        f.write('{"outcome": "div')
    assert [h["outcome"] for h in store.runs.read("sample")] == ["from-memory", "healed"]


def test_delete_removes_file_and_thumbnails(isolated_store: Path) -> None:
    store = Store()
    store.save(sample_recording(), {"t-0000.png": b"a"})
    store.delete("sample")
    assert not (isolated_store / "sample.toml").exists()
    assert not (isolated_store / "sample").exists()


def test_a_recording_replay_would_refuse_is_not_saved(isolated_store: Path) -> None:
    rec = sample_recording()
    rec.steps[0] = replace(rec.steps[0], action=Action(ActionKind.CLICK, x=-1, y=5))
    with pytest.raises(StoreError, match=r"sample.toml: not saved: .*off the recorded screen"):
        Store().save(rec)
    assert not (isolated_store / "sample.toml").exists()
