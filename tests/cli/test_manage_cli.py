"""`mm rm`, `mm mv`, `mm export`, `mm import`, `mm --version`: every document kind, the
plan shown and asked for, hostile archives refused before the store is touched."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mmcli import __version__
from mmcli.cli.app import app
from mmcli.llm.document import save as save_llm
from mmcli.store.recordings import Store
from tests.helpers import sample_recording
from tests.llm.test_matching import recorded_session

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}
SDK_FIXTURE = Path(__file__).parent.parent / "sdk" / "fixtures" / "sdk-v1.toml"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def _cli(store: Store, name: str = "loan") -> None:
    store.save(sample_recording(name), {f"t-{i:04d}.png": PNG for i in range(4)})


def _llm(store: Store) -> None:
    rec = recorded_session().recording
    save_llm(store, rec, list(rec.tree.nodes))  # named "t", with its screens' thumbnails


def _sdk(store: Store) -> None:
    store.root.mkdir(parents=True, exist_ok=True)
    shutil.copy(SDK_FIXTURE, store.root / "sdk.toml")


def mm(*args: str) -> object:
    return runner.invoke(app, list(args), env=ENV)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"mm {__version__}"


@pytest.mark.parametrize("make,name", [(_cli, "loan"), (_llm, "t"), (_sdk, "sdk")])
def test_rm_removes_every_kind_with_yes(isolated_store: Path, make: object, name: str) -> None:
    store = Store()
    make(store)  # type: ignore[operator]
    result = runner.invoke(app, ["rm", name, "--yes"], env=ENV)
    assert result.exit_code == 0, result.output
    assert (
        "to delete: recording" in result.stderr and f"deleted recording {name!r}" in result.stderr
    )
    assert store.names() == [] and not (isolated_store / name).exists()


def test_rm_shows_the_plan_and_refuses_without_a_terminal(isolated_store: Path) -> None:
    _cli(Store())
    result = mm("rm", "loan")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    err = result.stderr  # type: ignore[attr-defined]
    assert "to delete: recording 'loan' (a screen recording, 5 steps" in err
    assert "mm: error: not a terminal: add --yes" in err
    assert Store().names() == ["loan"]


def test_rm_missing_and_bad_names(isolated_store: Path) -> None:
    missing = mm("rm", "nope", "--yes")
    assert missing.exit_code == 1  # type: ignore[attr-defined]
    assert "no recording named 'nope'" in missing.stderr  # type: ignore[attr-defined]
    bad = mm("rm", "../x", "--yes")
    assert bad.exit_code == 2  # type: ignore[attr-defined]


def test_rm_branch_removes_the_subtree_only(isolated_store: Path) -> None:
    store = Store()
    _cli(store)
    result = runner.invoke(app, ["rm", "loan", "--branch", "4", "--yes", "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["deleted"][0]["what"] == "branch"
    assert "branch 4 of 'loan' (1 step)" in result.stderr
    rec = store.load("loan")
    assert [s.id for s in rec.steps] == [0, 1, 2, 3]


def test_rm_branch_refuses_a_trunk_step(isolated_store: Path) -> None:
    _cli(Store())
    result = mm("rm", "loan", "--branch", "2", "--yes")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert (
        "2 is no branch of 'loan' (a step of the trunk): its branches: 4" in result.stderr  # type: ignore[attr-defined]
    )
    assert len(Store().load("loan").steps) == 5


def test_rm_refused_while_a_replay_uses_it(isolated_store: Path) -> None:
    from mmcli.store.inuse import in_use

    store = Store()
    _cli(store)
    with in_use(store, "loan"):
        result = mm("rm", "loan", "--yes")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "is being replayed" in result.stderr  # type: ignore[attr-defined]
    assert store.names() == ["loan"]


@pytest.mark.parametrize("make,name", [(_cli, "loan"), (_llm, "t"), (_sdk, "sdk")])
def test_mv_renames_every_kind(isolated_store: Path, make: object, name: str) -> None:
    store = Store()
    make(store)  # type: ignore[operator]
    thumbs = sorted(os.listdir(isolated_store / name)) if (isolated_store / name).exists() else []
    store.runs.append(name, {"at": "2026-11-01T12:00:00+00:00", "outcome": "replayed"})
    result = mm("mv", name, "renamed")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert store.names() == ["renamed"]
    assert 'name = "renamed"' in (isolated_store / "renamed.toml").read_text()
    assert not (isolated_store / name).exists()
    if thumbs:
        assert sorted(os.listdir(isolated_store / "renamed")) == thumbs
    assert len(store.runs.read("renamed")) == 1
    listing = json.loads(mm("ls", "--json").stdout)  # type: ignore[attr-defined]
    assert [s["name"] for s in listing] == ["renamed"] and not listing[0].get("error")
    shown = mm("show", "renamed", "--json")
    assert shown.exit_code == 0, shown.stderr  # type: ignore[attr-defined]


def test_mv_refuses_a_taken_name(isolated_store: Path) -> None:
    store = Store()
    _cli(store, "a")
    _cli(store, "b")
    result = mm("mv", "a", "b")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "recording 'b' already exists" in result.stderr  # type: ignore[attr-defined]
    assert store.load("a").name == "a" and store.load("b").name == "b"


@pytest.mark.parametrize("make,name", [(_cli, "loan"), (_llm, "t"), (_sdk, "sdk")])
def test_export_then_import_round_trips(
    isolated_store: Path, tmp_path: Path, make: object, name: str
) -> None:
    store = Store()
    make(store)  # type: ignore[operator]
    before = (isolated_store / f"{name}.toml").read_text()
    archive = tmp_path / "out.tar.gz"
    result = mm("export", name, str(archive))
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    again = mm("import", str(archive))
    assert again.exit_code == 1  # type: ignore[attr-defined]
    assert "--as NAME" in again.stderr  # type: ignore[attr-defined]
    copy = mm("import", str(archive), "--as", "copy")
    assert copy.exit_code == 0, copy.stderr  # type: ignore[attr-defined]
    assert "imported copy" in copy.stderr  # type: ignore[attr-defined]
    text = (isolated_store / "copy.toml").read_text()
    assert text == before.replace(f'name = "{name}"', 'name = "copy"', 1)
    if (isolated_store / name).exists():
        assert os.listdir(isolated_store / "copy") and sorted(
            os.listdir(isolated_store / "copy")
        ) == sorted(os.listdir(isolated_store / name))
    show = mm("show", "copy", "--json")
    assert show.exit_code == 0, show.stderr  # type: ignore[attr-defined]


def test_import_overwrite_replaces(isolated_store: Path, tmp_path: Path) -> None:
    store = Store()
    _cli(store)
    archive = tmp_path / "loan.tar.gz"
    assert mm("export", "loan", str(archive)).exit_code == 0  # type: ignore[attr-defined]
    assert mm("export", "loan", str(archive)).exit_code == 1  # type: ignore[attr-defined]
    mm("rm", "loan", "--branch", "4", "--yes")
    result = mm("import", str(archive), "--overwrite")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert len(store.load("loan").steps) == 5


def _archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


@pytest.mark.parametrize(
    "members,problem",
    [
        ([(_file("../evil.toml"), b"x")], "unexpected member name '../evil.toml'"),
        ([(_file("/abs.toml"), b"x")], "unexpected member name '/abs.toml'"),
        ([(_link("loan/t-0000.png", "/etc/passwd"), b"")], "is a link or a special file"),
        (
            [(_link("loan/t-0000.png", "loan.toml", tarfile.LNKTYPE), b"")],
            "is a link or a special file",
        ),
        ([(_file("loan/a/b.png"), PNG)], "unexpected member name"),
        ([(_file("loan/t.png"), b"not a png")], "is not a PNG image"),
        ([(_file("loan.toml"), b'name = "other"\n')], "not imported"),
        ([(_file("loan/t.png"), PNG)], "no recording file"),
        ([(_file("a.toml"), b"x"), (_file("b/t.png"), PNG)], "members of two recordings"),
        ([(_file("loan.toml"), b"\xff\xfe")], "not UTF-8"),
        ([(_dir("other"), b""), (_file("loan.toml"), b"x")], "members of two recordings"),
        ([(_dir("a/b"), b"")], "unexpected folder 'a/b'"),
    ],
)
def test_import_refuses_hostile_archives(
    isolated_store: Path, tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]], problem: str
) -> None:
    archive = _archive(tmp_path / "bad.tar.gz", members)
    result = mm("import", str(archive))
    assert result.exit_code == 1, result.stderr  # type: ignore[attr-defined]
    err = result.stderr  # type: ignore[attr-defined]
    assert err.startswith("mm: error: ") and err.count("\n") == 1
    assert problem in err
    assert not isolated_store.exists() or not [p for p in os.listdir(isolated_store) if p != ".mm"]


def test_import_refuses_a_bad_recording_and_a_non_archive(
    isolated_store: Path, tmp_path: Path
) -> None:
    store = Store()
    _cli(store)
    text = (isolated_store / "loan.toml").read_text().replace("x = 100", "x = 99999", 1)
    assert text != (isolated_store / "loan.toml").read_text()
    archive = _archive(tmp_path / "bad.tar.gz", [(_file("other.toml"), text.encode())])
    result = mm("import", str(archive))
    assert result.exit_code == 1 and "not imported" in result.stderr  # type: ignore[attr-defined]
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"hello")
    result = mm("import", str(junk))
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "not an archive made by `mm export`" in result.stderr  # type: ignore[attr-defined]
    assert store.names() == ["loan"]


def test_import_refuses_an_oversized_member(
    isolated_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mmcli.inventory.manage

    monkeypatch.setattr(mmcli.inventory.manage, "MAX_THUMBNAIL", 16)
    archive = _archive(tmp_path / "big.tar.gz", [(_file("loan/t.png"), PNG)])
    result = mm("import", str(archive))
    assert result.exit_code == 1 and "larger than" in result.stderr  # type: ignore[attr-defined]


def test_show_gives_the_branch_id_rm_takes(isolated_store: Path) -> None:
    _cli(Store())
    shown = mm("show", "loan")
    line = next(x for x in shown.stdout.splitlines() if "└─ branch:" in x)  # type: ignore[attr-defined]
    assert line.endswith("press enter  (branch id 4)")


def test_rm_asks_on_a_terminal(isolated_store: Path) -> None:
    import pty
    import subprocess
    import sys

    _cli(Store())
    for answer, kept in ((b"n\n", ["loan"]), (b"y\n", [])):
        primary, secondary = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "mmcli", "rm", "loan"],
            stdin=secondary,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **ENV},
        )
        os.close(secondary)
        os.write(primary, answer)
        _, err = proc.communicate(timeout=60)
        os.close(primary)
        assert proc.returncode == (1 if kept else 0), err
        assert b"Delete it?" in err
        assert Store().names() == kept


def test_import_refuses_a_damaged_archive(isolated_store: Path, tmp_path: Path) -> None:
    _cli(Store())
    archive = tmp_path / "loan.tar.gz"
    assert mm("export", "loan", str(archive)).exit_code == 0  # type: ignore[attr-defined]
    data = bytearray(archive.read_bytes())
    for i in range(20, len(data) - 8, 7):  # the deflate stream, not the gzip header
        data[i] ^= 0x5A
    archive.write_bytes(bytes(data))
    result = mm("import", str(archive), "--as", "copy")
    assert result.exit_code == 1, result.stderr  # type: ignore[attr-defined]
    assert result.stderr.startswith("mm: error: ")  # type: ignore[attr-defined]
    assert result.stderr.count("\n") == 1  # type: ignore[attr-defined]
    assert Store().names() == ["loan"]
