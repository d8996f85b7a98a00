"""The fallback agent on the real example app: it gets this replay's values in its
arguments, runs in the folder it was recorded in, and a heal that typed a param's
recorded value is never learned."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from examples.world import AGENT
from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm

pytestmark = pytest.mark.e2e


def fields(record: dict[str, object]) -> dict[str, str]:
    return {k: str(record[k]) for k in WANTED}


def test_the_heal_files_the_replays_value_and_memory_never_the_old_one(
    loan_app: LoanApp, isolated_store: Path
) -> None:
    loan_app.start()
    result = mm(
        "record", "loan", "--param", "name=John Smith", "--observe", "0", "--",
        *agent_command(loan_app, args_only=True),  # ... --name 'John Smith' ...
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "--name '{{name}}'" in result.stderr  # what the fallback will run
    assert "John Smith" not in (isolated_store / "loan.toml").read_text()
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--param", "name=Grace Hopper", "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert "healed" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [{**WANTED, "name": "Grace Hopper"}]
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--param", "name=Alan Turing", "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert "done from memory" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [{**WANTED, "name": "Alan Turing"}]


def test_a_heal_that_typed_the_recorded_value_fails_and_learns_nothing(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    # The value inside a shell script's text: mm leaves it there (and says so), so the
    # agent types the recorded name whatever the replay's value.
    loan_app.start()
    agent = agent_command(loan_app, tmp_path / "agent-starts", args_only=True)
    result = mm("record", "loan", "--param", "name=John Smith", "--observe", "0", "--", *agent)
    assert result.returncode == 0, result.stderr
    assert "MM_PARAM_NAME" in result.stderr  # the warning
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--param", "name=Grace Hopper", "--timeout", "2")
    assert result.returncode == 4, result.stderr
    assert "'name'" in result.stderr and "nothing was learned" in result.stderr
    steps = (isolated_store / "loan.toml").read_text().count("[[steps]]")

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--param", "name=Alan Turing", "--timeout", "2")
    assert result.returncode == 3, result.stderr
    assert (isolated_store / "loan.toml").read_text().count("[[steps]]") == steps
    assert all(r["name"] != "Alan Turing" for r in loan_app.records())


def test_a_relative_agent_recorded_in_its_folder_heals_from_the_root(
    loan_app: LoanApp, tmp_path: Path, isolated_store: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(AGENT, project / "agent.py")
    agent = [sys.executable, "agent.py", *agent_command(loan_app)[2:]]
    loan_app.start()
    result = mm("record", "loan", "--observe", "0", "--", *agent, cwd=project)
    assert result.returncode == 0, result.stderr
    assert f"in {project}" in result.stderr
    loan_app.out.unlink()

    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--timeout", "2", cwd="/")  # cron, from anywhere
    assert result.returncode == 0, result.stderr
    assert "healed" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]

    shutil.rmtree(project)
    loan_app.out.unlink()
    loan_app.start("--popup-at-start", "--variant", "other")  # a screen no branch knows
    result = mm("replay", "loan", "--timeout", "2", cwd="/")
    assert result.returncode == 1, result.stderr
    assert f"folder {project} no longer exists" in result.stderr
