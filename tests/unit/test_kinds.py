"""One table of document kinds: each kind's text is told by its `kind` line, parsed,
counted and written back through its own entry, and an unknown kind is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmcli.errors import RecordingCorrupt
from mmcli.inventory.kinds import KINDS, kind_named
from mmcli.inventory.manage import parse
from mmcli.llm.document import dumps as llm_dumps
from mmcli.store import codec
from mmcli.store.recordings import kind_of
from tests.helpers import sample_recording
from tests.llm.test_matching import recorded_session

SDK_V1 = Path(__file__).parents[1] / "sdk" / "fixtures" / "sdk-v1.toml"


def texts() -> dict[str, tuple[str, int]]:
    """A document of each kind, with its number of steps."""
    recording = sample_recording()
    llm = recorded_session().recording
    return {
        "cli": (codec.dumps(recording), len(recording.steps)),
        "sdk": (SDK_V1.read_text(encoding="utf-8"), 4),  # two trajectories of two steps
        "llm": (llm_dumps(llm), len(llm.tree.nodes)),
    }


def test_every_kind_is_in_the_table_with_a_word_for_messages() -> None:
    assert set(KINDS) == {"cli", "sdk", "llm"}
    assert len({kind.word for kind in KINDS.values()}) == 3


@pytest.mark.parametrize("kind", ["cli", "sdk", "llm"])
def test_each_kind_is_told_parsed_counted_and_written_back(kind: str) -> None:
    text, steps = texts()[kind]
    assert kind_of(text) == kind
    doc = parse(text, f"{kind}.toml")
    assert (doc.kind, doc.steps) == (kind, steps)
    assert parse(doc.dumps(), "again.toml").dumps() == doc.dumps()


def test_an_llm_document_names_its_screens_as_thumbnails() -> None:
    doc = parse(texts()["llm"][0], "llm.toml")
    assert doc.thumbnails and all(name.endswith(".png") for name in doc.thumbnails)


def test_a_kind_line_inside_a_table_is_not_the_documents_kind() -> None:
    text = codec.dumps(sample_recording())
    assert kind_of(text + '\n[extra]\nkind = "sdk"\n') == "cli"


def test_an_unknown_kind_is_refused_naming_the_file() -> None:
    with pytest.raises(RecordingCorrupt, match=r"x\.toml: unknown kind 'zzz'"):
        kind_named("zzz", "x.toml")
    with pytest.raises(RecordingCorrupt, match="unknown kind"):
        parse('kind = "zzz"\nname = "x"\n', "x.toml")


@pytest.mark.parametrize("kind", ["cli", "sdk", "llm"])
def test_every_kind_refuses_a_newer_format_and_toml_the_reader_would_hang_on(kind: str) -> None:
    text, _ = texts()[kind]
    newer = re.sub(r"format_version = \d+", "format_version = 9", text, count=1)
    with pytest.raises(RecordingCorrupt, match=r"d\.toml: format_version 9 is newer"):
        parse(newer, "d.toml")
    older = re.sub(r"format_version = \d+", "format_version = 0", text, count=1)
    with pytest.raises(RecordingCorrupt, match="format_version 0 is not supported"):
        parse(older, "d.toml")
    bomb = text + "\n[x]\n" + ".".join(["a"] * 100) + " = 1\n"
    with pytest.raises(RecordingCorrupt, match="dotted key of more than"):
        parse(bomb, "d.toml")
