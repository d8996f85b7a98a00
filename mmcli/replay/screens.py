"""The recorded screens a replay compares with: each step's thumbnail decoded (the last
few kept), the references the `regions` matcher needs, masked as the step is, and the
screens the paths ended on."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence

import numpy as np

from mmcli.model import Recording, Step
from mmcli.replay.tree import SEEN_REACH, Tree
from mmcli.screen.analysis import blank
from mmcli.screen.fingerprint import Rect
from mmcli.screen.matcher import Policy, References
from mmcli.store.recordings import Store
from mmcli.store.thumbnails import Prefetched, describe, load_outcome, load_reference

DECODED = 2 * SEEN_REACH + 16
"""Recorded screens kept decoded (the ones around the step being replayed)."""
PREPARED = 16
"""Steps whose masked references are kept (the children of the last few nodes)."""

_MISSING = np.zeros((0, 0, 3), np.uint8)
"""A step whose thumbnail is gone: a screen of no size, which the seen-state rule skips."""


class _MaskedScreens(Sequence[np.ndarray]):
    """The recorded screens of some steps, decoded and masked when looked at (most checks
    never look at them: only a changed region does); not kept masked, to bound memory."""

    def __init__(self, screens: RecordedScreens, steps: list[Step], masks: list[Rect]) -> None:
        self._screens = screens
        self._steps = steps
        self._masks = masks

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        screen = self._screens.reference(self._steps[i])
        return _MISSING if screen is None else blank(screen, self._masks)

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self._steps)))


class RecordedScreens:
    def __init__(
        self, store: Store, recording: Recording, tree: Tree, ignore: Sequence[Rect]
    ) -> None:
        self.store = store
        self.thumbnails = Prefetched(store, recording.name, recording.thumbnail_names())
        """Every thumbnail the recording names, read before the first action."""
        self.recording = recording
        self.tree = tree
        self.ignore = list(ignore)
        """Regions the run ignores besides the recording's own."""
        self._references: OrderedDict[int, np.ndarray | None] = OrderedDict()
        self.problems: dict[int, str] = {}
        """Steps whose thumbnail cannot serve as their recorded screen, and why."""
        self._warned: set[int] = set()
        self._prepared: OrderedDict[int, References] = OrderedDict()
        self._outcomes: dict[int, np.ndarray | None] = {}

    def reference(self, step: Step) -> np.ndarray | None:
        """The recorded downscaled screen of `step`, from its thumbnail (None if gone);
        the last `DECODED` are kept."""
        if step.id in self._references:
            self._references.move_to_end(step.id)
            return self._references[step.id]
        loaded = load_reference(self.thumbnails, self.recording.name, step)
        image = loaded.screen
        if loaded.problem is not None:
            self.problems[step.id] = loaded.problem
        self._references[step.id] = image
        if len(self._references) > DECODED:
            self._references.popitem(last=False)
        return image

    def outcome(self, end: Step) -> np.ndarray | None:
        """The recorded screen `end`'s path ended on (None if gone), kept."""
        if end.id not in self._outcomes:
            self._outcomes[end.id] = load_outcome(self.thumbnails, self.recording.name, end).screen
        return self._outcomes[end.id]

    def references(self, step: Step) -> References:
        """Recorded screens for the `regions` matcher, masked as the step is (the last
        `PREPARED` kept). The path's screens are decoded and masked when first needed."""
        if step.id in self._prepared:
            self._prepared.move_to_end(step.id)
            return self._prepared[step.id]
        this = self.reference(step)
        masks = [*step.fingerprint.masks, *self.recording.ignore, *self.ignore]
        prepared = References()
        if this is not None:
            path = self.tree.path_through(step)
            prepared = References(
                blank(this, masks),
                _MaskedScreens(self, [other for other, _ in path], masks),
                [typed for _, typed in path],
            )
        self._prepared[step.id] = prepared
        if len(self._prepared) > PREPARED:
            self._prepared.popitem(last=False)
        return prepared

    def checkable(self, children: list[Step], policy: Policy) -> tuple[list[Step], list[str]]:
        """The children that may be acted on, and a warning for each child not warned of
        before whose thumbnail is missing or unreadable: it can be checked with the coarse
        grid only, and under `--policy strict` it is never acted on."""
        strict = policy is Policy.STRICT
        out, warnings = [], []
        for child in children:
            self.reference(child)
            problem = self.problems.get(child.id)
            if problem is not None and child.id not in self._warned:
                self._warned.add(child.id)
                then = (
                    "--policy strict does not act on it"
                    if strict
                    else "checking with the coarse grid only"
                )
                warnings.append(f"{describe(self.recording.name, child, problem)}; {then}")
            if problem is None or not strict:
                out.append(child)
        return out, warnings

    def problems_of(self, children: list[Step]) -> str:
        """Why none of `children` can be checked in full."""
        return "; ".join(describe(self.recording.name, c, self.problems[c.id]) for c in children)
