"""The `mm` command: parse, call one core function, render.

- `fastact`: the entry point; `mm act` under a recorder without typer's start-up cost.
- `app`: the typer app and its commands; `act`: `mm act`; `llm`: the model-API side;
  `fleet`: `mm worker`, `mm batch`.
- `parser`: one-line parser errors, root options anywhere; `options`: shared options and
  settings; `output`: `fail` (an error as one line and an exit code) and rich output.
- `reference`: docs/cli.md, generated from the app.

Nothing is imported here: `mm act` must not load typer, rich or numpy.

May import: everything.
"""
