"""A recording never chooses what runs on a machine it was not made on: from a shared
store (and on every fleet worker) its agent command runs only as the operator allowed it,
in the operator's own folder."""

from __future__ import annotations

import shlex

from mmcli.desktop.allowed import RecordedAgents
from mmcli.model import LITERAL_BRACES
from mmcli.verbs.replay import ReplayRequest
from tests.unit.test_replayer import form_recording

COMMAND = ["python", "/opt/agents/loan.py", "--name", "{{name}}", "--subject", "{{x}}"]


def recording():  # type: ignore[no-untyped-def]
    rec = form_recording()
    rec.command = [c.replace("{{x}}", LITERAL_BRACES + "x}}") for c in COMMAND]
    rec.cwd = "/home/someone/elsewhere"
    return rec


def test_a_local_store_runs_the_recordings_own_command_in_its_folder() -> None:
    agent, cwd, refused = RecordedAgents.of([], checked=False).command(recording())
    assert agent == recording().command and cwd == "/home/someone/elsewhere" and refused == ""


def test_a_shared_store_runs_only_an_allowed_command_as_written_in_our_folder() -> None:
    agent, cwd, refused = RecordedAgents.of([], checked=True).command(recording())
    assert agent is None and cwd is None
    assert "comes from a shared store and is not one this machine allows" in refused
    assert "--allow-agent" in refused
    allowed = RecordedAgents.of([shlex.join(COMMAND)], checked=True)
    agent, cwd, refused = allowed.command(recording())
    assert agent == recording().command and cwd is None and refused == ""
    other = RecordedAgents.of(["python /opt/agents/loan.py"], checked=True)
    assert other.command(recording())[0] is None  # a prefix is not the command


def test_replay_holds_a_bucket_to_the_rule_and_says_so() -> None:
    said: list[str] = []
    request = ReplayRequest("form")
    assert request.options(recording(), shared=True, progress=said.append).agent is None
    assert said and said[0].startswith("warning: 'form': its agent command (")
    assert request.options(recording(), shared=False).agent == recording().command
    given = ReplayRequest("form", agent=["my-agent"])
    assert given.options(recording(), shared=True).agent == ["my-agent"]  # the operator's
