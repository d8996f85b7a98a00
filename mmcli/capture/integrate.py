"""Adding a finished agent run to a recording: the one path every run takes.

`mm record` (a new recording), `mm record --add` (merged into the tree) and a healing
replay (a branch at the node where the screen diverged) all hand the run over here: its
captures, the screen after its last action, the regions seen changing on their own, the
params and secrets, and the command. `integrate` turns them into steps (typed values as
placeholders, masks, thumbnails with secrets painted over), checks that no secret is
left in what would be written, and saves under the recording's lock.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum

from mmcli.capture.gauges import away_from_task, clear_of_run, steps_places
from mmcli.capture.landing import READ_BACK_MIN, readable
from mmcli.capture.merge import merge
from mmcli.capture.recorder import Recorder
from mmcli.capture.secrets import find_leak, leaked_in
from mmcli.capture.steps import (
    Built,
    Capture,
    FinalScreen,
    build_steps,
    volatile_masks,
)
from mmcli.model import PLACEHOLDER, Recording, Step, plural, shown_command
from mmcli.params import Values, template_command, value_digest
from mmcli.readback.field import NotRead, normalise, times_shown
from mmcli.screen.analysis import covered_share
from mmcli.screen.fingerprint import Rect
from mmcli.screen.windows import MAX_TITLE, sanitized, titles_shown
from mmcli.store.recordings import Store
from mmcli.store.validate import MAX_DIGESTS

Progress = Callable[[str], None]


class Into(StrEnum):
    NEW = "new"
    """A new recording (or one replacing the old, with `overwrite`)."""
    ADD = "add"
    """Merged into the existing tree: shared steps stay, the rest becomes a branch."""
    BRANCH = "branch"
    """A branch at `at` (None: at the root), where a replay diverged."""


@dataclass
class FinishedRun:
    """What the recorder kept of an agent run that exited 0."""

    captures: list[Capture]
    final: FinalScreen | None
    """The screen the run ended on: its outcome, compared with the outcomes the
    recording knows and kept with the last step."""
    volatile: list[Rect]
    """Regions seen changing on their own (raw; merged and grown here)."""
    values: Values
    command: list[str] = field(default_factory=list)
    """The agent command as run (values in clear; secrets become placeholders here)."""
    workarea: Rect | None = None
    """The screen less the desktop's panels, where known."""
    cwd: str | None = None
    """The folder the command ran in (kept by a new recording: a fallback runs there)."""
    window_title: str | None = None
    """The title of the window at the run's first pointed action, once the run is over."""
    commit_steps: int | None = None
    """The committing actions at the end of the task, as declared for the recording
    (`mm record --commit-steps`); None: not declared."""
    gauges: list[Rect] = field(default_factory=list)
    """The app's gauges learned while the run worked, clear of what the run acts on
    (`gauges`): kept with `volatile` where clear of what the recording acts on too."""

    @classmethod
    def of(
        cls,
        recorder: Recorder,
        values: Values,
        command: Sequence[str],
        cwd: str | None = None,
    ) -> FinishedRun:
        return cls(
            recorder.captures,
            recorder.final,
            recorder.volatile,
            values,
            list(command),
            recorder.backend.workarea(),
            cwd,
            _first_window(recorder),
            gauges=clear_of_run(recorder.idle.gauges.learned, recorder.captures),
        )


def _first_window(recorder: Recorder) -> str | None:
    """The title of the window at the first action that had a point (where the task
    began), asked once the run is over: the window is still there, or None."""
    for capture in recorder.captures:
        if capture.action.x is not None and capture.action.y is not None:
            return recorder.backend.window_title_at(capture.action.x, capture.action.y)
    return None


