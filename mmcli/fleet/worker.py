"""`mm worker`: a Temporal worker on this display, replaying one row at a time.

Two threads: Temporal's (its own event loop: polls the recordings' task queues, heartbeats
every second for the row under way) and the main one, which owns the display and the
signals and runs each row through `mmcli.replay.batch.run_row` and the replay verb
(`verbs.replay.replay_named`), the code path of `mm replay --params-file`. A row's
committing step is claimed in the store first (`claims.Claim` as the replay's
`before_commit`); an attempt that finds the claim there acts on nothing and reports the
row "claimed" (outcome unknown).

Ctrl-C or SIGTERM stops the worker after the row under way (a replay stops between two
actions): a row not claimed yet is handed back to Temporal and runs on another worker.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import queue
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from mmcli.backends.base import Backend
from mmcli.desktop.allowed import RecordedAgents
from mmcli.errors import Aborted, ExitCode, MMError
from mmcli.fleet.claims import Claim, describe, held
from mmcli.fleet.workflow import RowTask
from mmcli.params import Values, listed
from mmcli.replay.batch import RowResult, row_params, run_row
from mmcli.replay.replayer import ReplayOptions
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named

Progress = Callable[[str], None]
HEARTBEAT_EVERY = 1.0


def default_worker_id(display: str | None = None) -> str:
    """HOST:DISPLAY-PID, the display the worker drives (`--display`, else $DISPLAY)."""
    shown = display or os.environ.get("DISPLAY", "")
    return f"{socket.gethostname()}{shown}-{os.getpid()}"


@dataclass
class _Job:
    task: RowTask
    attempt: int
    done: concurrent.futures.Future[dict[str, Any]] = field(
        default_factory=concurrent.futures.Future
    )
    cancelled: bool = False


@dataclass
class WorkerSettings:
    names: Sequence[str]
    address: str
    namespace: str
    worker_id: str
    options: ReplayOptions
    """How rows replay; `agent` None with `use_recorded_agent`: each recording's own."""
    use_recorded_agent: bool
    values: Values
    before_each: str | None = None
    commit_steps: int | None = None
    """`--commit-steps`: over each recording's own declaration (None: the recording's)."""
    allow_agents: tuple[str, ...] = ()
    """`--allow-agent`: the recorded agent commands this worker runs on a divergence
    (none allowed: a row that diverges stops there)."""


