"""Healing on the fake backend with a real agent process that reports its actions to the
recorder: what the heal prints, what a heal that did nothing is, what a heal that cannot be
saved is."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace

from mmcli.backends import FakeBackend
from mmcli.errors import Outcome
from mmcli.model import Action, ActionKind
from mmcli.params import Values
from mmcli.replay.report import AGENT_TIMEOUT, ReplayOptions, ReplayReport
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.helpers import form_screen
from tests.unit.test_replayer import form_recording

SECRET = "4711-XYZ"


def agent(*lines: str) -> list[str]:
    """A Python agent that reports actions the way the pyautogui hook does."""
    script = "\n".join(
        [
            "import os",
            "from mmcli.hook._mm_record_hook import RecorderLink",
            "link = RecorderLink(os.environ['MM_RECORD_SOCKET'])",
            "def act(**a): link.send({'op': 'act', 'action': a})",
            *lines,
        ]
    )
    return [sys.executable, "-c", script]


def secret_form() -> None:
    rec = form_recording()
    rec.steps[1] = replace(rec.steps[1], action=Action(ActionKind.TYPE, text="{{pin}}"))
    rec.params, rec.secrets = ["pin"], ["pin"]
    Store().save(rec)


def heal(
    command: list[str], on_action: Callable[[FakeBackend, Action], None] | None = None
) -> tuple[ReplayReport, list[str]]:
    secret_form()
    said: list[str] = []
    backend = FakeBackend(form_screen(popup=True), on_action)  # diverges at the first step
    backend.field = SECRET  # what the agent types shows in its field
    options = ReplayOptions(timeout=0.3, agent=command)
    report = replay(Store(), backend, "form", Values({}, {"pin": SECRET}), options, said.append)
    return report, said


def test_a_healing_agent_typing_the_secret_shows_it_nowhere() -> None:
    report, said = heal(
        agent(
            "act(kind='click', x=250, y=185)",
            "act(kind='type', text=os.environ['MM_PARAM_PIN'][:4])",
            "act(kind='type', text=os.environ['MM_PARAM_PIN'][4:])",
        )
    )
    assert report.outcome is Outcome.HEALED, said
    assert any("recorded step 1" in line for line in said)
    leaks = [line for line in said if "4711" in line or "XYZ" in line]
    assert leaks == []
    text = Store().path("form").read_text()
    assert "4711" not in text and "XYZ" not in text


def test_a_healing_agent_that_does_nothing_has_not_healed() -> None:
    report, _ = heal(agent("pass"))
    assert report.outcome is Outcome.AGENT_FAILED
    assert report.exit_code == 4
    assert "without performing any action" in report.detail
    assert len(Store().load("form").steps) == 3


def test_a_heal_whose_recording_was_deleted_meanwhile_is_done_not_saved() -> None:
    """Someone else deletes the recording while the agent heals (the agent itself cannot:
    the store is read-only in its sandbox)."""

    def delete(backend: FakeBackend, action: Action) -> None:
        os.remove(Store().path("form"))

    report, _ = heal(
        agent("link.send({'op': 'perform', 'action': {'kind': 'click', 'x': 250, 'y': 185}})"),
        on_action=delete,
    )
    assert report.outcome is Outcome.NOT_SAVED
    assert report.exit_code == 5
    assert "could not be saved" in report.detail
    assert report.as_json()["exit_code"] == 5


def test_a_fallback_agent_has_a_time_limit_by_default() -> None:
    assert ReplayOptions().agent_timeout == AGENT_TIMEOUT == 600


def test_a_heal_done_with_calls_mm_cannot_record_is_done_not_saved() -> None:
    report, _ = heal(
        agent(
            "act(kind='click', x=250, y=185)",
            "link.send({'op': 'unsupported', 'name': 'pyautogui.mouseDown'})",
        )
    )
    assert report.outcome is Outcome.NOT_SAVED and report.exit_code == 5
    assert "pyautogui.mouseDown" in report.detail
    assert len(Store().load("form").steps) == 3
