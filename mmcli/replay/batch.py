"""Batch runs: replay a task once per row of a CSV file (header = param names).

Every row runs even when an earlier one failed; only Ctrl-C (or the fail-safe) stops the
batch. An optional `before_each` command runs before every row (with the row's params in
its environment) to bring the app to the task's starting screen, e.g. by restarting it.
"""

from __future__ import annotations

import csv
import os
import subprocess
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from mmcli.errors import Aborted, ExitCode, MMError, Outcome, UsageError, closest
from mmcli.model import Recording
from mmcli.params import KEY, Values, listed
from mmcli.replay.preconditions import check_values
from mmcli.replay.report import ReplayReport

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RowResult:
    row: int
    """1-based row number in the CSV file (the header is row 0)."""
    params: dict[str, str]
    """The row's values, secrets excluded."""
    outcome: str
    exit_code: ExitCode
    detail: str = ""
    report: ReplayReport | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code is ExitCode.OK

    def as_json(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "params": self.params,
            "outcome": self.outcome,
            "exit_code": int(self.exit_code),
            "detail": self.detail,
            "replay": self.report.as_json() if self.report else None,
        }


def read_rows(path: Path) -> list[dict[str, str]]:
    """The CSV's rows as dicts; a bad file is a usage error, before anything runs."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except FileNotFoundError:
        raise UsageError(f"--params-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise UsageError(f"--params-file {path}: cannot read ({e})") from None
    if not header:
        raise UsageError(f"--params-file {path}: empty, expected a header of param names")
    for name in header:
        if not KEY.fullmatch(name or ""):
            raise UsageError(f"--params-file {path}: invalid param name {name!r} in the header")
    for number, row in enumerate(rows, start=1):
        if None in row or any(v is None for v in row.values()):
            raise UsageError(f"--params-file {path}: row {number} has the wrong number of fields")
    if not rows:
        raise UsageError(f"--params-file {path}: no rows")
    return rows


def check_columns(
    recording: Recording,
    rows: Sequence[dict[str, str]],
    values: Values,
    path: Path,
    say: Progress,
) -> None:
    """The CSV's header against the recording's params: a param neither in the header nor
    given on the command line is a usage error naming the file; a column that is no param
    of the recording is reported (and not used)."""
    columns = list(rows[0]) if rows else []
    needed = list(recording.params)
    shown_needed = ", ".join(needed) or "none"
    extra = [c for c in columns if c not in needed]
    missing = [k for k in needed if k not in columns and k not in values.all]
    if missing:
        also = f" ({_columns(extra)} no param of it)" if extra else ""
        typos = "".join(
            f"; column {c!r}: did you mean {close!r}?"
            for c in extra
            if (close := closest(c, missing)) is not None
        )
        raise UsageError(
            f"--params-file {path}: the header has no column {', '.join(map(repr, missing))}; "
            f"{recording.name!r} needs {shown_needed}{also}{typos}"
        )
    if extra:
        say(
            f"warning: --params-file {path}: {_columns(extra)} no param of {recording.name!r} "
            f"(its params: {shown_needed}); ignored"
        )


def _columns(names: Sequence[str]) -> str:
    quoted = ", ".join(map(repr, names))
    return f"column {quoted} is" if len(names) == 1 else f"columns {quoted} are"


def row_params(
    columns: Collection[str], params: Mapping[str, str], recording: Recording | None
) -> dict[str, str]:
    """A row's params as shown and reported: in the order of the CSV's `columns` (a row,
    or their names), then the others in their own order (given on the command line); a
    column that is no param of the recording (warned about by `check_columns`, not used)
    left out; never a secret's value (`params` has none)."""
    wanted = set(recording.params) if recording is not None else set(params)
    order = [k for k in columns if k in params] + [k for k in params if k not in columns]
    return {k: params[k] for k in order if k in wanted}


def outcome_exit(results: Sequence[RowResult]) -> ExitCode:
    """0 when every row succeeded, else the exit code of the first failed row."""
    return next((r.exit_code for r in results if not r.ok), ExitCode.OK)


def run_batch(
    rows: Sequence[dict[str, str]],
    values: Values,
    replay: Callable[[Values], ReplayReport],
    before_each: str | None = None,
    progress: Progress | None = None,
    recording: Recording | None = None,
) -> list[RowResult]:
    """One replay per row, each by `replay` with the row's values (the caller's: it
    opened the run and loaded the recording, or records it first). `recording`, as the
    batch began (None: not recorded yet), says which columns are params and secrets;
    the first row's values are checked against it before anything runs."""
    say = progress or (lambda message: None)
    secret = set(recording.secrets) if recording is not None else set()
    if recording is not None:
        check_values(recording, values.merged(rows[0], secret))
    results: list[RowResult] = []
    for number, row in enumerate(rows, start=1):
        # A column named like a secret (given with --secret or recorded as one) is one.
        row_values = values.merged(row, secret)
        shown = row_params(row, row_values.params, recording)
        line = listed(shown)
        say(f"row {number}/{len(rows)}" + (f": {line}" if line else ""))
        results.append(run_row(number, row_values, shown, before_each, partial(replay, row_values)))
    return results


def run_row(
    number: int,
    values: Values,
    shown: dict[str, str],
    before_each: str | None,
    replay: Callable[[], ReplayReport],
) -> RowResult:
    """One row: `before_each`, then `replay()`, as a `RowResult` (an `MMError` is the
    row's result; Ctrl-C is raised). A fleet's worker runs its rows through here too."""
    if before_each:
        done = subprocess.run(before_each, shell=True, env={**os.environ, **values.env()})
        if done.returncode != 0:
            return RowResult(
                number,
                shown,
                "setup-failed",
                ExitCode.ERROR,
                f"--before-each exited {done.returncode}",
            )
    try:
        report = replay()
    except Aborted:
        raise
    except MMError as e:
        return RowResult(number, shown, "error", e.exit_code, str(e))
    detail = ""
    if report.divergence is not None:
        d = report.divergence
        detail = f"step {d.step + 1} ({d.expected}): {d.reason}"
    outcome = str(report.outcome)
    if report.outcome is Outcome.AGENT_FAILED:
        detail = f"agent exited {report.agent_returncode}; {detail}"
    if report.detail:
        detail = f"{report.detail}; {detail}" if detail else report.detail
    return RowResult(number, shown, outcome, report.exit_code, detail, report)
