"""Managing recordings as files: `mm rm`, `mm mv`, `mm export`, `mm import`.

Every kind of store document is handled alike (a CLI recording, an SDK document, a
model-API recording): its TOML is parsed and validated with its own codec, its name field
rewritten when it gets a new name, and its thumbnails (the files in NAME/) go with it.
Everything inside the store is reached through the store's objects (a local store's
never through a link) with the store's per-name lock held; a recording a run (a
replay, a recording, an SDK call) has open is left alone (`lifecycle.free`).

An export is one gzip-compressed tar archive holding `NAME.toml` and `NAME/FILE` for each
thumbnail: the store's own layout. An import treats it as hostile: member names plain,
regular files only (no links, devices or other folders), sizes and counts bounded, the
TOML validated through its codec, before anything is written into the store.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mmcli.errors import (
    MMError,
    RecordingCorrupt,
    RecordingExists,
    RecordingNotFound,
    StoreError,
    UsageError,
)
from mmcli.inventory.kinds import KINDS, kind_named, kind_of_stored
from mmcli.model import plural
from mmcli.store import codec, fields
from mmcli.store.lifecycle import free
from mmcli.store.recordings import (
    SUFFIX,
    Store,
    atomic_write,
    is_valid_name,
    kind_of,
    os_reason,
    validate_name,
)

MAX_MEMBERS = 40_000
"""Files in an archive (a recording keeps one thumbnail per step and one per outcome at
most)."""
MAX_THUMBNAIL = 16 * 1024 * 1024
MAX_ARCHIVE = 512 * 1024 * 1024
"""Bytes of all members together, uncompressed."""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_EXTENDED = 64 * 1024
"""Bytes of one pax or GNU long-name header (`mm export` writes none: its names are short)."""
BLOCK = 512
EXTENDED = (b"x", b"g", b"L", b"K")
"""Tar header types whose body `tarfile` reads whole into memory: pax, GNU long names."""


# ---- one document, any kind -------------------------------------------------------------------


@dataclass
class Document:
    """A parsed and validated store document, ready to be written under any name."""

    kind: str
    parsed: Any
    steps: int
    thumbnails: set[str] = field(default_factory=set)
    """File names in NAME/ the document refers to."""

    @property
    def name(self) -> str:
        return str(self.parsed.name)

    def renamed(self, name: str) -> Document:
        return replace(self, parsed=replace(self.parsed, name=name))

    def dumps(self) -> str:
        return KINDS[self.kind].dumps(self.parsed)


def parse(text: str, source: str) -> Document:
    """The document `text` holds, validated by its kind's codec (`RecordingCorrupt`)."""
    kind = kind_named(kind_of(text), source)
    parsed = kind.loads(text, source)
    return Document(kind.name, parsed, kind.steps(parsed), kind.thumbnails(parsed))


def read(store: Store, name: str) -> Document:
    """NAME's document, parsed and validated; `RecordingNotFound` when there is none."""
    where = store.locate(name)
    doc = parse(store.read_text(name), where)
    if doc.name != name:
        raise RecordingCorrupt(f"{where}: holds recording {doc.name!r}, not {name!r}")
    return doc


def read_thumbnails(store: Store, name: str) -> dict[str, bytes]:
    """The plain files in NAME/ (the replay's `live-` screenshots left out), never
    through a link; {} when there is none."""
    out: dict[str, bytes] = {}
    if not store.thumbs.check(name):  # UnsafePath for a link
        return out
    for file_name in sorted(store.thumbs.names(name)):
        if file_name.startswith(("live-", ".")) or not fields.is_plain_file_name(file_name):
            continue
        data = store.read_thumbnail(name, file_name)
        if data is not None:
            out[file_name] = data
    return out


