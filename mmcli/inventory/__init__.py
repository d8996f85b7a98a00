"""What is in a store, across every kind of document, and the commands that manage it.

- `kinds`: the kinds of document (screen recording, SDK, model API) in one table.
- `catalog`: what `mm ls` and `mm show` report; `report`: the HTML page.
- `manage`: `mm rm`, `mv`, `export`, `import`; `prune`: `mm prune`'s plan.
- `approve`: `mm approve`, trusting a branch that ended on a new outcome.
- `doctor`: `mm doctor`'s checks.

May import: the vocabulary, `screen`, `store`, `readback`, `desktop`, `backends`, `llm`, `sdk`.
"""
