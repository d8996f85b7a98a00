"""`mm record --llm`, `mm replay` of a model-API recording, and `mm proxy`.

The agent runs with its SDKs pointed at the proxy (`ANTHROPIC_BASE_URL`,
`OPENAI_BASE_URL`, the proxy's token in their path: nobody else is answered); what it does
on the screen is its own business. A recording is saved only when the agent exits 0.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from mmcli.desktop.agent import run_agent
from mmcli.desktop.allowed import OWN_STORE, RecordedAgents
from mmcli.errors import (
    ExitCode,
    MMError,
    Outcome,
    RecordingNotFound,
)
from mmcli.llm.document import LLMRecording, load, now, save
from mmcli.llm.leaks import find_leak
from mmcli.llm.proxy import Serving, Session, single_route, upstreams
from mmcli.llm.shapes import SHAPES, Shape, shape_for
from mmcli.model import PLACEHOLDER, render_template
from mmcli.params import Values, template_command
from mmcli.screen.matcher import Policy
from mmcli.store.inuse import in_use
from mmcli.store.lifecycle import Intent, OpenRun
from mmcli.store.recordings import Store, validate_name

Progress = Callable[[str], None]


@dataclass
class LLMResult:
    outcome: Outcome
    """RECORDED, UNCHANGED, NOT_RECORDED (record); FROM_MEMORY, HEALED, DIVERGED,
    AGENT_FAILED, NOT_SAVED (replay)."""
    exit_code: int
    """An `ExitCode`, or (recording) the failed agent's own."""
    hits: int = 0
    forwarded: int = 0
    refused: int = 0
    saved: int = 0
    agent_returncode: int | None = None
    reasons: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "exit_code": int(self.exit_code),
            "from_memory": self.hits,
            "upstream_calls": self.forwarded,
            "refused": self.refused,
            "saved_exchanges": self.saved,
            "agent_returncode": self.agent_returncode,
            "divergence": self.reasons[0] if self.reasons else None,
        }


def agent_env(base: str, name: str, values: Values, replay: bool) -> dict[str, str]:
    """The agent's environment: its SDKs' base URLs at `base` (the proxy's address and
    token), the recording's name, params and secrets as in screen mode."""
    env = {shape.env: shape.base_for_agent(base) for shape in SHAPES.values()}
    env.update(MM_RECORDING=name, **values.env())
    if replay:
        env["MM_REPLAY"] = "1"
    return env


def record_llm(
    opened: OpenRun,
    command: Sequence[str],
    values: Values,
    upstream: str | None,
    agent_timeout: float | None,
    progress: Progress | None,
) -> LLMResult:
    """Run the agent with every model call forwarded and recorded, into the run `opened`
    (by the record verb). With a run that adds, it is merged into the existing recording:
    the exchanges its tree already holds are followed (still asked of the model), the
    rest hangs from where the run departs."""
    if not command:
        raise MMError("no agent command given (put it after `--`)")
    store, name, add = opened.store, opened.name, opened.intent is Intent.ADD
    recorded_command = template_command(command, values)
    rec = (
        load(store, name)
        if add and store.exists(name)
        else LLMRecording(name, now(), recorded_command, cwd=_here())
    )
    rec.params = sorted(
        set(rec.params) | set().union(*(PLACEHOLDER.findall(a) for a in recorded_command))
    )
    session = Session(
        rec,
        values.all,
        secrets=frozenset(values.secrets),
        upstream=upstreams(os.environ, upstream),
        replay=False,
    )
    with Serving(single_route(session)) as server:
        if progress is not None:
            progress(f"model API proxy on {server.root}")
        run = run_agent(command, agent_env(server.base, name, values, False), agent_timeout)
    result = LLMResult(Outcome.NOT_RECORDED, run.returncode, forwarded=session.stats.forwarded)
    result.agent_returncode = run.returncode
    if run.timed_out:
        result.exit_code = ExitCode.AGENT_FAILED
        return result
    if not run.ok:
        return result
    if not session.new and session.stats.forwarded and add:
        result.outcome = Outcome.UNCHANGED
        return result
    if not session.new:
        raise MMError("the agent exited 0 without calling the model; nothing to record")
    rec.params = sorted(set(rec.params) | _used(rec, session.new, values))
    find_leak(rec, session.new, values.secrets)
    overwrite = opened.intent is Intent.OVERWRITE
    with opened.saving():  # a replay or `mm proxy` may walk the tree this would replace
        save(store, rec, session.new, overwrite=overwrite, create=not add)
    result.outcome, result.saved = Outcome.RECORDED, len(session.new)
    return result


