"""`Engine`: muscle-mem's behaviour cache, persisted in the `mm` store.

    engine = Engine()                       # document "sdk" in the CLI's store

    @engine.function(pre_check=Check(capture, compare))
    def hello(name: str) -> None: ...

    engine.set_agent(agent).finalize()
    engine("erik")                          # False: the agent ran and was recorded
    engine("erik")                          # True: replayed from memory

A call looks for a stored trajectory of its tag bucket whose checks pass on the live
environment and replays it (see `walk.py`). Otherwise the agent runs with its task
arguments; the tool calls it makes are recorded and stored when it returns. When a
replay diverges part-way, the agent is handed the rest of the task and what it does is
stored as a new trajectory that starts with the steps already performed.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from mmcli.errors import Outcome
from mmcli.sdk.check import Check
from mmcli.sdk.document import StepRecord, Trajectory, now
from mmcli.sdk.errors import EngineBusy, EngineNotReady
from mmcli.sdk.metrics import Metrics
from mmcli.sdk.storage import DocumentStore
from mmcli.sdk.tools import Tool, ToolRegistry, encode_call
from mmcli.sdk.values import Codec
from mmcli.sdk.walk import Walk, WalkResult
from mmcli.store.lifecycle import OpenRun
from mmcli.store.recordings import Store, validate_name
from mmcli.verbs.sdk import call

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_NAME = "sdk"


@dataclass
class _Run:
    """The agent's run being recorded."""

    thread: int
    tags: tuple[str, ...]
    params: dict[str, Any]
    steps: list[StepRecord] = field(default_factory=list)
    depth: int = 0
    """Tool calls in progress: a tool called by another tool is not recorded."""
    failed: str | None = None
    """The first tool that raised: such a run is never stored."""
    warned: bool = False


