"""What the commands print of the reports the core returns: one renderer per kind of
report (a screen replay, a batch, a model-API run, each kind's `mm show` view), so the
commands only parse, call and render. Human output goes to stderr; `--json` to stdout."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import typer

from mmcli.cli.output import console, escape, inert, results, say
from mmcli.errors import Outcome
from mmcli.model import plural, shown_command
from mmcli.params import listed


def _model_api(result: Any) -> bool:
    """Whether `result` is a model-API run's (`LLMResult`): never when `llm.run`, 40 ms of
    imports, was not needed to make it."""
    run = sys.modules.get("mmcli.llm.run")
    return run is not None and isinstance(result, run.LLMResult)


# ---- record ---------------------------------------------------------------------------------


def recorded(result: Any, name: str, where: str) -> typer.Exit:
    """`mm record`'s lines; the exit to raise."""
    if _model_api(result):
        if result.saved:
            say(f"[green]recorded[/] {name!r}: {result.saved} model calls in {where}")
        elif result.outcome is Outcome.UNCHANGED:
            say("not saved: the recording's tree already holds this run")
        else:
            say(f"[yellow]not saved[/]: the agent exited {result.agent_returncode}")
        return typer.Exit(result.exit_code)
    if result.merged:
        pass  # the core said where the branch went
    elif result.saved:
        say(f"[green]recorded[/] {name!r}: {plural(result.steps, 'step')} in {where}")
    else:
        say(f"[yellow]not saved[/]: {result.reason}")
    return typer.Exit(result.returncode)


# ---- replay ---------------------------------------------------------------------------------


def replayed(report: Any, json_out: bool, dry_run: bool = False) -> typer.Exit:
    """`mm replay`'s lines (and its JSON with `json_out`) for any kind of report; the exit
    to raise."""
    from mmcli.verbs.replay import BatchReport

    if json_out:
        print(json.dumps(report.as_json()))
    if isinstance(report, BatchReport):
        _batch(report, json_out)
    elif _model_api(report):
        _model_run(report)
    else:
        screen_run(report, dry_run)
    return typer.Exit(report.exit_code)


def _batch(report: Any, json_out: bool = False) -> None:
    from rich.table import Table

    table = Table("row", "params", "outcome", "detail")
    for r in report.rows:
        style = "green" if r.ok else "red"
        params = listed(r.params)
        table.add_row(str(r.row), escape(params), f"[{style}]{r.outcome}[/]", escape(r.detail))
    results(to_stderr=json_out).print(table)
    failed = sum(1 for r in report.rows if not r.ok)
    say(
        f"{len(report.rows) - failed} of {len(report.rows)} rows done"
        + (f", {failed} failed" if failed else "")
    )


def _model_run(result: Any) -> None:
    where = escape(f": {result.reasons[0]}") if result.reasons else ""
    messages = {
        Outcome.FROM_MEMORY: f"[green]done from memory[/]: {result.hits} model calls answered",
        Outcome.HEALED: f"[green]healed[/]: {result.hits} answers from memory, "
        f"{result.forwarded} from the model, saved as a branch{where}",
        Outcome.DIVERGED: f"[red]diverged[/]: {result.refused} model calls refused{where}",
        Outcome.AGENT_FAILED: f"[red]agent failed[/] (exit {result.agent_returncode}){where}",
        Outcome.NOT_SAVED: f"[yellow]done, not saved[/] (do not retry the task){where}",
    }
    say(messages.get(result.outcome, result.outcome))


