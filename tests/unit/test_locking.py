from __future__ import annotations

import os
import re
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from mmcli.desktop.display import _lock_path, display_key, display_lock
from mmcli.errors import DisplayError, LockBusy, MMError
from mmcli.store.locking import runtime_dir
from mmcli.store.recordings import Store


def test_second_writer_of_a_name_is_refused_after_waiting() -> None:
    store = Store()
    # flock is per open file: a second open in this process contends like another one.
    with (
        store.lock("loan"),
        pytest.raises(LockBusy, match="being written"),
        store.lock("loan", timeout=0.1),
    ):
        pass
    with store.lock("loan", timeout=0.1):  # released when the holder left
        pass


def test_other_names_do_not_contend() -> None:
    store = Store()
    with store.lock("a"), store.lock("b", timeout=0.1):
        pass


def test_display_lock_names_its_holder() -> None:
    display = f":mm-test-{os.getpid()}"
    with (
        display_lock(display=display),
        pytest.raises(LockBusy, match=f"pid {os.getpid()}"),
        display_lock(wait=0.1, display=display),
    ):
        pass


def test_display_lock_held_before_its_pid_is_written_still_fails_cleanly() -> None:
    # The holder truncates the file, then writes its pid: a waiter can read it empty.
    display = f":mm-test-empty-{os.getpid()}"
    with display_lock(display=display):
        _lock_path(display).write_text("")
        seen: list[str] = []
        with (
            pytest.raises(LockBusy, match=f"display {display} is in use by another mm; waited"),
            display_lock(wait=0.1, display=display, on_wait=seen.append),
        ):
            pass
    assert seen == [f"display {display} is in use by another mm; waiting up to 0s"]


# ---- where the display lock lives, and what it is keyed by ---------------------------------


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder standing for the machine's shared /tmp, and no XDG_RUNTIME_DIR."""
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return shared


def test_links_planted_in_the_shared_temporary_folder_are_never_followed(
    shared_tmp: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    # Where an older mm kept the lock of :97, and where this one keeps its folder.
    (shared_tmp / "mm-display-_97.lock").symlink_to(victim)
    planted = shared_tmp / f"mm-{os.getuid()}"
    planted.symlink_to(attacker, target_is_directory=True)
    with pytest.raises(MMError) as err, display_lock(wait=0, display=":97"):
        pass
    assert str(err.value) == (
        f"{planted}: is not a folder (a link?); remove it so mm can keep its locks"
    )
    assert victim.read_text() == "precious" and list(attacker.iterdir()) == []


def test_anything_but_a_plain_file_at_the_lock_is_a_one_line_error(shared_tmp: Path) -> None:
    path = _lock_path(":98")
    path.mkdir(parents=True)
    with (
        pytest.raises(DisplayError, match=f"^{path}: cannot open the display lock"),
        display_lock(wait=0, display=":98"),
    ):
        pass
    path.rmdir()
    path.symlink_to(shared_tmp / "elsewhere")
    with (
        pytest.raises(DisplayError, match=f"^{path}: cannot open the display lock"),
        display_lock(wait=0, display=":98"),
    ):
        pass
    assert not (shared_tmp / "elsewhere").exists()


def test_the_lock_folder_is_the_users_own(shared_tmp: Path) -> None:
    with display_lock(wait=0, display=":99"):
        path = _lock_path(":99")
        assert path.parent == shared_tmp / f"mm-{os.getuid()}"
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a folder of another user")
def test_a_lock_folder_of_another_user_is_refused(shared_tmp: Path) -> None:
    folder = shared_tmp / f"mm-{os.getuid()}"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)
    with pytest.raises(MMError, match="belongs to another user"):
        runtime_dir()


def test_xdg_runtime_dir_is_used_when_it_is_private(
    shared_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "run"
    xdg.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    assert runtime_dir() == xdg / "mm"
    xdg.chmod(0o777)  # anyone may plant files there: not used
    assert runtime_dir() == shared_tmp / f"mm-{os.getuid()}"


@pytest.mark.parametrize(
    ("spelled", "key"),
    [
        (":3", "local-3"),
        (":3.0", "local-3"),
        (":3.1", "local-3"),
        ("unix:3", "local-3"),
        ("localhost:3", "local-3"),
        ("localhost:3.0", "local-3"),
        ("127.0.0.1:3", "local-3"),
        (f"{socket.gethostname()}:3", "local-3"),
        ("host/unix:3", "host-host-3"),
        (":30", "local-30"),
        ("Remote.Example:3.0", "host-remote.example-3"),
        ("", "other-none"),
    ],
)
def test_the_display_is_keyed_by_its_server(spelled: str, key: str) -> None:
    assert display_key(spelled) == key


@pytest.mark.parametrize("other", [":96.0", "unix:96", "localhost:96.0", "127.0.0.1:96"])
def test_one_display_spelled_two_ways_is_one_lock(shared_tmp: Path, other: str) -> None:
    with (
        display_lock(display=":96"),
        pytest.raises(LockBusy, match=f"display {re.escape(other)} is in use by another mm"),
        display_lock(wait=0.1, display=other),
    ):
        pass
    with display_lock(display=":96"), display_lock(wait=0.1, display=":95"):
        pass  # another display
