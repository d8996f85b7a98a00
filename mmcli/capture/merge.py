"""Merging a new run of a task into its recording's tree (`mm record NAME --add`).

The new run is a path of steps. It shares a prefix with the tree as long as, step by
step, some child of the current node did the same action on the same screen; where it
stops sharing, the rest of the run becomes a branch there. A run the tree already holds
whole adds nothing. "The same screen" is judged between two fingerprints (no live frame
here): every grid tile within the policy's tolerance, outside masked regions, and the
target patches alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from mmcli.model import Recording, Step
from mmcli.screen.fingerprint import Fingerprint, Rect
from mmcli.screen.matcher import Policy


@dataclass(frozen=True)
class Merged:
    recording: Recording
    shared: int
    """Steps of the new run the tree already had."""
    added: list[Step]
    """The new run's steps that became a branch (renumbered), empty when none."""

    @property
    def branch_at(self) -> int:
        """0-based step number where the new branch starts."""
        return self.shared


def same_screen(a: Fingerprint, b: Fingerprint, masks: Sequence[Rect] = ()) -> bool:
    if (a.width, a.height) != (b.width, b.height):
        return False
    tol = Policy.DEFAULT.tolerance
    dist = a.grid - b.grid
    for i, (bits, tone, detail) in enumerate(zip(dist.bits, dist.tone, dist.detail, strict=True)):
        if bits <= tol.tile_bits and tone <= tol.tile_tone and detail <= tol.tile_detail:
            continue
        region = dist.tile_rect(i, a.width, a.height)
        if not any(region.intersects(m) for m in (*masks, *a.masks, *b.masks)):
            return False
    if a.patch is not None and b.patch is not None:
        if (a.patch.x, a.patch.y) != (b.patch.x, b.patch.y):
            return False
        d = a.patch.distance(b.patch, core=True)
        return d.cells <= tol.patch_cells and d.max_delta <= tol.patch_delta
    return (a.patch is None) == (b.patch is None)


def merge(recording: Recording, run: Sequence[Step]) -> Merged:
    """`recording` with `run` (a path whose first step has parent None) merged in."""
    masks = [*recording.ignore, *recording.volatile]
    parent: int | None = None
    shared = 0
    for step in run:
        twin = next(
            (
                c
                for c in recording.children(parent)
                if c.action == step.action and same_screen(c.fingerprint, step.fingerprint, masks)
            ),
            None,
        )
        if twin is None:
            break
        parent = twin.id
        shared += 1
    rest = list(run[shared:])
    if not rest:
        return Merged(recording, shared, [])
    first_id = recording.next_id()
    ids = {s.id: first_id + i for i, s in enumerate(rest)}
    added = [
        replace(s, id=ids[s.id], parent=parent if i == 0 else ids[s.parent])  # type: ignore[index]
        for i, s in enumerate(rest)
    ]
    merged = replace(recording, steps=[*recording.steps, *added])
    return Merged(merged, shared, added)
