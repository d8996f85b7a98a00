"""`mm show --html` on a real recording, opened in headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.e2e.conftest import LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("MM_REQUIRE_XVFB"):
            pytest.fail("chromium is required here (scripts/setup installs it)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return found


def _headless(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_html_report_renders_one_thumbnail_per_step(loan_app: LoanApp, tmp_path: Path) -> None:
    browser = _chromium()
    loan_app.start()
    assert mm("record", "loan", "--observe", "0", "--", *agent_command(loan_app)).returncode == 0
    loan_app.start("--popup-at-start")
    assert mm("replay", "loan", "--no-agent", "--timeout", "2").returncode == 3

    page = tmp_path / "loan.html"
    shown = mm("show", "loan", "--html", str(page))
    assert shown.returncode == 0, shown.stderr
    text = page.read_text()
    assert "src='file:" not in text and "http" not in text  # self-contained
    steps = text.count("class='step")
    assert steps == 9
    assert text.count("class='marker'") == steps  # every step shows where it acted

    dom = _headless(browser, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    # The page's own script counts the thumbnails the browser decoded: 9 steps plus the
    # live and recorded screens of the divergence.
    assert 'data-thumbs-rendered="11"' in dom.stdout
    # The side-by-side crops of the divergence fit the window: no horizontal scrollbar,
    # on the page or in the pair (each crop scales down; a click shows it whole). This
    # form's crops are about 480 px each: a 900 px window is to them what 1400 px is to
    # a desktop app's 800 px ones.
    for width in (1400, 900):
        narrow = _headless(browser, f"--window-size={width},1000", "--dump-dom", page.as_uri())
        assert narrow.returncode == 0, narrow.stderr[-2000:]
        assert 'data-wider-than-window="no"' in narrow.stdout, width

    shot = tmp_path / "loan.png"
    done = _headless(browser, "--window-size=1100,1600", f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("L"))
    assert pixels.shape == (1600, 1100)
    assert pixels.std() > 20  # thumbnails and text drawn, not a blank page
