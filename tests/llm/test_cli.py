"""`mm ls`, `mm show`, `mm prune`, `mm replay` on a model-API recording, through the CLI."""

from __future__ import annotations

import http.client
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.llm.document import save
from mmcli.store.recordings import Store
from tests.llm.fake_model import FakeModel
from tests.llm.test_matching import recorded_session

runner = CliRunner()
ENV = {"COLUMNS": "160", "NO_COLOR": "1"}


def saved(store_dir: Path, age: timedelta = timedelta(0)) -> Store:
    store = Store(store_dir)
    rec = recorded_session().recording
    rec.created -= age
    rec.command = ["python", "agent.py"]
    save(store, rec, list(rec.tree.nodes))
    return store


def test_ls_and_show(isolated_store: Path) -> None:
    saved(isolated_store)
    listed = json.loads(runner.invoke(app, ["ls", "--json"], env=ENV).stdout)
    assert [(s["name"], s["kind"], s["steps"], s["error"]) for s in listed] == [
        ("t", "llm", 2, None)
    ]
    shown = runner.invoke(app, ["show", "t"], env=ENV)
    assert shown.exit_code == 0
    assert "model-API recording, 2 model calls" in shown.stdout
    assert 'computer({"action":"left_click","coordinate":[350,162]})' in shown.stdout
    data = json.loads(runner.invoke(app, ["show", "t", "--json"], env=ENV).stdout)
    assert [e["depth"] for e in data["exchanges"]] == [0, 1]
    html = runner.invoke(app, ["show", "t", "--html", "x.html"], env=ENV)
    assert html.exit_code == 2 and "model API" in html.stderr


def test_prune_deletes_it_with_its_thumbnails(isolated_store: Path) -> None:
    saved(isolated_store, age=timedelta(days=3))
    assert (isolated_store / "t").is_dir()
    result = runner.invoke(app, ["prune", "--older-than", "2d", "--yes"], env=ENV)
    assert result.exit_code == 0, result.stderr
    assert not (isolated_store / "t.toml").exists()
    assert not (isolated_store / "t").exists()


def test_a_damaged_document_is_one_line_and_exit_1(isolated_store: Path) -> None:
    saved(isolated_store)
    path = isolated_store / "t.toml"
    path.write_text(path.read_text().replace("parent = 1", "parent = 5"))
    result = runner.invoke(app, ["replay", "t", "--no-agent"], env=ENV)
    assert result.exit_code == 1
    assert result.stderr.startswith("mm: error: ") and "parent 5" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    listed = json.loads(runner.invoke(app, ["ls", "--json"], env=ENV).stdout)
    assert "parent 5" in listed[0]["error"]


def test_record_llm_refuses_an_existing_name(isolated_store: Path) -> None:
    saved(isolated_store)
    result = runner.invoke(app, ["record", "t", "--llm", "--", "true"], env=ENV)
    assert result.exit_code == 1 and "already exists" in result.stderr


def test_screen_only_replay_options_are_refused(isolated_store: Path) -> None:
    saved(isolated_store)
    result = runner.invoke(app, ["replay", "t", "--dry-run"], env=ENV)
    assert result.exit_code == 2 and "recorded at the model API" in result.stderr


def test_mm_proxy_serves_until_interrupted(isolated_store: Path) -> None:
    saved(isolated_store)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mmcli", "proxy", "--port", "0", "--no-upstream"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert proc.stderr is not None
        found = re.search(r"http://127\.0\.0\.1:(\d+)/t/(\S+)/r/NAME", proc.stderr.readline())
        assert found, "no address announced"
        body = json.dumps({"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]})
        conn = http.client.HTTPConnection("127.0.0.1", int(found[1]), timeout=30)
        headers = {"Content-Type": "application/json"}
        conn.request("POST", f"/t/{found[2]}/r/t/v1/messages", body, headers)
        response = conn.getresponse()
        assert response.status == 422
        assert "no recorded answer" in json.loads(response.read())["error"]["message"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130


ONE_CALL = (
    "import sys, anthropic; anthropic.Anthropic(api_key='k', max_retries=0).messages.create("
    "model='m', max_tokens=10, messages=[{'role': 'user', 'content': sys.argv[1]}])"
)


def test_record_add_merges_a_run_into_the_tree(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeModel() as model:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", model.url)
        runs = (("first task", []), ("second task", ["--add"]), ("second task", ["--add"]))
        for task, extra in runs:
            args = ["record", "t", "--llm", *extra, "--", sys.executable, "-c", ONE_CALL, task]
            result = runner.invoke(app, args, env=ENV)
            assert result.exit_code == 0, result.stderr
        assert model.calls == 3
    shown = json.loads(runner.invoke(app, ["show", "t", "--json"], env=ENV).stdout)
    assert [e["depth"] for e in shown["exchanges"]] == [0, 0]
    again = runner.invoke(app, ["record", "t", "--llm", "--", "true"], env=ENV)
    assert again.exit_code == 1 and "--add" in again.stderr


def test_a_heal_that_cannot_be_saved_is_exit_5(
    isolated_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model did the task: a scheduler that retried on exit 1 would do it twice."""
    from mmcli.errors import StoreError

    with FakeModel() as model:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", model.url)
        first = ["record", "t", "--llm", "--", sys.executable, "-c", ONE_CALL, "first task"]
        assert runner.invoke(app, first, env=ENV).exit_code == 0

        def full_disk(*args: object, **kwargs: object) -> None:
            raise StoreError("no space left on device")

        monkeypatch.setattr("mmcli.llm.run.save", full_disk)
        other = f"{sys.executable} -c {shlex.quote(ONE_CALL)} 'second task'"
        result = runner.invoke(app, ["replay", "t", "--agent", other], env=ENV)
        assert model.calls == 2
    assert result.exit_code == 5, result.stderr
    assert "done, not saved" in result.stderr and "no space left" in result.stderr


def test_replay_runs_the_agent_in_its_folder_with_this_runs_values(
    isolated_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, seen = tmp_path / "project", tmp_path / "seen.json"
    project.mkdir()
    (project / "agent.py").write_text(
        f"import json, os, sys; open({str(seen)!r}, 'w').write(json.dumps([os.getcwd(), sys.argv]))"
    )
    store = Store(isolated_store)
    rec = recorded_session().recording
    rec.command, rec.cwd = [sys.executable, "agent.py", "--name", "{{name}}"], str(project)
    rec.params = sorted({*rec.params, "name"})
    save(store, rec, list(rec.tree.nodes))
    assert f"cwd = {json.dumps(str(project))}" in (isolated_store / "t.toml").read_text()
    monkeypatch.chdir(tmp_path)
    runner.invoke(app, ["replay", "t", "--no-agent", "--param", "name=Grace Hopper"], env=ENV)
    assert json.loads(seen.read_text()) == [str(project), ["agent.py", "--name", "Grace Hopper"]]
