"""Replay: walking a recording and acting only on screens that match.

- `replayer`: the walk, the checks before each action, the hand-over to the agent.
- `batch`: one replay per CSV row.

May import: the vocabulary, `screen`, `store`, `desktop`, `backends`, `capture`.
"""
