"""Where no window's pixels are kept, a notification over the outcome is waited out
(openbox on an X server without the Composite extension, the real `mm`).

With Composite, each window's own pixels are kept where another window covers them, and
the outcome is seen under a notification (`test_window_types.py`). A server without it
(an Xvfb started with `-extension Composite`, as some VNC and thin-client servers run)
keeps nothing: `mm doctor` says so in its `under` row, and a notification that stays over
the status line Submit's outcome shows in is waited out (up to `COVER_WAIT` past the
step timeout), never left out:

- it goes 3 s after the record is saved: the outcome is then compared, done (exit 0),
  after saying what it waited for;
- the upload failed and the card stays: exit 6 once the wait is over, nothing judged
  under a window whose pixels are unknown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.desktop.desktop import Desktop, missing_programs
from tests.e2e.conftest import LoanApp, loan_recorded, mm
from tests.e2e.test_window_types import _open, _over_the_whole_status_bar, _stop

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def plain_desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    """openbox on an Xvfb of its own without the Composite extension."""
    missing = missing_programs()
    if missing:
        pytest.fail(f"missing programs for the desktop tests: {missing} (scripts/setup)")
    work = tmp_path_factory.mktemp("plain-desktop")
    with Desktop(work, panel=False, xvfb_args=["-extension", "Composite"]) as d:
        yield d


@pytest.fixture(scope="module")
def recorded(
    plain_desktop: Desktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LoanApp, Path]]:
    with loan_recorded(tmp_path_factory.mktemp("waits")) as recorded:
        yield recorded


def test_doctor_says_no_window_s_pixels_are_kept(
    plain_desktop: Desktop, recorded: tuple[LoanApp, Path]
) -> None:
    _, store = recorded
    result = mm("--store", str(store), "doctor", "--json")
    (under,) = [f for f in json.loads(result.stdout) if f["check"] == "under"]
    assert under["status"] == "skip", under
    assert "no Composite extension" in under["detail"]
    assert "waited out" in under["detail"]


@pytest.mark.parametrize("upload", ["saved", "failed"])
def test_a_notification_over_the_outcome_is_waited_out(
    plain_desktop: Desktop, recorded: tuple[LoanApp, Path], upload: str
) -> None:
    app, store = recorded
    app.start(*(["--fail-upload"] if upload == "failed" else []))
    before = len(app.records())
    card = _open(
        app, _over_the_whole_status_bar(app), "--kind", "NOTIFICATION", "--override",
        "--until-grows", str(app.out), "--linger", "3", origin=(0, 0),
    )  # fmt: skip
    try:
        started = time.monotonic()
        result = mm(
            "--store", str(store), "replay", "loan", "--no-agent", "--timeout", "2", "--json"
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        _stop(card)
    assert "waiting up to 10s for it to go" in result.stderr, result.stderr
    assert "seen under" not in result.stderr
    if upload == "saved":
        assert result.returncode == 0, result.stderr
        assert len(app.records()) == before + 1
    else:
        # The card never goes (nothing was saved): the wait ends, the outcome unjudged.
        assert result.returncode == 6, result.stderr
        assert len(app.records()) == before
        assert took >= 10, took
