"""Shared fixtures: every test gets its own empty store; no test touches real recordings."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = tmp_path / "store"
    monkeypatch.setenv("MM_HOME", str(store))
    # History lines a run could not write wait here (mmcli/store/spool.py), not in ~.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MM_RECORD_SOCKET", raising=False)
    return store