def _here() -> str | None:
    """The folder the agent runs in now, where replay will run it (None: it is gone)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def _used(rec: LLMRecording, new: list[int], values: Values) -> set[str]:
    import json

    text = " ".join(json.dumps([rec.tree.nodes[i].prompt, rec.tree.nodes[i].answer]) for i in new)
    return {k for k in PLACEHOLDER.findall(text) if k in values.all}


def replay_llm(
    opened: OpenRun,
    values: Values,
    *,
    agent: Sequence[str] | None = None,
    no_agent: bool = False,
    policy: Policy = Policy.DEFAULT,
    upstream: str | None = None,
    agent_timeout: float | None = None,
    progress: Progress | None = None,
    recorded: RecordedAgents = OWN_STORE,
) -> LLMResult:
    """Run the agent behind the proxy answering from the recording's tree; a miss goes to the
    model (the rest of the run is saved as a branch on exit 0), or is refused with
    `no_agent` (exit 3). Without `agent`, the recording's own command runs as `recorded`
    allows it (from a shared store: only one the operator allowed). The recording is open
    as a run (opened by the replay verb) throughout: `mm rm`, `mm mv`, `mm import --overwrite` and
    `mm prune` leave it alone."""
    store, name = opened.store, opened.name
    rec = load(store, name)
    cwd = None
    if not agent:
        agent, cwd, refused = recorded.command(rec, then="nothing was run")
        if refused:
            raise MMError(f"{name!r}: {refused}")
    command = [render_template(a, values.all) for a in (agent or ())]
    if not command:
        raise MMError(f"{name!r} has no recorded agent command; give one with --agent")
    session = Session(
        rec,
        values.all,
        policy,
        secrets=frozenset(values.secrets),
        upstream=None if no_agent else upstreams(os.environ, upstream),
    )
    started = time.monotonic()
    with Serving(single_route(session)) as server:
        env = agent_env(server.base, name, values, True)
        run = run_agent(command, env, agent_timeout, cwd=cwd)
    stats = session.stats
    result = LLMResult(
        Outcome.FROM_MEMORY,
        ExitCode.OK,
        hits=stats.hits,
        forwarded=stats.forwarded,
        refused=stats.refused,
        agent_returncode=run.returncode,
        reasons=stats.reasons,
    )
    if stats.refused:
        result.outcome = Outcome.DIVERGED
    elif not run.ok:
        result.outcome = Outcome.AGENT_FAILED
    elif session.new:
        result.outcome = Outcome.HEALED
        rec.params = sorted(set(rec.params) | _used(rec, session.new, values))
        try:
            find_leak(rec, session.new, values.secrets)
            save(store, rec, session.new)
            result.saved = len(session.new)
        except MMError as e:  # the task was done: a retry would do it twice
            result.outcome = Outcome.NOT_SAVED
            result.reasons.insert(0, f"the task was done, but the branch was not saved: {e}")
    result.exit_code = result.outcome.exit_code
    _journal(opened, result, time.monotonic() - started, progress)
    return result


def _journal(opened: OpenRun, result: LLMResult, seconds: float, progress: Progress | None) -> None:
    fields = {
        "from_memory": result.hits,
        "upstream_calls": result.forwarded,
        "refused": result.refused,
        "divergence": {"reason": result.reasons[0]} if result.reasons else None,
    }
    warn = None if progress is None else (lambda message: progress(f"warning: {message}"))
    opened.journal(result.outcome, fields, seconds=seconds, warn=warn)


# ---- mm proxy ----------------------------------------------------------------------------


def document_state(store: Store, name: str) -> str | None:
    """The SHA-256 of NAME's document as the store holds it now; None: there is none."""
    try:
        text = store.read_text(name)
    except RecordingNotFound:
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Router:
    """`/r/NAME/v1/...`: one session per recording name, created on first use; each new
    exchange is saved as soon as the model has answered.

    A recording is marked in use while a request for it is answered, not in between: a new
    `mm record NAME --overwrite` or `mm import --overwrite` may replace it then, and the
    next request reloads it; once it is removed (`mm rm`, `mm prune`), its requests are
    refused, and nothing is written back."""

    def __init__(
        self,
        store: Store,
        values: Values,
        policy: Policy,
        upstream: Mapping[str, str] | None,
        progress: Progress | None = None,
    ) -> None:
        self.store = store
        self.values = values
        self.policy = policy
        self.upstream = dict(upstream) if upstream is not None else None
        self.progress = progress
        self.sessions: dict[str, Session] = {}
        self.seen: dict[str, str | None] = {}
        """Each recording's document as last loaded or saved here."""
        self.lock = threading.Lock()

    def __call__(self, path: str) -> tuple[Session, Shape] | None:
        parts = path.split("/", 3)
        if len(parts) < 4 or parts[0] != "" or parts[1] != "r":
            return None
        name, rest = parts[2], "/" + parts[3]
        shape = shape_for(rest)
        try:
            validate_name(name)
        except MMError:
            return None
        if shape is None:
            return None
        return self.session(name), shape

    def session(self, name: str) -> Session:
        with self.lock:
            if name not in self.sessions:
                with in_use(self.store, name):
                    state = document_state(self.store, name)
                    rec = load(self.store, name) if state else LLMRecording(name, now())
                self.seen[name] = state
                self.sessions[name] = Session(
                    rec,
                    self.values.all,
                    self.policy,
                    frozenset(self.values.secrets),
                    self.upstream,
                    on_new=self._saved,
                    guard=self._hold,
                )
            return self.sessions[name]

    @contextlib.contextmanager
    def _hold(self, session: Session) -> Iterator[None]:
        """For one request: the recording marked in use, reloaded first if its document
        was replaced since; `RecordingNotFound` if it was removed."""
        name = session.recording.name
        with in_use(self.store, name):
            # The session's lock before the router's, as when an answer is saved (`_saved`).
            with session.lock:
                with self.lock:
                    state = document_state(self.store, name)
                    replaced = state != self.seen[name]
                if replaced:
                    if state is None:
                        raise RecordingNotFound(
                            f"recording {name!r} was removed while mm proxy served it; "
                            "restart mm proxy to record it anew"
                        )
                    session.recording = load(self.store, name)
                    session.new.clear()
                    with self.lock:
                        self.seen[name] = state
                    if self.progress is not None:
                        self.progress(f"{name}: reloaded (replaced since it was last used)")
            yield

    def close(self) -> None:
        """Nothing is held between requests."""

    def _saved(self, session: Session, node: int) -> None:
        rec = session.recording
        try:
            find_leak(rec, [node], self.values.secrets)
            written = save(self.store, rec, [node])
        except MMError as e:
            if self.progress is not None:
                self.progress(f"{rec.name}: not saved: {e}")
            return
        # Later exchanges hang from the ids as saved: go on with the document as written.
        session.recording = written
        session.new.clear()
        with self.lock:
            self.seen[rec.name] = document_state(self.store, rec.name)
        if self.progress is not None:
            self.progress(f"{rec.name}: saved exchange {max(written.tree.nodes)}")


def serve(
    store: Store,
    values: Values,
    *,
    port: int,
    policy: Policy = Policy.DEFAULT,
    upstream: str | None = None,
    no_upstream: bool = False,
    token: str | None = None,
    progress: Progress | None = None,
    ready: Callable[[str, str], None] | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C ends it with `Aborted` from the CLI's handler).
    Only requests under `/t/TOKEN/` are answered (`token`, else a new one); `ready` is
    told the address and the token."""
    router = Router(
        store, values, policy, None if no_upstream else upstreams(os.environ, upstream), progress
    )
    with contextlib.closing(router), Serving(router, port, token) as server:
        if ready is not None:
            ready(server.root, server.token)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return