class FleetWorker:
    def __init__(
        self, store: Store, backend: Backend, settings: WorkerSettings, say: Progress
    ) -> None:
        self.store = store
        self.backend = backend
        self.settings = settings
        self.say = say
        self.jobs: queue.Queue[_Job] = queue.Queue()
        self.stopping = threading.Event()
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.lost: BaseException | None = None
        self.rows = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_polling: asyncio.Event | None = None
        for name in settings.names:
            if not store.exists(name):
                raise store.not_found(name)

    # ---- the main thread ----------------------------------------------------------------

    def serve(self) -> int:
        """Run rows until Ctrl-C/SIGTERM; the number of rows run."""
        thread = threading.Thread(target=self._temporal, name="temporal", daemon=True)
        with self._signals():
            thread.start()
            self.ready.result()
            queues = ", ".join(f"mm-{n}" for n in self.settings.names)
            self.say(
                f"worker {self.settings.worker_id}: taking rows from {queues} on Temporal at "
                f"{self.settings.address}; Ctrl-C stops"
            )
            try:
                while not self.stopping.is_set():
                    try:
                        job = self.jobs.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    if not job.cancelled:
                        self._run_safely(job)
                if self.lost is not None:
                    raise MMError(f"lost Temporal at {self.settings.address}: {self.lost}")
            finally:
                self._hand_back()
                if self._loop is not None and self._stop_polling is not None:
                    with contextlib.suppress(RuntimeError):  # its loop ended already
                        self._loop.call_soon_threadsafe(self._stop_polling.set)
                thread.join(timeout=30)
                self.say(f"worker {self.settings.worker_id}: stopped after {self.rows} rows")
        return self.rows

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        def stop(signum: int, frame: object) -> None:
            self.stopping.set()

        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _hand_back(self) -> None:
        """Rows taken but not started go back to Temporal, for another worker."""
        from temporalio.exceptions import ApplicationError

        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                return
            job.done.set_exception(ApplicationError("the worker stopped before this row"))

    def _run_safely(self, job: _Job) -> None:
        """`_run`; a failure before the replay (the store unreachable, the recording
        unreadable) fails this attempt only: Temporal retries the row."""
        from temporalio.exceptions import ApplicationError

        try:
            self._run(job)
        except MMError as e:
            self.say(f"row {job.task.row} of batch {job.task.batch}: {e}")
            if not job.done.done():
                job.done.set_exception(ApplicationError(str(e)))
        except BaseException as e:
            if not job.done.done():
                job.done.set_exception(ApplicationError(f"the worker failed: {e}"))
            raise

    def _run(self, job: _Job) -> None:
        from temporalio.exceptions import ApplicationError

        task = job.task
        objects = self.store.objects
        secrets = self.settings.values.secrets
        visible = {k: task.params[k] for k in sorted(task.params) if k not in secrets}
        shown = row_params(task.columns, visible, None)
        where = f"row {task.row} of batch {task.batch}"
        there = held(objects, task.batch, task.row)
        if there is not None:  # a retry after a worker was lost having claimed the row
            detail = f"{describe(there)} before attempt {job.attempt}: not acted on again"
            self.say(f"{where}: claimed, outcome unknown ({detail})")
            job.done.set_result(self._result(task, shown, "claimed", ExitCode.ERROR, detail))
            return
        self.say(f"{where} (attempt {job.attempt}): {listed(shown)}")
        claim = Claim(objects, task.batch, task.row, self.settings.worker_id, job.attempt)
        recording = self.store.load(task.recording)
        values = self.settings.values.merged(task.params, recording.secrets)
        options = replace(self._options(recording), before_commit=claim)
        try:
            result = run_row(
                task.row,
                values,
                shown,
                self.settings.before_each,
                partial(
                    replay_named,
                    self.store,
                    self.backend,
                    task.recording,
                    values,
                    options,
                    self.say,
                ),
            )
        except Aborted:
            self.stopping.set()
            if claim.taken:
                detail = "the worker was stopped after claiming the row: outcome unknown"
                job.done.set_result(self._result(task, shown, "claimed", ExitCode.ABORTED, detail))
            else:
                job.done.set_exception(ApplicationError("the worker was stopped mid-row"))
            return
        if self.stopping.is_set() and not claim.taken and not result.ok:
            # Ctrl-C reached `--before-each` or the replay before the claim: nothing was
            # committed, the row is another worker's to run.
            job.done.set_exception(ApplicationError("the worker was stopped mid-row"))
            return
        self.rows += 1
        if claim.found is not None:
            detail = f"{describe(claim.found)}: not acted on; outcome unknown"
            result = RowResult(task.row, shown, "claimed", ExitCode.ERROR, detail)
        self.say(f"{where}: {result.outcome}" + (f" ({result.detail})" if result.detail else ""))
        job.done.set_result(
            self._result(task, shown, result.outcome, result.exit_code, result.detail)
        )

    def _options(self, recording: Any) -> ReplayOptions:
        """The row's options: the committing steps the worker was given, else those the
        recording declares, else its last action; the recording's own agent only where the
        worker allows it (`--allow-agent`), unless it names one or none."""
        steps = self.settings.commit_steps or recording.commit_steps or 1
        options = replace(self.settings.options, commit_steps=steps)
        if self.settings.use_recorded_agent:
            # Whoever writes the bucket writes the command: it runs only if allowed here.
            rule = RecordedAgents.of(self.settings.allow_agents, checked=True)
            agent, cwd, refused = rule.command(recording)
            if refused:
                self.say(f"{recording.name}: {refused}")
            return replace(options, agent=agent, agent_cwd=cwd)
        return options

    def _result(
        self, task: RowTask, shown: dict[str, str], outcome: str, code: ExitCode, detail: str
    ) -> dict[str, Any]:
        return {
            "batch": task.batch,
            "row": task.row,
            "params": shown,
            "outcome": outcome,
            "exit_code": int(code),
            "detail": detail,
            "worker": self.settings.worker_id,
        }

    # ---- Temporal's thread --------------------------------------------------------------

    def _temporal(self) -> None:
        try:
            asyncio.run(self._poll())
        except BaseException as e:  # reported to the main thread, which stops
            if not self.ready.done():
                self.ready.set_exception(e)
            self.lost = e

    async def _poll(self) -> None:
        from temporalio import activity
        from temporalio.worker import Worker

        from mmcli.fleet.batches import connect
        from mmcli.fleet.workflow import ACTIVITY, RowWorkflow, task_queue

        jobs = self.jobs

        @activity.defn(name=ACTIVITY)
        async def replay_row(task: RowTask) -> dict[str, Any]:
            job = _Job(task, activity.info().attempt)
            jobs.put(job)
            try:
                while not job.done.done():
                    activity.heartbeat()
                    await asyncio.sleep(HEARTBEAT_EVERY)
            except asyncio.CancelledError:
                job.cancelled = True  # not started yet: never will be; under way: claimed
                raise
            return job.done.result()

        settings = self.settings
        client = await connect(settings.address, settings.namespace, settings.worker_id)
        workers = [
            Worker(
                client,
                task_queue=task_queue(name),
                workflows=[RowWorkflow],
                activities=[replay_row],
                max_concurrent_activities=1,
            )
            for name in settings.names
        ]
        self._loop = asyncio.get_running_loop()
        self._stop_polling = asyncio.Event()
        self.ready.set_result(None)
        runs = [asyncio.create_task(w.run()) for w in workers]
        stop = asyncio.create_task(self._stop_polling.wait())
        done, _ = await asyncio.wait([stop, *runs], return_when=asyncio.FIRST_COMPLETED)
        if stop not in done:  # a worker ended by itself: the server went away
            self.stopping.set()
            failed = next(iter(done)).exception()
            self.lost = failed or MMError("the worker stopped polling")
        await asyncio.gather(*(w.shutdown() for w in workers), return_exceptions=True)
        await asyncio.gather(*runs, return_exceptions=True)