def screen_run(report: Any, dry_run: bool = False) -> None:
    d = report.divergence
    where = escape(f" at step {d.step + 1} ({d.expected}): {d.reason}") if d else ""
    messages = {
        Outcome.FROM_MEMORY: f"[green]done from memory[/]: {plural(report.steps_replayed, 'step')}",
        Outcome.HEALED: f"[green]healed[/]: {plural(report.steps_replayed, 'step')} from memory, "
        f"{report.agent_steps} by the agent{where}",
        Outcome.RECORDED: f"[green]recorded[/] {report.name!r} with the agent: "
        f"{plural(report.agent_steps, 'step')}",
        Outcome.DIVERGED: f"[red]diverged[/]{where}",
        Outcome.AGENT_FAILED: f"[red]agent failed[/] (exit {report.agent_returncode})"
        + escape(f": {report.detail}" if report.detail else "")
        + where,
        Outcome.NOT_SAVED: "[yellow]done, not saved[/]: "
        + escape(f"{report.detail}; the task was done: do not retry it"),
        Outcome.WOULD_REPLAY: "[green]dry run[/]: the screen matches step "
        f"{report.steps_replayed + 1}",
        Outcome.OUTCOME_DIFFERS: "[red]outcome differs[/]: "
        + escape(
            f"{plural(report.steps_replayed, 'step')} performed, but "
            f"{d.reason if d else 'the outcome was not seen'}; check the task before "
            f"retrying (mm show {report.name} --html {report.name}.html shows both screens)"
        ),
        Outcome.HEALED_PENDING: "[yellow]healed, unverified[/]: "
        + escape(f"{report.agent_steps} steps by the agent; {report.detail}"),
    }
    line = messages.get(report.outcome, str(report.outcome))
    unsure = getattr(report, "verified", None) is False
    if unsure and report.outcome in (Outcome.FROM_MEMORY, Outcome.HEALED):
        line = line.replace("[green]", "[yellow]", 1).replace("[/]", ", not verified[/]", 1)
        steps = ", ".join(u.split(":", 1)[0] for u in report.unverified)
        line += escape(f"; typed text not read back where it landed ({steps})")
    say(line, soft_wrap=True)
    if report.outcome is Outcome.DIVERGED:
        fits = report.divergence.next if report.divergence else None
        say(escape(next_steps(report.name, dry_run, fits)), soft_wrap=True)


def next_steps(name: str, dry_run: bool = False, fits: str | None = None) -> str:
    """What to try after a divergence with no agent allowed (exit 3): what fits the
    refusal (`Divergence.next`), else let the agent finish."""
    show = f"see the live and recorded screens with mm show {name} --html {name}.html"
    if fits is not None:
        return f"next: {fits}; {show}"
    if dry_run:
        return f"next: {show}"
    return (
        "next: replay without --no-agent (or with --agent CMD) to let the agent finish from "
        f"here and learn this screen; {show}"
    )


# ---- show -----------------------------------------------------------------------------------


def shown(view: Any, json_out: bool) -> None:
    """`mm show`'s output for any kind's view."""
    from mmcli.verbs.show import ModelView, ScreenView, SDKView

    if isinstance(view, ScreenView) and view.html is not None:
        steps = plural(len(view.recording.steps), "step")
        say(f"wrote {escape(str(view.html))} ({steps})")
    if json_out:
        print(json.dumps(view.as_json()))
    elif isinstance(view, SDKView):
        _sdk_view(view)
    elif isinstance(view, ModelView):
        _model_view(view)
    else:
        _screen_view(view)


def _screen_view(view: Any) -> None:
    from mmcli.store.thumbnails import describe

    rec, out = view.recording, results()
    agent = shlex.join(shown_command(rec.command))
    agent = agent if len(agent) <= 100 else agent[:97] + "..."
    agent += f" (in {rec.cwd})" if rec.command and rec.cwd else ""
    out.print(
        f"[bold]{rec.name}[/]: {plural(len(rec.steps), 'step')}, "
        f"{plural(rec.branch_count(), 'branch', 'branches')}; agent: {escape(agent)}"
    )
    for t in view.lines:
        # A branch's steps stand under its first one, right of the mark that starts it.
        mark = "  └─ branch: " if t.branch_start else ""
        pad = " " * len("  └─ branch: ") * (t.indent - 1 if t.branch_start else t.indent)
        share = view.masked_share(t)
        masked = f"  (unchecked: {share:.0%} of the task area)" if share >= 0.005 else ""
        masked += f"  (branch id {t.step.id})" if t.branch_start else ""
        if t.step.pending:
            masked += f"  pending: ended on a new outcome; mm approve {rec.name} {t.step.id}"
        out.print(
            inert(f"{pad}{mark}{t.depth + 1:>3}. {t.step.action.describe()}{masked}"), markup=False
        )
    for t in view.lines:
        if t.step.id in view.problems:
            what = describe(rec.name, t.step, view.problems[t.step.id])
            console().print(
                inert(
                    f"warning: step {t.depth + 1} (id {t.step.id}): {what}; replay checks it "
                    "with the coarse grid only, and --policy strict does not act on it"
                ),
                markup=False,
            )
    for d in view.divergences:
        by = f" on {d['worker']}" if d.get("worker") else ""
        out.print(
            inert(
                f"diverged {d['at']}{by} ({d['outcome']}) at step {d['step'] or '?'}: {d['reason']}"
            ),
            markup=False,
        )
        out.print(
            inert(f"  live screen: {d['live']}\n  recorded:    {d['recorded']}"), markup=False
        )


