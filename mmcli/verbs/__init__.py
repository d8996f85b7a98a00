"""The core entry of each verb that runs or reads a recording of any kind: a request in,
a report out. The CLI parses its arguments into the request, calls once and renders.

- `display`: the display a run acts on, opened and held for the run.
- `runners`: what each kind of document does for `record`, `replay` and `show` (one row
  per kind of `inventory.kinds.KINDS`).
- `record`: `mm record`: a screen agent, a person (`--demo`), or the model API (`--llm`).
- `replay`: `mm replay`: a name not recorded yet, one run, or one run per CSV row.
- `show`: `mm show`: a document's tree as data (and its HTML page).
- `sdk`: the run of each call of the Python SDK's `Engine`.

May import: the vocabulary, `screen`, `store`, `desktop`, `backends`, `capture`, `replay`,
`llm`, `sdk`, `inventory`.
"""