def write(
    store: Store, doc: Document, thumbnails: dict[str, bytes], *, overwrite: bool = False
) -> None:
    """Write `doc` under its name: thumbnails first, then the document whole; the caller
    holds the name's lock. An existing recording is replaced only with `overwrite`."""
    name = doc.name
    if not overwrite and store.exists(name):
        raise RecordingExists(
            f"recording {name!r} already exists in {store.where}; use --overwrite to replace it"
        )
    store.write_document(name, doc.dumps(), thumbnails, create=not overwrite)
    if overwrite:  # the previous version's thumbnails the new one does not use
        store.thumbs.collect(name, set(thumbnails))


# ---- rm -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Removal:
    """What `mm rm` will delete: a whole recording, or one branch (`branch` = the id of the
    step where it starts)."""

    name: str
    kind: str
    steps: int
    size: int = 0
    branch: int | None = None

    def describe(self) -> str:
        if self.branch is None:
            return (
                f"recording {self.name!r} ({_kind_word(self.kind)}, "
                f"{plural(self.steps, 'step')}, {_size(self.size)})"
            )
        return f"branch {self.branch} of {self.name!r} ({plural(self.steps, 'step')})"

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "what": "recording" if self.branch is None else "branch",
            "branch_id": self.branch,
            "steps": self.steps,
            "size": self.size,
        }


def plan_removal(store: Store, name: str, branch: int | None = None) -> Removal:
    validate_name(name)
    if not store.exists(name):
        raise store.not_found(name, "; see `mm ls`")
    if branch is None:
        try:
            kind = store.kind(name)
            steps = read(store, name).steps
        except (RecordingCorrupt, StoreError):
            kind, steps = "unreadable", 0  # a corrupt file (or a link) is removed by name
        size = _file_size(store, name) + store.thumbs.size(name)
        return Removal(name, kind, steps, size)
    found = kind_of_stored(store, name)
    if not found.branches:
        raise UsageError(f"--branch is for screen recordings; {name!r} is {found.word}")
    from mmcli.inventory.prune import branch_starts, subtree

    recording = store.load(name)
    starts = [s.id for s in branch_starts(recording)]
    if branch not in starts:
        where = f"its branches: {', '.join(map(str, starts))}" if starts else "it has no branches"
        what = "a step of the trunk" if any(s.id == branch for s in recording.steps) else "no step"
        raise UsageError(
            f"{branch} is no branch of {name!r} ({what}): {where} (see `mm show {name}`)"
        )
    return Removal(name, "cli", len(subtree(recording, branch)), branch=branch)


def remove(store: Store, removal: Removal) -> None:
    """Delete what `removal` says; refused while a run has the recording open."""
    with free(store, removal.name):
        if removal.branch is None:
            store.delete(removal.name)
            return
        from mmcli.inventory.prune import subtree

        with store.lock(removal.name):
            recording = store.load(removal.name)
            if not any(s.id == removal.branch for s in recording.steps):
                raise RecordingNotFound(f"branch {removal.branch} of {removal.name!r} is gone")
            gone = subtree(recording, removal.branch)
            recording.steps = [s for s in recording.steps if s.id not in gone]
            store.save(recording)


# ---- mv -----------------------------------------------------------------------------------------


def move(store: Store, old: str, new: str, progress: Callable[[str], None] | None = None) -> int:
    """Rename OLD to NEW (its name field, thumbnails and replay history go with it).
    Returns the number of steps. NEW must not exist."""
    validate_name(old)
    validate_name(new)
    if old == new:
        raise UsageError(f"{old!r} and {new!r} are the same name")
    if not store.exists(old):
        raise store.not_found(old, "; see `mm ls`")
    if store.exists(new):
        raise RecordingExists(
            f"recording {new!r} already exists in {store.where}; `mm rm {new}` first"
        )
    first, second = sorted((old, new))
    with free(store, old), store.lock(first), store.lock(second):
        doc = read(store, old)
        thumbnails = read_thumbnails(store, old)
        write(store, doc.renamed(new), thumbnails)  # both names exist for a moment
        _move_history(store, old, new)
        store.remove_files(old)
    if progress:
        progress(f"renamed {old} to {new}")
    return doc.steps