def _model_view(view: Any) -> None:
    rec, out = view.recording, results()
    out.print(
        f"[bold]{escape(view.name)}[/]: model-API recording, "
        f"{plural(len(view.lines), 'model call')}, "
        f"{plural(rec.tree.branches(), 'branch', 'branches')}; "
        f"agent: {escape(shlex.join(shown_command(rec.command)))}"
    )
    for depth, _, text in view.lines:
        out.print(inert(f"{'  ' * depth}{depth + 1:>3}. {text}"), markup=False)


def _sdk_view(view: Any) -> None:
    out = results()
    runs = view.outline["trajectories"]
    out.print(
        f"[bold]{escape(view.name)}[/]: Python SDK document, "
        f"{plural(len(runs), 'trajectory', 'trajectories')}"
    )
    for t in runs:
        tags = f" tags {', '.join(t['tags'])}" if t["tags"] else ""
        branch = (
            f", branch of {t['branch_of']} after step {t['branch_step']}"
            if t["branch_of"] is not None
            else ""
        )
        out.print(inert(f"trajectory {t['id']}{tags}{branch}:"), markup=False)
        for i, step in enumerate(t["steps"], 1):
            out.print(inert(f"  {i:>3}. {step}"), markup=False)


# ---- inventory ------------------------------------------------------------------------------


def size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n = n // 1024
    return f"{n} GB"


def listing(summaries: list[Any], json_out: bool, where: str) -> None:
    """`mm ls`: a table of the store's documents, or their JSON."""
    if json_out:
        print(json.dumps([s.as_json() for s in summaries]))
        return
    if not summaries:
        say(f"no recordings yet in {escape(where)}")
        say("record one with: mm record NAME -- CMD")
        return
    from rich.table import Table

    columns = ("name", "steps", "branches", "params", "created", "last replayed")
    table = Table(*columns, "replays", "memory", "healed", "diverged", "size")
    for s in summaries:
        if s.error:
            say(f"[yellow]warning[/]: {s.error}")
            table.add_row(s.name, *["-"] * 9, size(s.size), style="red")
            continue
        created = s.created.strftime("%Y-%m-%d %H:%M") if s.created else "-"
        table.add_row(
            s.name,
            str(s.steps),
            str(s.branches) + (f" ({s.pending} pending)" if s.pending else ""),
            ",".join(s.params) or "-",
            created,
            (s.last_replayed or "-")[:16].replace("T", " "),
            str(s.replays),
            str(s.from_memory),
            str(s.healed),
            str(s.diverged) + (f" (+{s.outcome_differs} outcome)" if s.outcome_differs else ""),
            size(s.size),
        )
    results().print(table)


def prune_plan(plan: Any, dry_run: bool) -> None:
    if not plan.deletions:
        say("nothing to prune")
        return
    from rich.table import Table

    table = Table("recording", "what", "steps", "size", "why", title="prune plan")
    for d in plan.deletions:
        what = "whole recording" if d.branch is None else f"branch {d.branch}"
        shown_size = size(d.size) if d.branch is None else "-"
        table.add_row(escape(d.name), what, str(d.steps), shown_size, escape(d.reason))
    console().print(table)
    if dry_run:
        say("dry run: nothing deleted")


def pruned(plan: Any, deleted: list[Any] | None, json_out: bool) -> None:
    """After `mm prune`: what was deleted (None: nothing was to be)."""
    if json_out:
        done = [d.as_json() for d in deleted or []]
        left = [] if deleted is not None else [d.as_json() for d in plan.deletions]
        print(json.dumps({"deleted": done, "plan": left}))
    if deleted is not None:
        say(f"deleted {len(deleted)} of {len(plan.deletions)} item(s)")
