"""Every Python example in docs/sdk.md runs (the one needing a display runs in e2e)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sdk.docs_examples import Example, examples, run_example

OFFLINE = [e for e in examples() if not e.needs_display]


def test_the_docs_have_examples_of_both_kinds() -> None:
    assert len(OFFLINE) >= 5
    assert any(e.needs_display for e in examples())


@pytest.mark.parametrize("example", OFFLINE, ids=[f"example{e.index}" for e in OFFLINE])
def test_doc_example_runs(example: Example, tmp_path: Path) -> None:
    """Twice, as a reader runs it again: what the first run stored must not break it."""
    run_example(example, tmp_path)
    run_example(example, tmp_path)
