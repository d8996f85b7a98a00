"""Replaying stored trajectories, step by step, on the live environment.

The walk keeps the candidates that are still *alive*: trajectories of the tag bucket
whose first k calls are exactly the k calls performed so far, and whose own pre- and
post-checks passed on the live environment at each of those steps. At step k:

1. A candidate with exactly k steps is complete: every one of its steps was performed and
   verified. That is a hit.
2. Otherwise each alive candidate's step-k pre-check is judged *now* (captures are shared
   between candidates making the same call). None passes: the walk stops (at step 0 a
   plain miss; later, a divergence). The first that passes decides the call; the
   candidates making the same call whose pre-check passed stay alive, the rest drop out.
3. The call is performed; the post-check, if the tool has one, keeps the candidates whose
   stored post-capture matches. None matches: the walk stops.

So a hit always means one recorded trajectory performed from its first step to its last,
and two trajectories are never spliced into a sequence that was never recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mmcli.errors import RecordingCorrupt
from mmcli.sdk.check import Check
from mmcli.sdk.document import StepRecord, Trajectory
from mmcli.sdk.errors import UnknownClass
from mmcli.sdk.metrics import Metrics
from mmcli.sdk.tools import MissingParam, Tool, ToolRegistry, call_key, resolve_call
from mmcli.sdk.values import Codec


@dataclass
class WalkResult:
    hit: Trajectory | None
    """The trajectory performed in full, or None."""
    performed: list[StepRecord] = field(default_factory=list)
    """The calls performed, with the captures taken now (the prefix of a branch)."""
    followed: Trajectory | None = None
    """On a divergence, the trajectory the walk was following."""


@dataclass
class Walk:
    registry: ToolRegistry
    codec: Codec
    metrics: Metrics
    params: Mapping[str, Any]
    context: Any
    source: str
    """The document's path, for error messages."""
    sleep: Callable[[float], None] = time.sleep

    def run(self, candidates: list[Trajectory]) -> WalkResult:
        with self.metrics.measure("filter", "partials"):
            alive = [t for t in candidates if t.steps and self._usable(t)]
        result = WalkResult(None)
        k = 0
        while alive:
            done = [t for t in alive if len(t.steps) == k]
            if done:
                result.hit = done[0]
                return result
            picked = self._pre(alive, k)
            if picked is None:
                break
            chosen, group, pre = picked
            step = chosen.steps[k]
            tool = self._tool(step)
            args, kwargs = self._resolve(step)
            tool.func(*args, **kwargs)
            alive, post = self._post(tool, group, k, args, kwargs)
            result.performed.append(replace(step, pre=pre, post=post))
            result.followed = chosen
            k += 1
        return result

    # ---- candidates ----------------------------------------------------------------------

    def _usable(self, t: Trajectory) -> bool:
        """Every call of `t` has its tool registered (unchanged) and its params given."""
        for step in t.steps:
            if self.registry.get(step) is None:
                return False
            if not step.params() <= set(self.params):
                return False
            if step.method and self.context is None:
                return False
        return True

    def _tool(self, step: StepRecord) -> Tool:
        tool = self.registry.get(step)
        assert tool is not None  # _usable kept only steps with a registered tool
        return tool

    def _resolve(self, step: StepRecord) -> tuple[tuple[Any, ...], dict[str, Any]]:
        try:
            return resolve_call(self.codec, step, self.params, self.context)
        except ValueError as e:
            raise RecordingCorrupt(f"{self.source}: {step.tool}: {e}") from None

    def _stored(self, data: Any) -> Any:
        try:
            return self.codec.decode(data)
        except ValueError as e:
            raise RecordingCorrupt(f"{self.source}: a stored snapshot: {e}") from None

    # ---- pre-checks ----------------------------------------------------------------------

    def _pre(
        self, alive: list[Trajectory], k: int
    ) -> tuple[Trajectory, list[Trajectory], Any] | None:
        """The candidate to follow at step k, those making the same call whose pre-checks
        passed, and the encoded capture; None when no pre-check passes in time."""
        pending = [t for t in alive if len(t.steps) > k]
        checks = [c for t in pending if (c := self._tool(t.steps[k]).pre_check) is not None]
        deadline = time.monotonic() + max((c.timeout for c in checks), default=0.0)
        phase = ("filter",) if k == 0 else ("runtime", "precheck")
        while True:
            memo: dict[str, Any] = {}
            passing = [t for t in pending if self._pre_passes(t.steps[k], memo, phase)]
            if passing:
                key = call_key(self.codec, passing[0].steps[k], self.params)
                group = [t for t in passing if call_key(self.codec, t.steps[k], self.params) == key]
                check = self._tool(passing[0].steps[k]).pre_check
                pre = None
                if check is not None:
                    pre = self.codec.encode(memo[key], f"tool {passing[0].steps[k].tool!r}")
                return passing[0], group, pre
            if time.monotonic() >= deadline:
                return None
            self.sleep(min(c.interval for c in checks))

    def _pre_passes(self, step: StepRecord, memo: dict[str, Any], phase: tuple[str, ...]) -> bool:
        check = self._tool(step).pre_check
        if check is None:
            return True
        try:
            key = call_key(self.codec, step, self.params)
            if key not in memo:
                args, kwargs = self._resolve(step)
                with self.metrics.measure(*phase, "capture"):
                    memo[key] = check.capture(*args, **kwargs)
            stored = self._stored(step.pre)
        except (MissingParam, UnknownClass):
            return False
        with self.metrics.measure(*phase, "compare"):
            return check.passes(memo[key], stored)

    # ---- post-checks ---------------------------------------------------------------------

    def _post(
        self,
        tool: Tool,
        group: list[Trajectory],
        k: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> tuple[list[Trajectory], Any]:
        """The candidates whose post-check passes after step k, and the encoded capture."""
        check: Check[..., Any] | None = tool.post_check
        if check is None:
            return group, None
        deadline = time.monotonic() + check.timeout
        while True:
            with self.metrics.measure("runtime", "postcheck", "capture"):
                current = check.capture(*args, **kwargs)
            passing = [t for t in group if self._post_passes(check, current, t.steps[k])]
            if passing or time.monotonic() >= deadline:
                return passing, self.codec.encode(current, f"tool {tool.name!r}, post_check")
            self.sleep(check.interval)

    def _post_passes(self, check: Check[..., Any], current: Any, step: StepRecord) -> bool:
        try:
            stored = self._stored(step.post)
        except UnknownClass:
            return False
        with self.metrics.measure("runtime", "postcheck", "compare"):
            return check.passes(current, stored)
