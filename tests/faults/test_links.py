"""Links and paths planted in a store: nothing outside the store is ever read, written or
deleted through a symbolic link inside it, or through a path found in one of its files.
Each attack is met with a one-line error naming the path (or, for a path in the history,
the file is simply not shown), and the file outside is left as it was."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from mmcli.cli.app import app
from mmcli.errors import StoreError
from mmcli.store.recordings import Store
from mmcli.store.storefs import UnsafePath
from tests.helpers import sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
SECRET = b"root:x:0:0:TOP-SECRET-LINE\n"
THUMBS = {f"t-{i:04d}.png": b"png" for i in range(4)}


def one_line(result: Result) -> str:
    stderr = result.stderr
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("mm: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    assert "Traceback" not in stderr
    return str(errors[0])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the store with a file a user cares about."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "passwd").write_bytes(SECRET)
    (folder / "notes.txt").write_bytes(b"precious")
    return folder


def untouched(folder: Path) -> None:
    assert (folder / "passwd").read_bytes() == SECRET
    assert (folder / "notes.txt").read_bytes() == b"precious"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "passwd"]


# ---- 6: a path read from a file is a plain name in the store, or it is not used -----------


@pytest.mark.parametrize("kind", ["relative", "absolute", "link"])
def test_show_html_never_inlines_a_file_outside_the_store(
    isolated_store: Path, outside: Path, tmp_path: Path, kind: str
) -> None:
    store = Store()
    store.save(sample_recording("x"), THUMBS)
    target = {
        "relative": "../../outside/passwd",  # from store/x/ to tmp/outside/
        "absolute": str(outside / "passwd"),
        "link": "planted.png",
    }[kind]
    if kind == "link":
        (isolated_store / "x" / "planted.png").symlink_to(outside / "passwd")
        (isolated_store / "x" / "t-0000.png").unlink()
        (isolated_store / "x" / "t-0000.png").symlink_to(outside / "passwd")
    divergence = {"step": 0, "reason": "differs", "thumbnail": target, "recorded": target}
    store.runs.append("x", {"at": "2026-11-20T10:00:00", "outcome": "diverged",
                               "divergence": divergence})  # fmt: skip
    page_file = tmp_path / "report.html"
    result = runner.invoke(app, ["show", "x", "--html", str(page_file)], env=ENV)
    assert result.exit_code == 0, result.output
    page = page_file.read_text()
    assert base64.b64encode(SECRET).decode() not in page
    assert "diverged" in page
    shown = runner.invoke(app, ["show", "x", "--json"], env=ENV)
    assert str(outside) not in shown.stdout and "../" not in shown.stdout
    untouched(outside)


# ---- 9: a thumbnail folder that is a link ------------------------------------------------


@pytest.fixture
def linked_thumbs(isolated_store: Path, outside: Path) -> Path:
    """Recording `x` whose thumbnail folder `x/` is a link to `outside`."""
    Store().save(sample_recording("x"))
    assert not (isolated_store / "x").exists()
    (isolated_store / "x").symlink_to(outside, target_is_directory=True)
    return isolated_store / "x"


def test_saving_over_a_linked_thumbnail_folder_is_refused(
    linked_thumbs: Path, outside: Path
) -> None:
    # `mm record --overwrite` and a heal both end in Store.save.
    store = Store()
    before = (linked_thumbs.parent / "x.toml").read_bytes()
    for thumbnails in (None, THUMBS):
        with store.lock("x"), pytest.raises(UnsafePath) as err:
            store.save(sample_recording("x"), thumbnails)
        assert (
            str(err.value)
            == f"{linked_thumbs}: is a symbolic link; mm never follows links in the store"
        )
    assert (linked_thumbs.parent / "x.toml").read_bytes() == before
    untouched(outside)


def test_prune_refuses_a_linked_thumbnail_folder(linked_thumbs: Path, outside: Path) -> None:
    # A branch pruned (the recording saved again), then the whole recording deleted.
    for args in (["prune", "--keep", "0", "--yes"], ["prune", "--older-than", "1d", "--yes"]):
        result = runner.invoke(app, args, env=ENV)
        assert result.exit_code == 1, result.output
        assert str(linked_thumbs) in one_line(result) and "symbolic link" in result.stderr
        untouched(outside)
    assert (linked_thumbs.parent / "x.toml").is_file()


def test_live_screens_are_not_written_through_a_linked_folder(
    linked_thumbs: Path, outside: Path
) -> None:
    with pytest.raises(UnsafePath):
        Store().thumbs.write("x", "live-1.png", b"png")
    untouched(outside)


def test_a_listing_does_not_count_or_follow_a_linked_folder(linked_thumbs: Path) -> None:
    result = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert result.exit_code == 0
    (row,) = json.loads(result.stdout)
    assert row["size"] == (linked_thumbs.parent / "x.toml").stat().st_size


# ---- 11: bookkeeping files and folders that are links ------------------------------------


def test_history_appended_through_a_link_is_refused(isolated_store: Path, outside: Path) -> None:
    store = Store()
    store.save(sample_recording("x"))
    history = isolated_store / ".mm" / "history" / "x.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.symlink_to(outside / "notes.txt")
    with pytest.raises(StoreError, match=f"^{history}: is a symbolic link"):
        store.runs.append("x", {"outcome": "from-memory"})
    with pytest.raises(StoreError, match="symbolic link"):
        store.runs.read("x")
    untouched(outside)


def _append(store: Store) -> None:
    store.runs.append("x", {"outcome": "from-memory"})


def _lock(store: Store) -> None:
    with store.lock("x"):
        pass


@pytest.mark.parametrize(
    ("planted", "use"),
    [(".mm", _append), (".mm", _lock), (".mm/history", _append), (".mm/locks", _lock)],
)
def test_bookkeeping_folders_that_are_links_are_refused(
    isolated_store: Path, outside: Path, planted: str, use: object
) -> None:
    isolated_store.mkdir()
    path = isolated_store / planted
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath, match=f"^{path}: is a symbolic link"):
        use(Store())  # type: ignore[operator]
    untouched(outside)


def test_a_recording_file_that_is_a_link_is_refused(isolated_store: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    Store(elsewhere).save(sample_recording("x"))
    isolated_store.mkdir()
    (isolated_store / "x.toml").symlink_to(elsewhere / "x.toml")
    result = runner.invoke(app, ["show", "x"], env=ENV)
    assert result.exit_code == 1
    assert one_line(result) == (
        f"mm: error: {isolated_store / 'x.toml'}: is a symbolic link; "
        "mm never follows links in the store"
    )
    listed = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert "symbolic link" in json.loads(listed.stdout)[0]["error"]


def test_the_store_itself_may_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    Store(real).save(sample_recording("x"), THUMBS)
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    store = Store(tmp_path / "link")
    assert store.load("x").name == "x"
    store.runs.append("x", {"outcome": "from-memory"})
    assert store.read_thumbnail("x", "t-0000.png") == b"png"


def test_listing_refuses_a_linked_bookkeeping_folder(isolated_store: Path, outside: Path) -> None:
    Store().save(sample_recording("x"))
    shutil.rmtree(isolated_store / ".mm")
    (isolated_store / ".mm").symlink_to(outside, target_is_directory=True)
    result = runner.invoke(app, ["ls", "--json"], env=ENV)
    assert result.exit_code == 1, result.output
    assert one_line(result) == (
        f"mm: error: {isolated_store / '.mm'}: is a symbolic link; "
        "mm never follows links in the store"
    )
    untouched(outside)
