from __future__ import annotations

from pathlib import Path

import pytest

from mmcli.errors import RecordingCorrupt
from mmcli.model import render_template
from mmcli.params import Values, template_command
from mmcli.store import codec
from tests.helpers import golden_recording, sample_recording

FIXTURES = Path(__file__).parent.parent / "fixtures"
GOLDEN = FIXTURES / "golden-v1.toml"
GOLDEN_V2 = FIXTURES / "golden-v2.toml"
GOLDEN_V3 = FIXTURES / "golden-v3.toml"


def test_dump_matches_the_golden_file() -> None:
    # The format is a contract: a change here must be deliberate (and bump format_version).
    assert codec.dumps(golden_recording()) == GOLDEN_V3.read_text(encoding="utf-8")


@pytest.mark.parametrize("golden", [GOLDEN_V3, GOLDEN_V2])
def test_golden_file_loads_to_the_same_recording(golden: Path) -> None:
    loaded = codec.loads(golden.read_text(encoding="utf-8"), str(golden))
    assert loaded == golden_recording()
    assert [s.id for s in loaded.outcomes()] == [3]
    assert [s.id for s in loaded.outcomes(trusted_only=False)] == [3, 4]
    assert [s.id for s in loaded.pending_branches()] == [4]


def test_a_version_1_file_is_upgraded_with_no_outcomes() -> None:
    loaded = codec.loads(GOLDEN.read_text(encoding="utf-8"), str(GOLDEN))
    assert loaded == sample_recording()
    assert loaded.outcomes() == [] and loaded.pending_branches() == []
    assert "format_version = 3" in codec.dumps(loaded)


def test_a_literal_placeholder_in_the_command_stays_literal_and_a_version_2_one_is_filled() -> None:
    rec = golden_recording()
    rec.command = template_command(
        ["agent", "--pin", "4711", "--note", "{{pin}} at {{ x }}"], Values(secrets={"pin": "4711"})
    )
    assert rec.command == ["agent", "--pin", "{{pin}}", "--note", "{{=}}{pin}} at {{=}}{ x }}"]
    loaded = codec.loads(codec.dumps(rec))
    assert [render_template(a, {"pin": "0000"}) for a in loaded.command] == [
        "agent", "--pin", "0000", "--note", "{{pin}} at {{ x }}"
    ]  # fmt: skip
    # Version 2 could not tell a literal `{{pin}}` from mm's: it stays a placeholder.
    old = codec.dumps(rec).replace("format_version = 3", "format_version = 2", 1)
    old = old.replace("{{=}}{pin}}", "{{pin}}")
    assert [render_template(a, {"pin": "0000"}) for a in codec.loads(old).command][-1] == (
        "0000 at {{ x }}"
    )


def test_an_outcome_with_a_target_is_refused() -> None:
    text = codec.dumps(golden_recording()).replace(
        "[steps.outcome.screen]\n", '[steps.outcome.screen]\ntarget = [1, 2]\npatch = "00"\n', 1
    )
    with pytest.raises(RecordingCorrupt, match="outcome"):
        codec.loads(text, "rec.toml")


def test_round_trip_keeps_tree_and_fingerprints() -> None:
    rec = sample_recording()
    again = codec.loads(codec.dumps(rec))
    assert [s.parent for s in again.steps] == [None, 0, 1, 2, 0]
    assert again.branch_count() == 1
    assert again.steps[1].fingerprint.masks == rec.steps[1].fingerprint.masks
    assert again.steps[0].fingerprint.grid - rec.steps[0].fingerprint.grid == (
        rec.steps[0].fingerprint.grid - rec.steps[0].fingerprint.grid
    )


