"""Fixtures for the model-API tests: a 1280x800 Xvfb, the example app, a fake model."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.world import LoanApp
from mmcli.desktop.display import VirtualDisplay
from tests.desktop import display_env
from tests.llm.fake_model import FakeModel


@pytest.fixture(scope="session")
def small_display() -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("Xvfb is required (MM_REQUIRE_XVFB=1) but not installed")
        pytest.skip("Xvfb not installed (apt-get install xvfb)")
    with VirtualDisplay(1280, 800) as display, display_env(display.display):
        yield display.display  # for the app, mm and the agent run there


@pytest.fixture
def form_app(small_display: str, tmp_path: Path) -> Iterator[LoanApp]:
    app = LoanApp(tmp_path / "app")
    yield app
    app.stop()


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as model:
        yield model