@dataclass(frozen=True)
class Integrated:
    saved: bool
    steps: int
    """Steps added to the recording."""
    reason: str = ""
    shared: int = 0
    """Steps of the run the tree already had (`Into.ADD`)."""
    merged: bool = False
    """Added to an existing tree as a branch (`Into.ADD`)."""
    pending: int | None = None
    """The id of the new branch's first step when it ended on an outcome the recording did
    not know (kept pending until `mm approve`)."""
    branch: int | None = None
    """The id of the new branch's first step (`Into.BRANCH`)."""


def typed_doubts(captures: Sequence[Capture]) -> list[str]:
    """For each text a run typed into one field that was not read back there as typed
    (its field not read, showing other text, or holding it twice: typed again into a field
    that already held it), the run's step and why; never the text (it may be a secret)."""
    doubts = []
    for n, cap in enumerate(captures, 1):
        if not readable(cap.action) or cap.read is None:
            continue
        if isinstance(cap.read, NotRead):
            doubts.append(f"step {n}: its field could not be read back ({cap.read.reason})")
            continue
        found = normalise(cap.read.text).count(normalise(cap.action.text))
        twice = times_shown(cap.read.text, cap.action.text)
        if twice >= 2 and len(normalise(cap.action.text)) >= READ_BACK_MIN:
            doubts.append(
                f"step {n}: its field already held what was typed: it now holds it {twice} "
                "times (work done twice?)"
            )
        elif found == 0:
            doubts.append(f"step {n}: its field does not show what was typed")
    return doubts


def used_names(steps: Sequence[Step]) -> set[str]:
    return set().union(*(s.action.params_used() for s in steps)) if steps else set()


def integrate(
    store: Store,
    name: str,
    run: FinishedRun,
    into: Into,
    *,
    at: int | None = None,
    ignore: Sequence[Rect] = (),
    overwrite: bool = False,
    secret_typed: bool = False,
    progress: Progress | None = None,
) -> Integrated:
    """Add `run` to recording `name` and save it; see `Into`.

    `secret_typed`: a secret was typed before the run began (a heal after replayed steps
    typed one), so everything the run's screens show changing may show it.
    """
    say = progress or (lambda message: None)
    with store.lock(name):
        existing = None
        if into is Into.BRANCH or (into is Into.ADD and store.exists(name)):
            existing = store.load(name)
        gauges = away_from_task(run.gauges, steps_places(existing.steps) if existing else [])
        volatile = volatile_masks([*run.volatile, *gauges])
        if volatile and into is not Into.BRANCH:
            say("changing on their own (left out of checks): " + ", ".join(map(str, volatile)))
        if existing is not None:
            if into is Into.BRANCH:
                return _branch(store, existing, run, at, volatile, secret_typed, say)
            return _merge(store, existing, run, volatile, say)
        built = _build(run, 0, None, [*ignore, *volatile])
        recording = Recording(
            name=name,
            steps=built.steps,
            created=datetime.now(UTC).replace(microsecond=0),
            command=template_command(run.command, run.values),
            ignore=list(ignore),
            volatile=volatile,
            area=built.area,
            cwd=run.cwd if run.command else None,
            window_title=_title(run.window_title, run.values.secrets),
            commit_steps=run.commit_steps,
        )
        _note_params(recording, run.values)
        find_leak(recording, run.values.secrets)
        store.save(recording, built.thumbnails, overwrite=overwrite)
    for warning in weak_steps(recording):
        say(warning)
    for line in fallback_lines(recording, run.values):
        say(line)
    return Integrated(True, len(built.steps))


def _title(window: str | None, secrets: Mapping[str, str]) -> str | None:
    """The window's title as kept: printable characters only (`windows.sanitized`: a NUL
    in a title never loses a run), none at all when it shows (a piece of) a secret."""
    if window is None:
        return None
    title = sanitized(window, MAX_TITLE)
    if not title or leaked_in(title, secrets) is not None:
        return None
    return title


WEAK_SHARE = 0.25
"""A step whose masks cover more of the task area than this is reported as weakly checked."""