def test_fingerprint_is_small() -> None:
    # Issue target: < 4 KB per step without thumbnails.
    text = codec.dumps(sample_recording())
    per_step = len(text.encode()) / len(sample_recording().steps)
    assert per_step < 4096


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("format_version = 1\nname = 'x'\n[[steps", "not valid TOML"),
        ("name = 'x'\n", "no integer format_version"),
        ("format_version = 99\nname = 'x'\ncreated = 2026-01-01T00:00:00Z\n", "upgrade mm"),
        ("format_version = 1\ncreated = 2026-01-01T00:00:00Z\n", "missing field 'name'"),
        ("format_version = 1\nname = 3\ncreated = 2026-01-01T00:00:00Z\n", "name must be a string"),
        (
            "format_version = 1\nname = 'x'\ncreated = 2026-01-01T00:00:00Z\nsteps = 4\n",
            "steps must be an array",
        ),
        ("format_version = 0\nname = 'x'\n", "format_version 0 is not supported"),
    ],
)
def test_bad_documents_raise_one_line_errors(text: str, problem: str) -> None:
    with pytest.raises(RecordingCorrupt) as err:
        codec.loads(text, "rec.toml")
    message = str(err.value)
    assert problem in message
    assert message.startswith("rec.toml: ")
    assert "\n" not in message


