"""Small messages a newcomer meets first: names, durations, an empty store, a CSV header
that does not fit the recording, plurals."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mmcli.cli.app import app
from mmcli.errors import UsageError
from mmcli.model import Recording
from mmcli.params import Values
from mmcli.replay.batch import check_columns
from mmcli.store.recordings import Store
from tests.helpers import sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


@pytest.mark.parametrize(
    "name,expected",
    [
        ("..", "must not start with '.' (the file would be hidden)"),
        (".", "must not start with '.'"),
        (".hidden", "must not start with '.'"),
        ("a/b", "use letters, digits, '.', '_' and '-' only"),
    ],
)
def test_bad_names_get_a_hint(name: str, expected: str) -> None:
    result = runner.invoke(app, ["record", name, "--", "true"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.startswith("mm: error: invalid recording name")
    assert expected in result.stderr


def test_a_name_cannot_start_with_a_dash(isolated_store: Path, tmp_path: Path) -> None:
    """`--as -rf` would be a recording that `mm show -rf` reads as options."""
    archive = tmp_path / "x.tar.gz"
    archive.write_bytes(b"not read: the name is checked first")
    result = runner.invoke(app, ["import", str(archive), "--as", "-rf"], env=ENV)
    assert result.exit_code == 2, result.output
    assert "must not start with '-'" in result.stderr
    assert not isolated_store.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["replay", "x", "--timeout", "-1"],
        ["replay", "x", "--agent-timeout", "-5"],
        ["record", "x", "--observe", "-1", "--", "true"],
        ["record", "x", "--agent-timeout", "-1", "--", "true"],
        ["--lock-wait", "-1", "ls"],
    ],
)
def test_negative_durations_are_refused(args: list[str]) -> None:
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("mm: error: invalid value for '--")
    assert "must be 0 or more (seconds)" in result.stderr and result.stderr.count("\n") == 1


def test_an_empty_store_says_how_to_start(isolated_store: Path) -> None:
    result = runner.invoke(app, ["ls"], env=ENV)
    assert result.exit_code == 0
    assert f"no recordings yet in {isolated_store.resolve()}" in result.stderr
    assert "record one with: mm record NAME -- CMD" in result.stderr


def _loan() -> Recording:
    rec = sample_recording("loan")
    rec.params = ["name", "amount"]
    return rec


def test_a_csv_header_without_a_param_names_the_file(tmp_path: Path) -> None:
    csv = tmp_path / "rows.csv"
    with pytest.raises(UsageError) as e:
        check_columns(_loan(), [{"name": "A", "amout": "1"}], Values(), csv, print)
    assert str(e.value) == (
        f"--params-file {csv}: the header has no column 'amount'; 'loan' needs name, amount "
        "(column 'amout' is no param of it); column 'amout': did you mean 'amount'?"
    )


def test_a_param_given_on_the_command_line_need_not_be_a_column(tmp_path: Path) -> None:
    said: list[str] = []
    check_columns(
        _loan(), [{"name": "A"}], Values({"amount": "5"}), tmp_path / "r.csv", said.append
    )
    assert said == []


def test_extra_columns_are_reported(tmp_path: Path) -> None:
    said: list[str] = []
    rows = [{"name": "A", "amount": "1", "note": "x", "id": "7"}]
    check_columns(_loan(), rows, Values(), tmp_path / "r.csv", said.append)
    assert said == [
        f"warning: --params-file {tmp_path / 'r.csv'}: columns 'note', 'id' are no param of "
        "'loan' (its params: name, amount); ignored"
    ]


def test_replay_params_file_checks_the_header_before_the_display(
    isolated_store: Path, tmp_path: Path
) -> None:
    Store().save(_loan())
    csv = tmp_path / "rows.csv"
    csv.write_text("name,amout\nJohn,5\n")
    result = runner.invoke(app, ["replay", "loan", "--params-file", str(csv)], env=ENV)
    assert result.exit_code == 2
    assert "the header has no column 'amount'" in result.stderr


def test_one_step_one_branch_in_the_singular(isolated_store: Path) -> None:
    rec = sample_recording("one")
    rec.steps = rec.steps[:1]
    Store().save(rec)
    result = runner.invoke(app, ["show", "one"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "one: 1 step, 0 branches; agent:" in result.stdout


def test_a_divergence_says_what_to_try_next(capsys: pytest.CaptureFixture[str]) -> None:
    from mmcli.cli.render import screen_run as _render_report
    from mmcli.errors import Outcome
    from mmcli.replay.report import Divergence, ReplayReport

    reason = "A window or dialog covers the click target. target: patch cells 40 > 6"
    report = ReplayReport("loan", Outcome.DIVERGED, divergence=Divergence(2, "click", reason))
    _render_report(report)
    err = " ".join(capsys.readouterr().err.split())
    assert "diverged at step 3 (click): A window or dialog covers the click target. target:" in err
    assert "next: replay without --no-agent" in err
    assert "mm show loan --html loan.html" in err
    assert report.as_json()["divergence"]["step"] == 3  # the number people are told
    assert report.as_json()["divergence"]["depth"] == 2
    assert report.as_json()["divergence"]["next"] is None


def test_a_refusal_s_next_line_is_what_fits_it(capsys: pytest.CaptureFixture[str]) -> None:
    from mmcli.cli.render import screen_run as _render_report
    from mmcli.errors import Outcome
    from mmcli.replay.report import Divergence, ReplayReport

    approve = "mm approve loan 7 once its run is checked"
    divergence = Divergence(2, "click", "it is pending", next=approve)
    report = ReplayReport("loan", Outcome.DIVERGED, divergence=divergence)
    _render_report(report)
    err = " ".join(capsys.readouterr().err.split())
    assert f"next: {approve}; see the live and recorded screens" in err
    assert "replay without --no-agent" not in err
    assert report.as_json()["divergence"]["next"] == approve


def test_a_dry_run_divergence_suggests_only_looking(capsys: pytest.CaptureFixture[str]) -> None:
    from mmcli.cli.render import screen_run as _render_report
    from mmcli.errors import Outcome
    from mmcli.replay.report import Divergence, ReplayReport

    report = ReplayReport("loan", Outcome.DIVERGED, divergence=Divergence(0, "click", "x"))
    _render_report(report, dry_run=True)
    err = " ".join(capsys.readouterr().err.split())
    assert "next: see the live and recorded screens with mm show loan --html loan.html" in err
    assert "--no-agent" not in err
