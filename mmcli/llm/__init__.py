"""Muscle memory at the model API: a proxy that keeps the model's answers as a tree keyed by
the conversation, answering from memory while the conversation matches.

- `conversation`: requests and answers in a provider-neutral, comparable form (tool-call
  ids numbered, params as placeholders, screenshots as screens).
- `shapes`: the two API shapes (Anthropic Messages, OpenAI Chat Completions): where the
  conversation is in a request, the answer in a response, and event streams both ways.
- `screens`: a screenshot in a request as a `Frame`, its stored fingerprint and thumbnail.
- `tree`: the recorded exchanges and the walk that finds a request's answer.
- `document`: the stored TOML document (`kind = "llm"`).
- `leaks`: a secret the model typed in pieces, found before a save.
- `proxy`: the HTTP server (only requests carrying its token are answered); `run`:
  `mm record --llm`, `mm replay` of such a recording, `mm proxy`.

May import: the vocabulary, `screen`, `store`, `desktop`, `backends`.
"""