def test_a_truncated_golden_file_is_refused() -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    with pytest.raises(RecordingCorrupt):
        codec.loads(text[: len(text) // 2].rsplit("\n", 3)[0] + '\nhashes = "12"\n', "t.toml")


def test_broken_hashes_name_the_step() -> None:
    text = GOLDEN.read_text(encoding="utf-8").replace('patch = "', 'patch = "zz', 1)
    with pytest.raises(RecordingCorrupt, match=r"steps\[0\]"):
        codec.loads(text, "t.toml")


def test_dangling_parent_is_refused() -> None:
    text = GOLDEN.read_text(encoding="utf-8").replace("parent = 0\n", "parent = 77\n", 1)
    with pytest.raises(RecordingCorrupt, match="does not exist"):
        codec.loads(text, "t.toml")


def test_upgrades_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    text = GOLDEN.read_text(encoding="utf-8").replace("format_version = 1", "format_version = 0")

    def v0_to_v1(doc: dict) -> dict:
        return {**doc, "format_version": 1, "policy": "strict"}

    monkeypatch.setitem(codec.UPGRADES, 0, v0_to_v1)
    assert codec.loads(text).policy == "strict"


def test_the_typing_pace_is_kept_and_bounded() -> None:
    from dataclasses import replace

    from mmcli.model import Action, ActionKind

    rec = sample_recording()
    rec.steps[1] = replace(rec.steps[1], action=Action(ActionKind.TYPE, text="hi", key_ms=12))
    text = codec.dumps(rec)
    assert "key_ms = 12" in text
    assert codec.loads(text).steps[1].action.key_ms == 12
    assert codec.loads(codec.dumps(sample_recording())).steps[1].action.key_ms is None
    with pytest.raises(RecordingCorrupt, match="key_ms"):
        codec.loads(text.replace("key_ms = 12", "key_ms = -1"))


def test_the_window_a_step_acted_in_is_kept_and_bounded() -> None:
    from dataclasses import replace

    from mmcli.screen.fingerprint import Rect
    from mmcli.screen.windows import WindowRef

    rec = sample_recording()
    window = WindowRef("zenity.Zenity", Rect(80, 90, 400, 300))
    rec.steps[0] = replace(rec.steps[0], window=window)
    text = codec.dumps(rec)
    assert codec.loads(text).steps[0].window == window
    assert codec.loads(codec.dumps(sample_recording())).steps[0].window is None
    with pytest.raises(RecordingCorrupt, match=r"window\.class"):
        codec.loads(text.replace('"zenity.Zenity"', '"' + "z" * 300 + '"'))


def test_the_windows_over_a_steps_window_are_kept_and_bounded() -> None:
    from dataclasses import replace

    from mmcli.screen.fingerprint import Rect
    from mmcli.screen.windows import Over, WindowRef

    rec = sample_recording()
    window = WindowRef("gnumeric.Gnumeric", Rect(80, 90, 800, 600))
    above = (Over("gnumeric.Gnumeric", Rect(300, 300, 200, 120), "DIALOG"),)
    rec.steps[0] = replace(rec.steps[0], window=window, above=above)
    text = codec.dumps(rec)
    assert codec.loads(text).steps[0].above == above
    assert codec.loads(codec.dumps(sample_recording())).steps[0].above == ()
    with pytest.raises(RecordingCorrupt, match=r"above\[0\]\.kind"):
        codec.loads(text.replace('"DIALOG"', '"' + "D" * 40 + '"'))
    with pytest.raises(RecordingCorrupt, match=r"above\[0\]\.rect"):
        codec.loads(text.replace("    200,\n    120,\n]\nkind", "    -5,\n    120,\n]\nkind"))


def test_the_recorded_window_title_is_kept_and_bounded() -> None:
    from dataclasses import replace

    rec = replace(sample_recording(), window_title="Acme Loan Intake")
    text = codec.dumps(rec)
    assert 'window_title = "Acme Loan Intake"' in text
    assert codec.loads(text).window_title == "Acme Loan Intake"
    assert "window_title" not in codec.dumps(sample_recording())  # none recorded: not written
    assert codec.loads(codec.dumps(sample_recording())).window_title is None
    with pytest.raises(RecordingCorrupt, match="window_title"):
        codec.loads(codec.dumps(replace(rec, window_title="x" * 5000)))


def test_title_bars_that_show_a_value_are_kept_and_bounded() -> None:
    from dataclasses import replace

    from mmcli.model import EndScreen
    from mmcli.screen.fingerprint import Rect
    from mmcli.screen.windows import TitleBar

    rec = sample_recording()
    bar = TitleBar(Rect(79, 68, 402, 22), "Acme Loan Intake - {{name}}")
    end = len(rec.steps) - 1
    screen = replace(rec.steps[end].fingerprint, patch=None, pointer=None)
    rec.steps[0] = replace(rec.steps[0], titles=(bar,))
    rec.steps[end] = replace(rec.steps[end], outcome=EndScreen(screen, None, (bar,)))
    text = codec.dumps(rec)
    loaded = codec.loads(text)
    assert loaded.steps[0].titles == (bar,)
    outcome = loaded.steps[end].outcome
    assert outcome is not None and outcome.titles == (bar,)
    assert "titles" not in codec.dumps(sample_recording())  # none recorded: not written
    with pytest.raises(RecordingCorrupt, match=r"titles\[0\]\.text"):
        codec.loads(text.replace("Acme Loan Intake - {{name}}", "x" * 5000, 1))
    with pytest.raises(RecordingCorrupt, match=r"titles\[0\]\.rect"):
        codec.loads(text.replace("    402,\n    22,", "    -402,\n    22,", 1))


def test_what_the_outcome_laid_bare_is_kept_and_bounded() -> None:
    from dataclasses import replace

    from mmcli.model import EndScreen
    from mmcli.screen.fingerprint import Rect
    from mmcli.screen.windows import MAX_VACATED

    rec = sample_recording()
    end = len(rec.steps) - 1
    screen = replace(rec.steps[end].fingerprint, patch=None, pointer=None)
    bare = (Rect(79, 46, 402, 330), Rect(500, 46, 21, 37))
    rec.steps[end] = replace(rec.steps[end], outcome=EndScreen(screen, vacated=bare))
    text = codec.dumps(rec)
    outcome = codec.loads(text).steps[end].outcome
    assert outcome is not None and outcome.vacated == bare
    assert "vacated" not in codec.dumps(sample_recording())  # none recorded: not written
    with pytest.raises(RecordingCorrupt, match=r"vacated\[1\]"):
        codec.loads(text.replace("        21,\n        37,", "        -21,\n        37,", 1))
    with pytest.raises(RecordingCorrupt, match=r"vacated\[1\]: an empty region"):
        codec.loads(text.replace("        21,\n        37,", "        0,\n        37,", 1))
    with pytest.raises(RecordingCorrupt, match=r"vacated\[1\]"):
        codec.loads(text.replace("        21,\n        37,", "        21,\n        370000,", 1))
    many = replace(rec.steps[end], outcome=EndScreen(screen, vacated=bare[:1] * (MAX_VACATED + 1)))
    rec.steps[end] = many
    with pytest.raises(RecordingCorrupt, match="vacated"):
        codec.loads(codec.dumps(rec))


def test_count_lines_are_kept_and_bounded() -> None:
    from dataclasses import replace

    from mmcli.model import EndScreen
    from mmcli.screen.counts import CountLine
    from mmcli.screen.fingerprint import Rect

    rec = sample_recording()
    line = CountLine(Rect(400, 690, 180, 20), "5 words, 30 characters", 3, 1)
    end = len(rec.steps) - 1
    screen = replace(rec.steps[end].fingerprint, patch=None, pointer=None)
    rec.steps[0] = replace(rec.steps[0], counts=(line,))
    rec.steps[end] = replace(rec.steps[end], outcome=EndScreen(screen, None, (), (line,)))
    text = codec.dumps(rec)
    loaded = codec.loads(text)
    assert loaded.steps[0].counts == (line,)
    outcome = loaded.steps[end].outcome
    assert outcome is not None and outcome.counts == (line,)
    assert "counts" not in codec.dumps(sample_recording())  # none recorded: not written
    with pytest.raises(RecordingCorrupt, match=r"counts\[0\]\.text"):
        codec.loads(text.replace("5 words, 30 characters", "x" * 500, 1))
    with pytest.raises(RecordingCorrupt, match=r"counts\[0\]\.chars"):
        codec.loads(text.replace("chars = 3", 'chars = "3"', 1))
    # A line's row and its cells, the line's own cell "" once.
    cells = ("0123456789abcdef", "", "fedcba9876543210")
    rowed = replace(line, row=Rect(231, 686, 760, 28), cells=cells)
    rec.steps[0] = replace(rec.steps[0], counts=(rowed,))
    text = codec.dumps(rec)
    assert codec.loads(text).steps[0].counts == (rowed,)
    for bad in ('"fedcba9876543210"', '"FEDCBA9876543210"', '"fedcba98"'):
        broken = text.replace('"", "fedcba9876543210"', f'"", {bad}', 1)
        broken = broken.replace('"",\n    "fedcba9876543210"', f'"",\n    {bad}', 1)
        if bad == '"fedcba9876543210"':
            broken = broken.replace('""', '"0123456789abcdef"', 1)  # no own cell
        assert broken != text
        with pytest.raises(RecordingCorrupt, match=r"counts\[0\]\.cells"):
            codec.loads(broken)
    # A line read as no count (a menu over it) keeps what showed in its cell.
    unread = replace(rowed, text="", over="00112233445566ff")
    rec.steps[0] = replace(rec.steps[0], counts=(unread,))
    text = codec.dumps(rec)
    assert codec.loads(text).steps[0].counts == (unread,)
    with pytest.raises(RecordingCorrupt, match=r"counts\[0\]\.over"):
        codec.loads(text.replace('over = "00112233445566ff"', "", 1))


def test_the_committing_steps_declared_are_kept_and_checked() -> None:
    rec = sample_recording()
    assert "commit_steps" not in codec.dumps(rec)  # not declared: not written
    rec.commit_steps = 2
    text = codec.dumps(rec)
    assert codec.loads(text, "x.toml").commit_steps == 2
    with pytest.raises(RecordingCorrupt, match="commit_steps is 0"):
        codec.loads(text.replace("commit_steps = 2", "commit_steps = 0"), "x.toml")


def test_the_window_under_the_outcome_s_pointer_is_kept_and_checked() -> None:
    from dataclasses import replace

    from mmcli.model import EndScreen
    from mmcli.screen.fingerprint import Rect
    from mmcli.screen.windows import WindowRef

    rec = sample_recording()
    end = len(rec.steps) - 1
    screen = replace(rec.steps[end].fingerprint, patch=None, pointer=(460, 395))
    under = WindowRef("loan_form.Tk", Rect(100, 100, 560, 420))
    rec.steps[end] = replace(rec.steps[end], outcome=EndScreen(screen, under=under))
    text = codec.dumps(rec)
    outcome = codec.loads(text).steps[end].outcome
    assert outcome is not None and outcome.under == under
    assert outcome.fingerprint.pointer == (460, 395)
    assert "under" not in codec.dumps(sample_recording())  # none recorded: not written
    with pytest.raises(RecordingCorrupt, match=r"outcome\.under\.rect"):
        codec.loads(text.replace("    560,\n    420,", "    560,\n    -420,", 1))
