"""Replay: walking a recording and acting only on screens that match.

- `replayer`: the walk, the checks before each action, the hand-over to the agent.
- `outcome`: after the last action, waiting for the screen to show a trusted outcome.
- `batch`: one replay per CSV row.

May import: the vocabulary, `screen`, `store`, `desktop`, `backends`, `capture`.
"""