def masked_share(recording: Recording, step: Step) -> float:
    """The share (0-1) of the task area that the step's check leaves out (its masks)."""
    if recording.area is None:
        return 0.0
    return covered_share(step.fingerprint.masks, recording.area)


def weak_steps(recording: Recording) -> list[str]:
    """Warnings for the steps whose screen check leaves a large share of the task area
    unchecked (masked), so that a weak recording is seen before it is trusted."""
    out = []
    for step in recording.steps:
        share = masked_share(recording, step)
        if share > WEAK_SHARE:
            out.append(
                f"warning: step {recording.depth(step) + 1} (id {step.id}, "
                f"{step.action.describe()}) leaves "
                f"{share:.0%} of the task area {recording.area} unchecked: "
                + ", ".join(map(str, step.fingerprint.masks))
            )
    return out


def _build(
    run: FinishedRun,
    first_id: int,
    parent: int | None,
    masks: list[Rect],
    secret_typed: bool = False,
) -> Built:
    return build_steps(
        run.captures,
        run.final,
        run.values.all,
        first_id,
        parent,
        masks,
        secrets=set(run.values.secrets),
        secret_typed=secret_typed,
    )


def _note_params(recording: Recording, values: Values) -> None:
    """The recording's params: those it had, those its steps and command use; and a
    digest of each param's value this run was made with (`Recording.param_digests`)."""
    used = used_names(recording.steps)
    for arg in recording.command:
        used |= set(PLACEHOLDER.findall(arg))
    recording.params = sorted(set(recording.params) | used)
    recording.secrets = sorted(set(recording.secrets) | (used & set(values.secrets)))
    for key in sorted(used - set(recording.secrets)):
        value = values.params.get(key)
        if not value:
            continue
        known = recording.param_digests.setdefault(key, [])
        digest = value_digest(key, value)
        if digest in known:
            known.remove(digest)
        known.append(digest)
        del known[:-MAX_DIGESTS]


def fallback_lines(recording: Recording, values: Values) -> list[str]:
    """What `mm record` says a fallback will run, and which param values the command
    holds where mm does not replace them (the agent would get the recorded value)."""
    if not recording.command:
        return []
    where = f" in {recording.cwd}" if recording.cwd else ""
    lines = [f"on a divergence, replay runs: {shlex.join(shown_command(recording.command))}{where}"]
    for key, value in sorted(values.params.items()):
        if value and any(value in arg for arg in recording.command[1:]):
            lines.append(
                f"warning: the agent command holds {key!r}'s value inside an argument, where "
                "mm leaves it (a replay with another value would pass this one): give it as "
                "a whole argument (or --option=VALUE), or have the agent read "
                f"MM_PARAM_{key.upper()}"
            )
    return lines


def _merge(
    store: Store, existing: Recording, run: FinishedRun, volatile: list[Rect], say: Progress
) -> Integrated:
    built = _build(run, 0, None, [*existing.ignore, *volatile])
    merged = merge(existing, built.steps)
    if not merged.added:
        return Integrated(False, 0, "the recording's tree already holds this run", merged.shared)
    rec = merged.recording
    if run.commit_steps is not None:
        rec.commit_steps = run.commit_steps
    _extend(rec, volatile, built.area)
    _note_params(rec, run.values)
    find_leak(rec, run.values.secrets)
    keep = {name for s in merged.added for name in s.thumbnails()}
    store.save(rec, {k: v for k, v in built.thumbnails.items() if k in keep})
    say(
        f"merged into {existing.name!r}: {plural(merged.shared, 'step')} shared, a branch of "
        f"{plural(len(merged.added), 'step')} at step {merged.branch_at + 1}"
    )
    return Integrated(True, len(merged.added), shared=merged.shared, merged=True)


