"""The `mm` command: parse, call one core function, render.

- `fastact`: the entry point; `mm act` under a recorder without typer's start-up cost.
- `app`: the typer app and every command; `llm`: the commands' model-API side.
- `reference`: docs/cli.md, generated from the app.

Nothing is imported here: `mm act` must not load typer, rich or numpy.

May import: everything.
"""
