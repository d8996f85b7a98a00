"""Secrets given on the command line or in a params file: where their values may show."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

from mmcli.backends import FakeBackend
from mmcli.params import Values
from mmcli.replay.batch import row_params, run_batch
from mmcli.replay.report import ReplayOptions
from mmcli.store.recordings import Store
from mmcli.verbs.replay import BatchRecording
from tests.helpers import CREATED, form_screen
from tests.unit.test_heal import SECRET, secret_form


def test_a_params_file_column_named_like_a_secret_is_shown_nowhere() -> None:
    secret_form()  # records {{pin}} as a secret
    said: list[str] = []
    rows = [{"pin": SECRET, "note": "first"}, {"pin": "9999-ABC", "note": "second"}]
    backend, options = FakeBackend(form_screen(popup=True)), ReplayOptions(timeout=0.2)
    with contextlib.ExitStack() as marked:
        batch = BatchRecording(Store(), "form", marked)
        results = run_batch(
            rows,
            Values(),
            lambda values: batch.replay(backend, values, options, said.append),
            progress=said.append,
            recording=batch.open(),
        )
    # "note" is no param of the recording: left out of what is shown and reported.
    assert [r.params for r in results] == [{}, {}]
    out = "\n".join(said) + json.dumps([r.as_json() for r in results])
    assert SECRET not in out and "9999" not in out
    assert "row 1/2" in out and "first" not in out


def test_a_row_is_shown_as_key_value_in_the_csv_s_order() -> None:
    from mmcli.model import Recording

    rec = Recording("r", [], CREATED, params=["city", "customer", "zip"])
    row = {"zip": "75001", "customer": "José Müller", "note": "x"}
    params = {"city": "Paris", "customer": "José Müller", "zip": "75001"}  # sorted
    assert list(row_params(row, params, rec).items()) == [
        ("zip", "75001"),
        ("customer", "José Müller"),
        ("city", "Paris"),  # given on the command line: after the CSV's columns
    ]


def test_a_params_file_column_given_as_secret_stays_secret() -> None:
    values = Values({"a": "1"}, {"pin": "x"}).merged({"pin": SECRET, "b": "2"})
    assert values.params == {"a": "1", "b": "2"}
    assert values.secrets == {"pin": SECRET}
    assert Values().merged({"pin": SECRET}, {"pin"}).params == {}


def test_a_secret_value_on_the_command_line_is_warned_about() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run(
        [sys.executable, "-m", "mmcli", "replay", "x", "--secret", f"pin={SECRET}"],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200"},
        timeout=60,
    )
    assert "other users can see it (ps)" in result.stderr
    assert "MM_SECRET_PIN" in result.stderr
    assert SECRET not in result.stderr + result.stdout
