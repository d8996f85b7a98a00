from __future__ import annotations

import os

import pytest

from mmcli.display import _lock_path, display_lock
from mmcli.errors import LockBusy
from mmcli.store import Store


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