def _branch(
    store: Store,
    existing: Recording,
    run: FinishedRun,
    at: int | None,
    volatile: list[Rect],
    secret_typed: bool,
    say: Progress,
) -> Integrated:
    children = existing.children(at)
    masks = list(children[0].fingerprint.masks) if children else list(existing.ignore)
    masks.extend(r for r in volatile if r not in masks)
    built = _build(run, existing.next_id(), at, masks, secret_typed)
    # A recording with no outcome at all (made before outcomes were kept) has nothing to
    # verify a heal against: its heals are trusted as they always were.
    legacy = not existing.outcomes(trusted_only=False)
    known = known_outcome(store, existing, built.steps[-1], run) if built.steps else None
    doubts = typed_doubts(run.captures)
    if built.steps and ((known is None and not legacy) or doubts):
        built.steps[0] = replace(built.steps[0], pending=True)
    existing.steps.extend(built.steps)
    _extend(existing, volatile, built.area)
    _note_params(existing, run.values)
    find_leak(existing, run.values.secrets)
    store.save(existing, built.thumbnails)
    what = plural(len(built.steps), "step")
    branch = built.steps[0].id if built.steps else None
    if doubts and branch is not None:
        for doubt in doubts:
            say(f"the agent's {doubt}")
        say(
            f"saved a branch of {what} (branch id {branch}), pending: what the agent typed "
            f"was not verified where it landed; check it, then `mm approve {existing.name} "
            f"{branch}`"
        )
        return Integrated(True, len(built.steps), pending=branch, branch=branch)
    if legacy:
        say(f"saved a branch of {what}")
        return Integrated(True, len(built.steps), branch=branch)
    if known is None:
        say(
            f"saved a branch of {what} (branch id {built.steps[0].id}), pending: it ended on "
            f"an outcome the recording has not seen; check it, then `mm approve "
            f"{existing.name} {built.steps[0].id}`"
        )
        return Integrated(True, len(built.steps), pending=branch, branch=branch)
    that = existing.step_label(known)
    say(f"saved a branch of {what}; it ended on a known outcome (that of {that})")
    return Integrated(True, len(built.steps), branch=branch)


def known_outcome(store: Store, recording: Recording, last: Step, run: FinishedRun) -> Step | None:
    """The trusted step of `recording` whose outcome the run's settled last screen shows,
    or None (a new outcome, or one that cannot be judged)."""
    from mmcli.screen.excuses import task_window_areas
    from mmcli.screen.outcome import judge_outcome
    from mmcli.store.thumbnails import load_outcome

    if last.outcome is None or run.final is None:
        return None
    clients = (s.window.rect for s in recording.steps if s.window is not None)
    windows = task_window_areas(clients, run.workarea)
    for end in recording.outcomes():
        assert end.outcome is not None
        reference = load_outcome(store, recording.name, end).screen
        if reference is None:
            continue  # a coarse grid alone does not vouch for an outcome
        # A title bar that names this run's value where the known outcome named its own
        # is that outcome's bar, as replay judges it (`windows.titles_shown`).
        named = titles_shown(end.outcome.titles, run.values.all, _final_title_at(run))
        verdict = judge_outcome(
            end.outcome.fingerprint,
            reference,
            run.final.frame,
            ignore=[*recording.ignore, *last.outcome.fingerprint.masks, *named],
            area=recording.area,
            workarea=run.workarea,
            task_windows=windows,
        )
        if verdict.ok:
            return end
    return None


def _final_title_at(run: FinishedRun) -> Callable[[int, int], str | None]:
    """The title of the bar on the run's final screen at a point (`FinalScreen.titles`)."""
    titles = run.final.titles if run.final is not None else ()

    def title_at(x: int, y: int) -> str | None:
        for rect, title in titles:
            if rect.holds(x, y):
                return title
        return None

    return title_at


def _extend(recording: Recording, volatile: list[Rect], area: Rect | None) -> None:
    new = [r for r in volatile if r not in recording.volatile]
    recording.volatile = [*recording.volatile, *new]
    if area is not None:
        recording.area = area if recording.area is None else recording.area.union(area)
