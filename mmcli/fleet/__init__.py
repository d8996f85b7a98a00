"""A fleet: the rows of a batch spread over workers, each on its own display, on Temporal.

- `claims`: the create-only claim written to the store before a row's committing step.
- `workflow`: the one workflow a row is (Temporal's side; kept free of everything else so
  that Temporal's sandbox can load it).
- `batches`: a batch's manifest in the store, submitting its rows, reporting its progress.
- `worker`: `mm worker`: a Temporal worker that replays one row at a time on this display.

`temporalio` is imported only here, and only by the fleet commands.

May import: the vocabulary, `store`, `desktop`, `backends`, `replay`, `verbs` (a row is
replayed through the replay verb, which opens its run).
"""
