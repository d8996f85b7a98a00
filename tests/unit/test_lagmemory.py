"""A VNC server's lags kept between connections: per server, in a file this user alone
reads, never through a link, and a file that holds anything else is as good as none."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from mmcli.backends import lagmemory
from mmcli.backends.base import ChangeLog
from mmcli.backends.lagmemory import FILE_NAME, MAX_AGE, MAX_SERVERS, recalled, remember
from mmcli.backends.serverlag import LAG_MARGIN, ServerLag


def state(tmp_path: Path) -> Path:
    return tmp_path / "state" / "mm" / FILE_NAME  # XDG_STATE_HOME: tests/conftest.py


def test_a_server_s_lags_are_recalled_by_the_next_connection_to_it(tmp_path: Path) -> None:
    remember("10.0.0.5:5900", [0.41, 0.42, 0.40])
    assert recalled("10.0.0.5:5900") == [0.41, 0.42, 0.40]
    assert recalled("10.0.0.5:5901") == []
    mode = stat.S_IMODE(os.stat(state(tmp_path)).st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(os.stat(state(tmp_path).parent).st_mode) == 0o700


def test_recalled_lags_count_before_any_click() -> None:
    lag = ServerLag(ChangeLog(), [0.41, 0.42, 0.40])
    assert lag.after_input() == pytest.approx(LAG_MARGIN * 0.41)
    assert ServerLag(ChangeLog()).after_input() == 0.0


def test_nothing_learned_keeps_what_was_known(tmp_path: Path) -> None:
    remember("h:5900", [0.4, 0.4, 0.4])
    remember("h:5900", [])
    assert recalled("h:5900") == [0.4, 0.4, 0.4]


@pytest.mark.parametrize(
    "doc",
    [
        b"not json",
        b"[1, 2]",
        json.dumps({"h:5900": {"lags": [0.4, "x"], "at": 0}}).encode(),
        json.dumps({"h:5900": {"lags": [0.4, 99.0], "at": "now"}}).encode(),
        json.dumps({"h:5900": {"lags": [True, 0.4], "at": 1}}).encode(),
        json.dumps({"h:5900": [0.4]}).encode(),
    ],
)
def test_a_file_that_holds_anything_but_lags_is_as_good_as_none(tmp_path: Path, doc: bytes) -> None:
    state(tmp_path).parent.mkdir(parents=True)
    state(tmp_path).write_bytes(doc)
    assert recalled("h:5900") == []
    remember("other:5900", [0.2])  # and is replaced, not a crash
    assert recalled("other:5900") == [0.2]


def test_lags_learned_long_ago_are_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember("h:5900", [0.4, 0.4, 0.4])
    now = time.time()
    monkeypatch.setattr(lagmemory.time, "time", lambda: now + MAX_AGE + 10)
    assert recalled("h:5900") == []


def test_the_servers_connected_to_last_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(MAX_SERVERS + 3):
        monkeypatch.setattr(lagmemory.time, "time", lambda n=n: 1_000_000.0 + n)
        remember(f"h:{6000 + n}", [0.1])
    kept = json.loads(state(tmp_path).read_bytes())
    assert len(kept) == MAX_SERVERS
    assert "h:6000" not in kept and f"h:{6000 + MAX_SERVERS + 2}" in kept


def test_a_link_in_its_place_is_neither_read_nor_written(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"h:5900": {"lags": [0.4], "at": time.time()}}))
    state(tmp_path).parent.mkdir(parents=True)
    state(tmp_path).symlink_to(target)
    assert recalled("h:5900") == []
    remember("h:5900", [0.3])
    assert json.loads(target.read_text())["h:5900"]["lags"] == [0.4]