def _move_history(store: Store, old: str, new: str) -> None:
    store.runs.move(old, new)


# ---- export / import ----------------------------------------------------------------------------


def export(store: Store, name: str, target: Path, *, overwrite: bool = False) -> tuple[int, int]:
    """Write NAME (TOML and thumbnails) to the archive `target`, atomically. Returns
    (steps, thumbnails)."""
    validate_name(name)
    if target.exists() and not overwrite:
        raise RecordingExists(f"{target}: already exists; use --overwrite to replace it")
    with store.lock(name):
        doc = read(store, name)
        thumbnails = read_thumbnails(store, name)
    text = doc.dumps().encode("utf-8")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        _add(tar, name + SUFFIX, text)
        for file_name, data in thumbnails.items():
            _add(tar, f"{name}/{file_name}", data)
    try:
        atomic_write(target, buffer.getvalue())
    except OSError as e:
        raise MMError(f"{target}: cannot write ({os_reason(e)})") from None
    return doc.steps, len(thumbnails)


def _add(tar: tarfile.TarFile, member: str, data: bytes) -> None:
    info = tarfile.TarInfo(member)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


@dataclass
class Archive:
    document: Document
    thumbnails: dict[str, bytes]


MEMBER = re.compile(r"([A-Za-z0-9._-]+)(?:\.toml|/([^/]+))")


