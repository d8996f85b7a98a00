"""The stored document: its format (pinned by a golden file), corruption, and summary."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mmcli.errors import RecordingCorrupt, UsageError
from mmcli.sdk import Check, Engine
from mmcli.sdk.document import (
    SDKDocument,
    StepRecord,
    Trajectory,
    dumps,
    loads,
    summary,
)
from mmcli.store.recordings import Store, kind_of
from tests.helpers import sample_recording

GOLDEN = Path(__file__).parent / "fixtures" / "sdk-v1.toml"
WHEN = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


def golden_document() -> SDKDocument:
    first = Trajectory(
        1,
        ("forms",),
        [
            StepRecord("Form.open", "0123456789abcdef", True, [], {}, "home", "form"),
            StepRecord(
                "type_text",
                "fedcba9876543210",
                False,
                [{"$param": "name"}],
                {"interval": 0.1},
                {"$dataclass": {"class": "app:Screen", "fields": {"title": "Form"}}},
            ),
        ],
        WHEN,
    )
    branch = Trajectory(
        2,
        ("forms",),
        [first.steps[0], StepRecord("close", "aaaaaaaaaaaaaaaa", False, [{"$none": True}], {})],
        WHEN,
        branch_of=1,
        branch_step=1,
    )
    return SDKDocument("sdk", WHEN, [first, branch])


def test_the_format_is_pinned_by_a_golden_file() -> None:
    doc = golden_document()
    assert dumps(doc) == GOLDEN.read_text()
    assert loads(GOLDEN.read_text(), "golden") == doc


def test_the_cli_can_tell_an_sdk_document_from_a_recording(isolated_store: Path) -> None:
    assert GOLDEN.read_text().startswith('kind = "sdk"\nformat_version = 1\nname = "sdk"\n')
    assert kind_of(GOLDEN.read_text()) == "sdk"
    store = Store()
    with store.lock("cli"):
        store.save(sample_recording("cli"))
    assert store.kind("cli") == "cli"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("kind = ", "not valid TOML"),
        ('format_version = 1\nname = "sdk"', "not an SDK document"),
        ('kind = "sdk"\nname = "sdk"', "no integer format_version"),
        ('kind = "sdk"\nformat_version = 9', "newer than this mm understands"),
        ('kind = "sdk"\nformat_version = 1\nname = "sdk"', "missing field 'created'"),
        (
            'kind = "sdk"\nformat_version = 1\nname = "sdk"\ncreated = 2026-01-01T00:00:00Z\n'
            "[[trajectories]]\nid = 1\ncreated = 2026-01-01T00:00:00Z\nsteps = [1]",
            r"trajectories\[0\].steps\[0\] must be a table",
        ),
        (
            'kind = "sdk"\nformat_version = 1\nname = "sdk"\ncreated = 2026-01-01T00:00:00Z\n'
            '[[trajectories]]\nid = "one"\ncreated = 2026-01-01T00:00:00Z\nsteps = []',
            r"trajectories\[0\].id must be an integer",
        ),
    ],
)
def test_a_corrupt_document_is_one_line_naming_the_file(text: str, problem: str) -> None:
    with pytest.raises(RecordingCorrupt, match=problem) as caught:
        loads(text, "/store/sdk.toml")
    message = str(caught.value)
    assert message.startswith("/store/sdk.toml: ") and "\n" not in message


def engine_with_tool() -> Engine:
    engine = Engine()

    @engine.function(pre_check=Check(lambda: 1, lambda a, b: a == b))
    def act() -> None:
        pass

    return engine.set_agent(lambda: act())


def test_an_engine_never_overwrites_a_corrupt_document(isolated_store: Path) -> None:
    isolated_store.mkdir()
    path = isolated_store / "sdk.toml"
    path.write_text('kind = "sdk"\nformat_version = 1\nname = "sdk"\ncreated = "yesterday"\n')
    before = path.read_bytes()
    with pytest.raises(RecordingCorrupt, match=r"sdk.toml: created must be a date-time"):
        engine_with_tool()()
    assert path.read_bytes() == before


def test_an_engine_named_like_a_cli_recording_says_so(isolated_store: Path) -> None:
    store = Store()
    with store.lock("sdk"):
        store.save(sample_recording("sdk"))
    with pytest.raises(UsageError, match=r"is a CLI recording.*Engine\(name=\.\.\.\)"):
        engine_with_tool()()


def test_summary_describes_a_document(isolated_store: Path) -> None:
    GOLDEN_COPY = isolated_store / "sdk.toml"
    isolated_store.mkdir()
    GOLDEN_COPY.write_text(GOLDEN.read_text())
    info = summary(GOLDEN_COPY)
    assert info == {
        "name": "sdk",
        "steps": 4,
        "branches": 2,
        "params": ["name"],
        "tags": ["forms"],
        "created": WHEN,
        "last_used": None,
    }


def test_summary_reports_when_the_engine_last_used_it(isolated_store: Path) -> None:
    engine = engine_with_tool()
    engine()
    engine()
    info = summary(isolated_store / "sdk.toml")
    assert info["branches"] == 1 and info["steps"] == 1
    last = info["last_used"]
    assert isinstance(last, datetime) and abs((datetime.now(UTC) - last).total_seconds()) < 60
