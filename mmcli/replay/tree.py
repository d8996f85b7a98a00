"""The recording's tree as a replay walks it: a node's children (trusted branches
first), the chain recorded first below a step, the recorded path through a step with
where the task typed along it, and whether a path typed a secret."""

from __future__ import annotations

from mmcli.model import ActionKind, Recording, Step
from mmcli.screen.fingerprint import Rect

SEEN_REACH = 48
"""The seen-state rule looks this many steps up and down the recorded path, no further:
a step's check costs the same in a recording of any length."""


def _typed_by(step: Step) -> list[Rect]:
    """Where the step's own typing changed the screen."""
    if step.action.kind is ActionKind.TYPE and step.effect is not None:
        return [step.effect]
    return []


def _with(typed: tuple[Rect, ...], more: list[Rect]) -> tuple[Rect, ...]:
    """`typed` and `more`, each rectangle once (a task types into few fields, often)."""
    new = tuple(r for r in dict.fromkeys(more) if r not in typed)
    return typed + new if new else typed


class Tree:
    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self._kids: dict[int | None, list[Step]] = {}
        self._by_id: dict[int, Step] = {}
        for s in recording.steps:
            self._kids.setdefault(s.parent, []).append(s)
            self._by_id[s.id] = s
        # Each parent's first child as recorded (`mm show`'s order), before the sort.
        self._first = {parent: kids[0].id for parent, kids in self._kids.items()}
        for kids in self._kids.values():
            kids.sort(key=lambda s: s.pending)  # trusted branches are looked at first
        self._chain_lengths: dict[int, int] = {}
        self._branches: dict[int, int | None] = {}

    def step(self, step_id: int) -> Step:
        return self._by_id[step_id]

    def children(self, node: int | None) -> list[Step]:
        return self._kids.get(node, [])

    def chain_below(self, step: Step, limit: int | None = None) -> list[Step]:
        """The steps that followed `step` first when it was recorded (the first `limit`)."""
        chain: list[Step] = []
        kids = self.children(step.id)
        while kids and (limit is None or len(chain) < limit):
            chain.append(kids[0])
            kids = self.children(kids[0].id)
        return chain

    def chain_length(self, step: Step) -> int:
        """len(self.chain_below(step)), remembered."""
        if step.id not in self._chain_lengths:
            chain = self.chain_below(step)
            for i, below in enumerate([step, *chain]):
                self._chain_lengths.setdefault(below.id, len(chain) - i)
        return self._chain_lengths[step.id]

    def branch_of(self, step: Step) -> int | None:
        """The id of the branch `step` is on, as `mm show` marks it (`Recording.branch_of`),
        remembered; None on the trunk."""
        path: list[Step] = []
        node: Step | None = step
        found: int | None = None
        while node is not None:
            if node.id in self._branches:
                found = self._branches[node.id]
                break
            if self._first.get(node.parent) != node.id:
                found = self._branches[node.id] = node.id
                break
            path.append(node)
            node = self._by_id.get(node.parent) if node.parent is not None else None
        for passed in path:
            self._branches[passed.id] = found
        return found

    def trunk_length(self) -> int:
        roots = self.children(None)
        return 1 + self.chain_length(roots[0]) if roots else 0

    def path_through(self, step: Step) -> list[tuple[Step, list[Rect]]]:
        """The other steps of the recorded path through `step` (its ancestors and the
        steps that followed it first, the nearest `SEEN_REACH` each way), each with where
        the task typed between that step's screen and `step`'s."""
        path: list[tuple[Step, list[Rect]]] = []
        typed: tuple[Rect, ...] = ()
        parent = step.parent
        while parent is not None and len(path) < SEEN_REACH:
            ancestor = self._by_id[parent]
            typed = _with(typed, _typed_by(ancestor))
            path.append((ancestor, list(typed)))
            parent = ancestor.parent
        typed = _with((), _typed_by(step))
        for below in self.chain_below(step, SEEN_REACH):
            path.append((below, list(typed)))
            typed = _with(typed, _typed_by(below))
        return path

    def secret_typed(self, node: int | None) -> bool:
        """Whether a step on the path to `node` typed a secret (the screen may show it)."""
        secrets = set(self.recording.secrets)
        while node is not None and secrets:
            step = self.recording.step(node)
            if step.action.params_used() & secrets:
                return True
            node = step.parent
        return False
