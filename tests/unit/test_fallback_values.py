"""The fallback agent gets this run's values and runs where it was recorded: the agent
command as a recording keeps it, the heal that typed a param's recorded value (not
saved), the folder the agent runs in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mmcli.backends import FakeBackend
from mmcli.capture.stale import stale_value
from mmcli.errors import MMError, Outcome
from mmcli.model import Action, ActionKind
from mmcli.params import Values, find_digest, template_command, value_digest
from mmcli.replay.report import ReplayOptions, ReplayReport
from mmcli.store import codec
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen
from tests.unit.test_heal import agent
from tests.unit.test_replayer import form_recording

JOHN = Values({"name": "John Smith"})
GRACE = Values({"name": "Grace Hopper"})


# ---- the command as kept -----------------------------------------------------------------


def test_a_whole_argument_holding_a_value_becomes_its_placeholder() -> None:
    command = ["python", "agent.py", "--name", "John Smith", "--layout", "/tmp/l.json"]
    assert template_command(command, JOHN) == [
        "python", "agent.py", "--name", "{{name}}", "--layout", "/tmp/l.json",
    ]  # fmt: skip


def test_an_option_given_its_value_in_one_word_keeps_the_option() -> None:
    assert template_command(["agent", "--name=John Smith", "name=John Smith"], JOHN) == [
        "agent", "--name={{name}}", "name={{name}}",
    ]  # fmt: skip


def test_a_value_inside_other_text_or_as_the_program_stays() -> None:
    # In a shell script's text a value could change what the script does: left alone
    # (mm record warns); the program is never a param.
    values = Values({"tool": "agent", "n": "3", "name": "John Smith"})
    script = "exec agent --name 'John Smith'"
    assert template_command(["agent", "sh", "-c", script, "python3"], values) == [
        "agent", "sh", "-c", script, "python3",
    ]  # fmt: skip


def test_a_secret_becomes_its_placeholder_wherever_it_is() -> None:
    values = Values({}, {"pin": "4711-XYZ"})
    command = ["agent", "4711-XYZ", "--pin=4711-XYZ", "sh -c 'use 4711-XYZ'"]
    assert template_command(command, values) == [
        "agent", "{{pin}}", "--pin={{pin}}", "sh -c 'use {{pin}}'",
    ]  # fmt: skip


def test_a_digest_finds_the_value_typed_and_shows_nothing_of_it() -> None:
    digest = value_digest("name", "John Smith")
    assert "John" not in digest and digest.startswith("10:")
    assert find_digest("Dear John Smith,", "name", [digest]) == "John Smith"
    assert find_digest("Dear John Smith,", "other", [digest]) is None  # keyed by the param
    assert find_digest("Dear Grace Hopper,", "name", [digest]) is None


# ---- what the recording keeps ---------------------------------------------------------------


def test_the_folder_and_digests_round_trip_and_an_older_file_reads_without_them() -> None:
    rec = form_recording()
    rec.cwd = "/home/me/project"
    rec.param_digests = {"name": [value_digest("name", "John Smith")]}
    text = codec.dumps(rec)
    assert "John" not in text
    loaded = codec.loads(text)
    assert loaded.cwd == "/home/me/project" and loaded.param_digests == rec.param_digests
    old = codec.loads(codec.dumps(form_recording()))
    assert old.cwd is None and old.param_digests == {}
    assert "cwd" not in codec.dumps(old) and "param_digests" not in codec.dumps(old)


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("cwd", '"project"', "cwd must be an absolute path"),
        ("param_digests", '{ name = ["John Smith"] }', "param_digests.name must be"),
        ("param_digests", '{ other = ["10:0123456789abcdef"] }', "not a param"),
    ],
)
def test_a_hand_edited_folder_or_digest_is_refused(field: str, value: str, problem: str) -> None:
    text = codec.dumps(form_recording()).replace("params = [", f"{field} = {value}\nparams = [")
    with pytest.raises(MMError, match=problem):
        codec.loads(text, "form.toml")


# ---- a heal with this run's values ------------------------------------------------------------


def save_form(cwd: str | None = None) -> None:
    rec = form_recording()
    rec.param_digests = {"name": [value_digest("name", "John Smith")]}
    rec.cwd = cwd
    Store().save(rec)


def heal(
    command: list[str], values: Values = GRACE, cwd: str | None = None, shown: str | None = None
) -> tuple[ReplayReport, list[str]]:
    """The agent heals at the first step; its field then reads `shown` (by default the
    name given: what it typed, read back as typed)."""
    said: list[str] = []
    backend = FakeBackend(form_screen(popup=True))  # diverges at the first step
    backend.field = shown if shown is not None else values.all.get("name")
    options = ReplayOptions(timeout=0.3, agent=command, agent_cwd=cwd)
    report = replay(Store(), backend, "form", values, options, said.append)
    return report, said


TYPE_ARGUMENT = agent(
    "import sys", "act(kind='click', x=250, y=185)", "act(kind='type', text=sys.argv[1])"
)


def test_the_fallback_gets_this_runs_value_in_its_arguments() -> None:
    save_form()
    report, said = heal([*TYPE_ARGUMENT, "{{name}}"])
    assert report.outcome is Outcome.HEALED, said
    branch = Store().load("form").steps[3:]
    assert [s.action.text for s in branch if s.action.kind is ActionKind.TYPE] == ["{{name}}"]
    assert any("recorded step 2: type '{{name}}'" in line for line in said)


def test_a_heal_typing_the_recorded_value_fails_naming_the_param_and_learns_nothing() -> None:
    save_form()
    report, _ = heal([*TYPE_ARGUMENT, "John Smith"])
    assert report.outcome is Outcome.AGENT_FAILED and report.exit_code == 4
    assert "'name'" in report.detail and "MM_PARAM_NAME" in report.detail
    assert len(Store().load("form").steps) == 3


def test_the_recorded_value_typed_again_for_the_same_value_is_a_heal() -> None:
    save_form()
    report, said = heal([*TYPE_ARGUMENT, "John Smith"], values=JOHN)
    assert report.outcome is Outcome.HEALED, said


def test_a_stale_value_is_not_seen_inside_this_runs_value() -> None:
    rec = form_recording()
    rec.param_digests = {"name": [value_digest("name", "John")]}
    typed = [Action(ActionKind.TYPE, text="Johnny"), Action(ActionKind.PRESS, keys=("enter",))]
    assert stale_value(typed, rec, Values({"name": "Johnny"})) is None
    typed = [Action(ActionKind.PRESS, keys=(c,)) for c in "Jo"] + [
        Action(ActionKind.TYPE, text="hn!")
    ]  # key by key, then the rest
    stale = stale_value(typed, rec, Values({"name": "Johnny"}))
    assert stale is not None and stale.key == "name" and stale.typed == "John"


def test_the_fallback_runs_in_the_recorded_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.py").write_text(
        agent("act(kind='click', x=250, y=185)", "act(kind='type', text='x')")[2]
    )
    save_form(str(project))
    monkeypatch.chdir(tmp_path)  # cron runs elsewhere
    report, said = heal([sys.executable, "agent.py"], cwd=str(project), shown="x")
    assert report.outcome is Outcome.HEALED, said


def test_a_recorded_folder_gone_is_one_clear_error(tmp_path: Path) -> None:
    save_form(str(tmp_path / "gone"))
    said: list[str] = []
    options = ReplayOptions(timeout=0.3, agent=["agent"], agent_cwd=str(tmp_path / "gone"))
    backend = FakeBackend(form_screen(popup=True))
    with pytest.raises(MMError, match=r"folder .*gone no longer exists"):
        replay(Store(), backend, "form", GRACE, options, said.append)
    assert "no longer exists" in said[0]  # said first, for a log


def test_record_says_what_the_fallback_runs_and_where_a_value_stays() -> None:
    from mmcli.capture.integrate import fallback_lines

    rec = form_recording()
    rec.command, rec.cwd = ["agent", "--name", "{{name}}"], "/home/me/project"
    assert fallback_lines(rec, JOHN) == [
        "on a divergence, replay runs: agent --name '{{name}}' in /home/me/project"
    ]
    rec.command = ["sh", "-c", "agent --name 'John Smith'"]
    said = fallback_lines(rec, JOHN)
    assert len(said) == 2 and "'name'" in said[1] and "MM_PARAM_NAME" in said[1]
