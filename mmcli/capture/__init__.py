"""Recording: hearing an agent's actions and turning a finished run into steps.

- `recorder`: the socket every channel reports to; the settled screen before each action.
- `shim`: the `xdotool` first on a recorded agent's PATH (a shell front for hook/'s).
- `vnc`: an agent's own VNC client, heard through its endpoint (`MM_VNC_ADDRESS`).
- `steps`: a finished run's captures as steps (effects, placeholders, masks, fingerprints).
- `counts`: the lines typing changed off its field, cropped on each later screen and
  read when the steps are built (`Step.counts`).
- `secrets`: keeping secrets out of what is written (text and pixels).
- `stale`: a heal that typed a param's recorded value where the replay gave another.
- `merge`: a run merged into a recording's tree.
- `integrate`: the one path a finished run takes into the store (record, `--add`, heal).
- `record`: `mm record`, and an agent run under the recorder (`run_recorded`).

May import: the vocabulary, `screen`, `store`, `readback`, `desktop`, `backends`.
"""
