"""The screen: what is kept of it and how a live one is compared with a recorded step.

- `fingerprint`: the values: frames, fingerprints (grid, patch) and rectangles.
- `analysis`: image analysis: a fingerprint computed from a frame, changed regions, text
  runs, templates.
- `matcher`: the named matchers and policies that judge a live screen against a step.
- `excuses`: the `regions` matcher's named rules for a harmless change, run in order.
- `carets`: telling a blinking caret from a glyph by its ink.
- `explain`: the one-sentence reason for a divergence.
- `relocate`: finding a window that moved since it was recorded, by its pixels.
- `placement`: with `--relocate`, each of the task's windows judged where it stands.
- `windows`: the desktop's window structure as the window system tells it (the window a
  step acted in; a moved window found by its class and size; a new window judged by its
  type and place: a notification over no target left out of the check).
- `echoes`: where a typed value shows again besides its field (in its font or another),
  and the lines of text a changed region holds.
- `counts`: a line off the typed field that counts what was typed (a status bar's
  "30 characters"), let differ where its numbers moved by the typed values' length.
- `paint`: painting over what may show a secret in a kept screen (a thumbnail).
- `outcome`: whether a settled screen shows the outcome a path of the recording ended on.

May import: the vocabulary (`errors`, `model`, `params`).
"""
