"""`mm ls` reads a recording's header and step lines only: the same entry as a full
parse for every document `mm` writes, and None (a full parse) for any it did not."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mmcli.model import Action, ActionKind, Step
from mmcli.store import codec
from mmcli.store.index import describe_recording as _describe_recording
from mmcli.store.skim import skim
from tests.faults.test_corrupt_files import CORRUPT
from tests.helpers import literal_fingerprint, sample_recording


def test_skim_says_what_the_full_parse_says() -> None:
    recording = sample_recording("x")
    assert skim(codec.dumps(recording), "x") == _describe_recording(recording)


def test_a_long_recording_with_branches_and_odd_text() -> None:
    recording = sample_recording("long")
    extra = [
        Step(
            i,
            i - 1 if i % 7 else 2,
            Action(ActionKind.TYPE, text='a "quoted" [x]\n\\ ]\n'),
            literal_fingerprint(i),
            thumbnail=f"t-{i:04d}.png",
        )
        for i in range(5, 60)
    ]
    recording = replace(recording, steps=[*recording.steps, *extra])
    assert skim(codec.dumps(recording), "long") == _describe_recording(recording)


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_documents_mm_did_not_write_are_parsed_in_full(case: str) -> None:
    data, _ = CORRUPT[case]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # the catalog reads it in full
    assert skim(text, "x") is None


def test_a_copy_cut_at_any_line_is_never_listed_otherwise_than_parsed() -> None:
    """A document cut short is skimmed only where it is still a whole recording (cut
    between two steps or after a step's optional keys): then it says what the full
    parse says; anywhere else it is left to the full parse, which reports it."""
    text = codec.dumps(sample_recording("x"))
    lines = text.splitlines(keepends=True)
    skimmed = 0
    for n in range(len(lines) - 1):
        cut = "".join(lines[: n + 1])
        entry = skim(cut, "x")
        if entry is None:
            continue
        skimmed += 1
        assert entry == _describe_recording(codec.loads(cut)), f"cut after line {n + 1}"
    assert skimmed < len(lines) // 4
