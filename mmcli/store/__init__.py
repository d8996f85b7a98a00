"""Persistence: documents as text, and where their bytes live.

- `validate`: what a recording may ask for, checked in full when it is loaded; the
  reading of every kind of document's TOML and its version check.
- `codec`: text <-> recording (versioned TOML); `skim`: what `mm ls` reads of one fast.
- `objects`: where a store's bytes live, one small interface: a local `Folder` (through
  `storefs`: never through a link, written atomically) or an S3 bucket (`s3`);
  `conditions`: whether a server honours conditional writes; `locking`.
- `recordings`: the store (`Store`): recordings, thumbnails and history on disk.
- `journal`: a shared store's history, an object per entry, compacted safely.
- `index`: the listing index; `inuse`: a recording marked in use by a run.
- `lifecycle`: one run of a recording, for every kind and engine: its target checked,
  the recording marked in use throughout, its history line built in one place.
- `thumbnails`: a step's thumbnail read back as its recorded screen.

May import: the vocabulary, `screen`.
"""
