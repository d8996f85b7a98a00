"""Replay: walking a recording and acting only on screens that match.

- `replayer`: `replay()` and the walk down the tree that composes the parts below and
  builds the report in one place.
- `report`: what a replay is asked (`ReplayOptions`) and reports (`ReplayReport`).
- `tree`: the recording's tree as the walk asks it (children, chains, paths).
- `screens`: the recorded screens, decoded and masked as the matcher needs them.
- `judge`: a live screen against a node's children, at the task's offset or moved.
- `counted`: a line that counts what was typed, read where the check differs over it.
- `look`: waiting for a still screen a child matches; Ctrl-C and the fail-safe.
- `act`: acting on the matched step, only if its target is still as checked.
- `divergence`: where and why replay stopped, with the live screen kept.
- `handover`: the agent's run from a divergence, saved as a branch.
- `outcome`: after the last action, waiting for the screen to show a trusted outcome.
- `journal`: the replay's line in the history.
- `batch`: one replay per CSV row.

May import: the vocabulary, `screen`, `store`, `readback`, `desktop`, `backends`, `capture`.
"""