class Engine:
    def __init__(self, *, name: str = DEFAULT_NAME, store: Store | Path | str | None = None):
        self.name = validate_name(name)
        self._store = store
        self._documents: DocumentStore | None = None
        self.registry = ToolRegistry()
        self.codec = Codec()
        self.metrics = Metrics()
        self.agent: Callable[..., Any] | None = None
        self.method_instance: Any = None
        self.finalized = False
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._run: _Run | None = None

    # ---- builder -------------------------------------------------------------------------

    def set_agent(self, agent: Callable[..., Any]) -> Engine:
        """The agent called, with the task's arguments, when memory has no answer."""
        self._check_open()
        self.agent = agent
        return self

    def set_context(self, method_instance: Any) -> Engine:
        """The object passed as `self` to method tools when they are replayed."""
        self._check_open()
        self.method_instance = method_instance
        return self

    def finalize(self) -> Engine:
        """Check that the engine has tools, an agent and (for method tools) a context."""
        if len(self.registry) == 0:
            raise EngineNotReady(
                "Engine must have at least one tool. "
                "Use engine.function() or engine.method() to register tools"
            )
        if self.agent is None:
            raise EngineNotReady(
                "Engine must have an agent to fall back to. Use engine.set_agent(your_agent)"
            )
        if self.method_instance is None and self.registry.has_methods():
            raise EngineNotReady(
                f"Engine has method tools ({', '.join(self.registry.methods())}) but no object "
                "to pass as their 'self'. Use engine.set_context(your_instance)"
            )
        self.finalized = True
        return self

    def _check_open(self) -> None:
        if self.finalized:
            raise EngineNotReady("Engine is finalized and cannot be modified")

    # ---- instrumentation -----------------------------------------------------------------

    def function(
        self, pre_check: Check[..., Any] | None = None, post_check: Check[..., Any] | None = None
    ) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Decorator recording calls of a function tool, with its checks."""
        if self.finalized:
            raise EngineNotReady("Engine is finalized and cannot register new functions")
        return self._register(pre_check, post_check, is_method=False)

    def method(
        self, pre_check: Check[..., Any] | None = None, post_check: Check[..., Any] | None = None
    ) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Decorator recording calls of a method tool; `self` is not stored, and replay
        passes the object given to `set_context`."""
        if self.finalized:
            raise EngineNotReady("Engine is finalized and cannot register new methods")
        return self._register(pre_check, post_check, is_method=True)

    def _register(
        self,
        pre_check: Check[..., Any] | None,
        post_check: Check[..., Any] | None,
        is_method: bool,
    ) -> Callable[[Callable[P, R]], Callable[P, R]]:
        def decorator(func: Callable[P, R]) -> Callable[P, R]:
            tool = self.registry.register(func, is_method, pre_check, post_check)

            @functools.wraps(func)
            def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
                run = self._run
                if run is None or run.depth:
                    return func(*args, **kwargs)
                if run.thread != threading.get_ident():
                    self._warn_other_thread(run, tool)
                    return func(*args, **kwargs)
                return self._record_call(run, tool, args, kwargs)

            return wrapper

        return decorator

    def _record_call(
        self, run: _Run, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        run.depth += 1
        try:
            if tool.is_method and not args:
                raise EngineNotReady(f"method tool {tool.name!r} was called without its object")
            stored = args[1:] if tool.is_method else args
            enc_args, enc_kwargs = encode_call(self.codec, tool, stored, kwargs, run.params)
            pre = self._capture(tool, tool.pre_check, "pre_check", args, kwargs)
            result = tool.func(*args, **kwargs)
            post = self._capture(tool, tool.post_check, "post_check", args, kwargs)
        except BaseException:
            run.failed = run.failed or tool.name
            raise
        finally:
            run.depth -= 1
        run.steps.append(
            StepRecord(tool.name, tool.source_hash, tool.is_method, enc_args, enc_kwargs, pre, post)
        )
        return result

    def _capture(
        self,
        tool: Tool,
        check: Check[..., Any] | None,
        role: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """The encoded capture: a copy taken now, which later changes cannot reach."""
        if check is None:
            return None
        return self.codec.encode(check.capture(*args, **kwargs), f"tool {tool.name!r}, {role}")

    def _warn_other_thread(self, run: _Run, tool: Tool) -> None:
        if not run.warned:
            run.warned = True
            warnings.warn(
                f"tool {tool.name!r} was called from another thread while the engine records "
                "its agent; calls from other threads are performed but not recorded",
                RuntimeWarning,
                stacklevel=3,
            )

    # ---- running a task ------------------------------------------------------------------

    def __call__(
        self,
        *args: Any,
        tags: list[str] | tuple[str, ...] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> bool:
        """Perform the task: from memory (True) or by the agent, recorded (False)."""
        if not self.finalized:
            self.finalize()
        bucket = _bucket(tags)
        values = _params(params)
        with self._exclusive():
            return self._perform(bucket, values, args, kwargs)

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        me = threading.get_ident()
        if self._owner == me:
            raise EngineBusy(
                "the engine was called from inside its own agent or tool; "
                "an engine runs one task at a time"
            )
        with self._lock:
            self._owner = me
            try:
                yield
            finally:
                self._owner = None

    def documents(self) -> DocumentStore:
        """The engine's document in the store (the store is looked up at each call, so
        `MM_HOME` set later is honoured)."""
        store = self._store if isinstance(self._store, Store) else Store(self._store)
        if self._documents is None or self._documents.store.where != store.where:
            self._documents = DocumentStore(store, self.name)
        return self._documents

    def _perform(
        self, bucket: tuple[str, ...], values: dict[str, Any], args: Any, kwargs: Any
    ) -> bool:
        """One call, in a run of the document the SDK's verb opens (`verbs.sdk.call`),
        journaled here with what the call did."""
        docs = self.documents()
        with call(docs.store, self.name) as opened:
            return self._call(opened, docs, bucket, values, args, kwargs)

    def _call(
        self,
        opened: OpenRun,
        docs: DocumentStore,
        bucket: tuple[str, ...],
        values: dict[str, Any],
        args: Any,
        kwargs: Any,
    ) -> bool:
        with self.metrics.measure("query"):
            doc = docs.load()
        candidates = [t for t in doc.trajectories if t.tags == bucket] if doc else []
        walk = Walk(
            self.registry, self.codec, self.metrics, values, self.method_instance, docs.where
        )
        result = walk.run(candidates)
        if result.hit is not None:
            _journal(opened, Outcome.FROM_MEMORY, bucket, result, 0)
            return True
        run = _Run(threading.get_ident(), bucket, values, steps=list(result.performed))
        agent = self.agent
        assert agent is not None  # finalize() saw to it
        self._run = run
        try:
            agent(*args, **kwargs)
        except BaseException as e:
            outcome = Outcome.ABORTED if isinstance(e, KeyboardInterrupt) else Outcome.AGENT_FAILED
            _journal(opened, outcome, bucket, result, len(run.steps))
            raise
        finally:
            self._run = None
        self._finish(opened, docs, run, result, bool(candidates))
        return False

    def _finish(
        self, opened: OpenRun, docs: DocumentStore, run: _Run, result: WalkResult, known: bool
    ) -> None:
        """Store the agent's run (a new trajectory, or a branch after the steps already
        performed) unless a tool raised in it, and journal the outcome."""
        agent_steps = len(run.steps) - len(result.performed)
        if run.failed is not None:
            warnings.warn(
                f"not stored: tool {run.failed!r} raised during the agent's run",
                RuntimeWarning,
                stacklevel=5,
            )
            _journal(opened, Outcome.AGENT_FAILED, run.tags, result, agent_steps)
            return
        stored = None
        if run.steps:
            branch = result.followed if result.performed else None
            stored = docs.add(
                Trajectory(
                    id=0,
                    tags=run.tags,
                    steps=run.steps,
                    created=now(),
                    branch_of=branch.id if branch is not None else None,
                    branch_step=len(result.performed) if branch is not None else None,
                )
            )
        outcome = Outcome.HEALED if known else Outcome.RECORDED
        _journal(opened, outcome, run.tags, result, agent_steps, stored)

    # ---- metrics (muscle-mem's engine-level shortcuts) -----------------------------------

    def enable_metrics(self) -> None:
        self.metrics.enable()

    def disable_metrics(self) -> None:
        self.metrics.disable()

    def report_metrics(self) -> None:
        self.metrics.report()

    def reset_metrics(self) -> None:
        self.metrics.reset()


def _journal(
    opened: OpenRun,
    outcome: Outcome,
    tags: tuple[str, ...],
    result: WalkResult,
    agent_steps: int,
    stored: Trajectory | None = None,
) -> None:
    """The call's line in the history (what `mm ls` counts)."""
    replayed = len(result.hit.steps) if result.hit is not None else len(result.performed)
    fields = {
        "tags": list(tags),
        "trajectory": result.hit.id if result.hit is not None else None,
        "steps_replayed": replayed,
        "agent_steps": agent_steps,
        "stored": stored.id if stored is not None else None,
    }
    opened.journal(outcome, fields, warn=_not_journaled)


def _not_journaled(message: str) -> None:
    # pointed at the engine's caller, past lifecycle's journal and the engine's frames
    warnings.warn(f"engine call: {message}", RuntimeWarning, stacklevel=8)


def _bucket(tags: Any) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise TypeError("tags must be a list of strings, e.g. tags=['invoices']")
    return tuple(tags)


def _params(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
        raise TypeError("params must be a dict with string keys, e.g. params={'name': 'John'}")
    return dict(params)
