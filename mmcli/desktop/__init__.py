"""The machine `mm` runs on, beside the screen-and-input backends (`mmcli.backends`).

- `display`: one `mm` drives a display at a time; a virtual one on demand.
- `clipboard`: the X clipboard, read when an agent pastes.
- `input_events`, `input_watch`: the display's own input events, accounted for against
  what the recording channels reported.
- `agent`: running the agent command.

May import: the vocabulary, `screen`, `store`, `readback`.
"""