def _check_headers(f: Any, bad: Callable[[str], RecordingCorrupt]) -> None:
    """Walk the archive's tar headers before `tarfile` does, skipping every body unread,
    and refuse sizes past the bounds. `tarfile` reads a pax or GNU long-name header's
    body whole while it lists members: a 2 MB archive claiming 600 MiB there took 1.8 GB.
    A header this walk cannot read is left for `tarfile` to name."""
    biggest = max(codec.MAX_DOCUMENT, MAX_THUMBNAIL)
    total = headers = 0
    with gzip.GzipFile(fileobj=f, mode="rb") as stream:
        while (header := stream.read(BLOCK)) and len(header) == BLOCK:
            if header == bytes(BLOCK):
                return
            headers += 1
            if headers > 2 * MAX_MEMBERS:
                raise bad(f"more than {MAX_MEMBERS} members")
            size = _tar_size(header[124:136])
            if size is None:
                return
            if header[156:157] in EXTENDED:
                if size > MAX_EXTENDED:
                    raise bad(f"an extended tar header of {size} bytes (at most {MAX_EXTENDED})")
            else:
                if size > biggest:
                    raise bad(f"a member of {size >> 20} MiB (at most {biggest >> 20} MiB)")
                total += size
                if total > MAX_ARCHIVE:
                    raise bad(f"more than {MAX_ARCHIVE >> 20} MiB in all")
            left = -(-size // BLOCK) * BLOCK
            while left > 0 and (skipped := len(stream.read(min(left, 1 << 20)))):
                left -= skipped


def _tar_size(field: bytes) -> int | None:
    """A tar header's size field: octal digits, or base-256 after a 0x80 byte."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    try:
        return int(field.split(b"\0", 1)[0].strip() or b"0", 8)
    except ValueError:
        return None


def read_archive(source: Path) -> Archive:
    """The document and thumbnails an export archive holds, every member checked, or
    `RecordingCorrupt` naming the archive and the problem."""
    try:
        with open(source, "rb") as f:
            return _read_archive(f, str(source))
    except FileNotFoundError:
        raise MMError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise MMError(f"{source}: is a folder, not an archive made by `mm export`") from None
    except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as e:
        if isinstance(e, OSError) and not isinstance(e, (EOFError,)) and e.errno:
            raise MMError(f"{source}: cannot read ({e.strerror})") from None
        raise RecordingCorrupt(
            f"{source}: not an archive made by `mm export` ({str(e) or type(e).__name__})"
        ) from None


def _read_archive(f: Any, where: str) -> Archive:
    text: bytes | None = None
    stem: str | None = None
    thumbnails: dict[str, bytes] = {}
    total = 0

    def bad(problem: str) -> RecordingCorrupt:
        return RecordingCorrupt(f"{where}: {problem}; not imported")

    _check_headers(f, bad)
    f.seek(0)
    with tarfile.open(fileobj=f, mode="r:gz") as tar:
        for count, member in enumerate(tar, 1):
            if count > MAX_MEMBERS:
                raise bad(f"more than {MAX_MEMBERS} members")
            shown = member.name[:60]
            if member.isdir():
                folder = member.name.rstrip("/")
                if not is_valid_name(folder) or (stem is not None and folder != stem):
                    raise bad(f"unexpected folder {shown!r}")
                stem = folder
                continue
            if not member.isfile():
                raise bad(f"member {shown!r} is a link or a special file")
            found = MEMBER.fullmatch(member.name)
            owner, file_name = (found.group(1), found.group(2)) if found else ("", None)
            if (
                not found
                or not is_valid_name(owner)
                or (file_name is not None and not _thumbnail_name(file_name))
            ):
                raise bad(f"unexpected member name {shown!r}")
            if stem is not None and owner != stem:
                raise bad(f"members of two recordings ({stem!r}, {owner!r})")
            stem = owner
            limit = codec.MAX_DOCUMENT if file_name is None else MAX_THUMBNAIL
            if member.size > limit:
                raise bad(f"member {shown!r} is larger than {limit >> 20} MiB")
            total += member.size
            if total > MAX_ARCHIVE:
                raise bad(f"more than {MAX_ARCHIVE >> 20} MiB in all")
            handle = tar.extractfile(member)
            data = handle.read(member.size + 1) if handle else b""
            if len(data) != member.size:
                raise bad(f"member {shown!r} is truncated")
            if file_name is None:
                if text is not None:
                    raise bad("two recording files")
                text = data
            else:
                if not data.startswith(PNG_MAGIC):
                    raise bad(f"member {shown!r} is not a PNG image")
                thumbnails[file_name] = data
    if text is None or stem is None:
        raise bad("no recording file (NAME.toml) in it")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise bad(f"{stem}{SUFFIX} is not UTF-8 text") from None
    try:
        doc = parse(decoded, f"{where}: {stem}{SUFFIX}")
    except RecordingCorrupt as e:
        raise RecordingCorrupt(f"{e}; not imported") from None
    if doc.name != stem:
        raise bad(f"{stem}{SUFFIX} holds recording {doc.name!r}")
    missing = sorted(doc.thumbnails - set(thumbnails))
    if missing and kind_named(doc.kind, where).needs_thumbnails:
        raise bad(f"thumbnail {missing[0]} is missing")
    return Archive(doc, thumbnails)


def import_archive(
    store: Store, source: Path, name: str | None = None, *, overwrite: bool = False
) -> Document:
    """Put the recording in the archive `source` into the store (as `name`, else under its
    own name). Nothing is written unless the whole archive passes its checks."""
    if name is not None:
        validate_name(name)
    archive = read_archive(source)
    doc = archive.document if name is None else archive.document.renamed(name)
    if store.exists(doc.name) and not overwrite:
        raise RecordingExists(
            f"recording {doc.name!r} already exists in {store.where}; "
            "use --overwrite to replace it, or --as NAME to import it under another name"
        )
    with free(store, doc.name), store.lock(doc.name):
        write(store, doc, archive.thumbnails, overwrite=overwrite)
    return doc


def _thumbnail_name(file_name: str) -> bool:
    return fields.is_plain_file_name(file_name) and not file_name.startswith(".")


def _file_size(store: Store, name: str) -> int:
    try:
        info = store.objects.head(store.key(name))
    except (OSError, StoreError):
        return 0
    return info.size if info is not None else 0


def _kind_word(kind: str) -> str:
    return KINDS[kind].word if kind in KINDS else kind


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}"
        value /= 1024
    return f"{value:.0f} GB"
