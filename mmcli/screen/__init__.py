"""The screen: what is kept of it and how a live one is compared with a recorded step.

- `fingerprint`: frames, fingerprints, rectangles and changed regions.
- `matcher`: the named matchers and policies that judge a live screen against a step.
- `explain`: the one-sentence reason for a divergence.
- `relocate`: finding a window that moved since it was recorded, by its pixels.
- `windows`: the desktop's window structure as the window system tells it (the window a
  step acted in; a moved window found by its class and size).
- `paint`: painting over what may show a secret in a kept screen (a thumbnail).
- `outcome`: whether a settled screen shows the outcome a path of the recording ended on.

May import: the vocabulary (`errors`, `model`, `params`).
"""
