"""One contract for every place a store's bytes can live: a local folder and a real
S3-compatible server (SeaweedFS on 127.0.0.1). Each test runs against both."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mmcli.errors import StoreError
from mmcli.store.objects import Exists, Folder, Objects, Stale


def test_what_is_put_is_got_back_with_a_tag(objects: Objects) -> None:
    tag = objects.put("loan.toml", b"version 1")
    got = objects.get("loan.toml")
    assert got.data == b"version 1"
    assert got.tag == tag
    info = objects.head("loan.toml")
    assert info is not None and info.size == 9 and info.tag == tag


def test_a_missing_object(objects: Objects) -> None:
    with pytest.raises(FileNotFoundError):
        objects.get("nothing.toml")
    assert objects.head("nothing.toml") is None
    objects.delete("nothing.toml")  # no error


def test_a_read_can_be_bounded(objects: Objects) -> None:
    objects.put("big", b"x" * 1000)
    assert len(objects.get("big", limit=10).data) == 11


def test_create_only_never_replaces(objects: Objects) -> None:
    objects.put("a/b.png", b"first", create=True)
    with pytest.raises(Exists):
        objects.put("a/b.png", b"second", create=True)
    assert objects.get("a/b.png").data == b"first"


def test_a_replace_from_a_stale_version_is_refused(objects: Objects) -> None:
    first = objects.put("loan.toml", b"v1")
    second = objects.put("loan.toml", b"v2", match=first)
    assert second != first
    with pytest.raises(Stale):
        objects.put("loan.toml", b"lost update", match=first)
    assert objects.get("loan.toml").data == b"v2"
    objects.delete("loan.toml")
    with pytest.raises(Stale):
        objects.put("loan.toml", b"after removal", match=second)
    assert objects.head("loan.toml") is None


def test_every_tag_changes_with_the_bytes(objects: Objects) -> None:
    tags = {objects.put("t", bytes([i]) * (i + 1)) for i in range(5)}
    assert len(tags) == 5


def test_list_is_recursive_sorted_and_bounded_by_its_prefix(objects: Objects) -> None:
    for key in ["loan.toml", "loan/s1.png", "loan/s2.png", "loans.toml", ".mm/history/loan/1"]:
        objects.put(key, b"x")
    assert [i.key for i in objects.listing("loan/")] == ["loan/s1.png", "loan/s2.png"]
    assert [i.key for i in objects.listing("loan")] == [
        "loan.toml",
        "loan/s1.png",
        "loan/s2.png",
        "loans.toml",
    ]
    assert [i.key for i in objects.listing(".mm/history/")] == [".mm/history/loan/1"]
    assert len(objects.listing()) == 5
    objects.delete("loan/s1.png")
    assert [i.key for i in objects.listing("loan/")] == ["loan/s2.png"]


@pytest.mark.parametrize("key", ["../x", "a//b", "/a", "a/./b", "a/..", "a\\b", ""])
def test_no_key_names_anything_outside_the_store(objects: Objects, key: str) -> None:
    with pytest.raises(StoreError):
        objects.put(key, b"x")


def test_racing_creators_exactly_one_wins(objects: Objects) -> None:
    start = threading.Barrier(12)
    wins: list[int] = []

    def create(i: int) -> None:
        start.wait()
        try:
            objects.put("heal/next", str(i).encode(), create=True)
            wins.append(i)
        except Exists:
            pass

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert objects.get("heal/next").data == str(wins[0]).encode()


def test_compare_and_swap_counts_every_increment(objects: Objects) -> None:
    objects.put("counter", b"0")

    def bump() -> None:
        for _ in range(5):
            while True:
                got = objects.get("counter")
                try:
                    objects.put("counter", str(int(got.data) + 1).encode(), match=got.tag)
                    break
                except Stale:
                    continue

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert objects.get("counter").data == b"20"


def test_a_folder_never_reads_or_writes_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"private")
    objects = Folder(tmp_path / "store")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "loan").symlink_to(outside)
    (tmp_path / "store" / "x.toml").symlink_to(outside / "secret")
    with pytest.raises(StoreError, match="symbolic link"):
        objects.get("loan/secret")
    with pytest.raises(StoreError, match="symbolic link"):
        objects.put("loan/new.png", b"x")
    with pytest.raises(StoreError, match="symbolic link"):
        objects.get("x.toml")
    assert [i.key for i in objects.listing()] == []
    objects.delete("x.toml")  # the link itself goes, never its target
    assert (outside / "secret").read_bytes() == b"private"
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
