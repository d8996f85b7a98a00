"""A store in a bucket on a real S3 server (SeaweedFS on 127.0.0.1): the real `mm`
records, replays, diverges, heals and lists there, with nothing written locally."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mmcli.llm.document import save
from mmcli.store.recordings import Store
from tests.e2e.conftest import WANTED, LoanApp, agent_command, mm
from tests.llm.test_matching import recorded_session
from tests.servers import S3Server
from tests.store.conftest import s3_env, s3_url, seaweed  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


def fields(record: dict[str, object]) -> dict[str, str]:
    return {k: str(record[k]) for k in WANTED}


def test_record_replay_and_heal_on_a_store_in_a_bucket(
    loan_app: LoanApp,
    tmp_path: Path,
    s3_url: str,  # noqa: F811
    isolated_store: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MM_HOME", s3_url)
    monkeypatch.setenv("MM_WORKER", "worker-a")
    counter = tmp_path / "agent-starts"
    loan_app.start()
    result = mm("record", "loan", "--observe", "0.5", "--", *agent_command(loan_app, counter))
    assert result.returncode == 0, result.stderr
    assert s3_url in result.stderr
    assert not isolated_store.exists()  # nothing written to the local default store

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2", "--json")
    assert result.returncode == 3, result.stderr
    assert loan_app.records() == []

    # The recorded agent command comes from the bucket: it runs only where allowed.
    result = mm("replay", "loan", "--timeout", "2")
    assert result.returncode == 3, result.stderr
    assert "comes from a shared store and is not one this machine allows" in result.stderr
    assert counter.read_text().count("started") == 1  # not run

    command = json.loads(mm("show", "loan", "--json").stdout)["command"]
    allowed = ["--allow-agent", shlex.join(command)]
    result = mm("replay", "loan", "--timeout", "2", *allowed)  # the agent heals
    assert result.returncode == 0, result.stderr
    assert "healed" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]

    loan_app.out.unlink()
    loan_app.start("--popup-at-start")
    result = mm("replay", "loan", "--no-agent", "--timeout", "2")
    assert result.returncode == 0, result.stderr
    assert "done from memory" in result.stderr
    assert [fields(r) for r in loan_app.records()] == [WANTED]
    assert counter.read_text().count("started") == 2

    (listed,) = json.loads(mm("ls", "--json").stdout)
    assert listed["name"] == "loan" and listed["branches"] == 1
    assert listed["replays"] == 4 and listed["healed"] == 1
    shown = json.loads(mm("show", "loan", "--json").stdout)
    assert shown["divergences"][0]["live"].startswith(s3_url)
    assert shown["divergences"][0]["worker"] == "worker-a"  # which worker ran what
    assert " on worker-a (healed) at step " in mm("show", "loan").stdout
    page = tmp_path / "loan.html"
    assert mm("show", "loan", "--html", str(page)).returncode == 0
    assert page.read_text().count("data:image/png;base64,") >= 5
    assert mm("path").stdout.strip() == s3_url
    assert not isolated_store.exists()

    # A writer of the bucket puts another command in the recording: it never runs here.
    planted = tmp_path / "PLANTED"
    store = Store(s3_url)
    with store.lock("loan"):
        rec = store.load("loan")
        rec.command = ["sh", "-c", f"touch {planted}"]
        store.save(rec, overwrite=True)
    loan_app.start("--error-label")  # diverges at once
    result = mm("replay", "loan", "--timeout", "2", *allowed)
    assert result.returncode == 3, result.stderr
    assert not planted.exists()


def test_doctor_trusts_a_server_that_honours_conditional_writes(
    s3_url: str,  # noqa: F811
    seaweed: S3Server,  # noqa: F811
) -> None:
    result = mm("doctor", "--json", "--store", s3_url)
    store = next(f for f in json.loads(result.stdout) if f["check"] == "store")
    assert store["status"] == "ok", store
    assert "1 winner" in store["detail"]


def test_a_model_api_recording_in_a_bucket_runs_only_an_allowed_command(
    tmp_path: Path,
    s3_url: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model-API replay is its agent's run: a command a writer of the bucket put in the
    recording is refused before anything runs, and runs once the operator allows it."""
    marker = tmp_path / "ran"
    rec = recorded_session().recording
    rec.command = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    save(Store(s3_url), rec, list(rec.tree.nodes))
    monkeypatch.setenv("MM_HOME", s3_url)

    result = mm("replay", rec.name, "--no-agent")
    assert result.returncode == 1, result.stderr
    assert "comes from a shared store and is not one this machine allows" in result.stderr
    assert "nothing was run" in result.stderr
    assert not marker.exists()

    result = mm("replay", rec.name, "--no-agent", "--allow-agent", shlex.join(rec.command))
    assert marker.exists(), result.stderr
