"""The outcome check's judgement: does a settled screen show the outcome a path of the
recording ended on?

An outcome is judged like a step's screen (the same matchers, policies, masks for typed
params and their echoes, volatile and ignored regions, the task area) but it has no
target: nothing is about to be clicked, so what is judged is the task area as the last
action left it, a status line that says "Saved" or "Upload failed" included.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mmcli.screen.fingerprint import Fingerprint, Frame, Rect
from mmcli.screen.matcher import Policy, References, Verdict, compare
from mmcli.screen.relocate import Offset, shifted


def judge_outcome(
    recorded: Fingerprint,
    reference: np.ndarray | None,
    frame: Frame,
    *,
    policy: Policy = Policy.DEFAULT,
    ignore: Sequence[Rect] = (),
    area: Rect | None = None,
    workarea: Rect | None = None,
    offset: Offset = (0, 0),
    left_out: Sequence[Rect] = (),
    moved_windows: Sequence[Rect] = (),
    task_windows: Sequence[Rect] = (),
) -> Verdict:
    """`frame` (a settled screen) against a recorded outcome, whose downscaled screen
    `reference` comes from its thumbnail (None: the coarse grid alone judges). With an
    `offset` (`--relocate`), the task is looked at where it moved to (`moved_windows`:
    its windows' frames there). `left_out`: windows the `regions` check leaves out
    (`windows.left_out`); `task_windows`: the client areas of the task's windows, all
    inside the task."""
    view = shifted(frame, offset) if offset != (0, 0) else frame
    masks = [*recorded.masks, *ignore]
    return compare(
        recorded,
        view,
        policy,
        ignore,
        area=area,
        references=References.prepare(reference, [], masks),
        pointer_step=True,
        workarea=workarea,
        unmoved=frame if offset != (0, 0) else None,
        offset=offset,
        left_out=left_out,
        moved_windows=moved_windows,
        task_windows=task_windows,
    )
