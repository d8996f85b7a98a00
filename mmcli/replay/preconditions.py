"""What a replay checks before it does anything: the screen is the recorded size, and
every param the recording types is given (a key close to a missing one named)."""

from __future__ import annotations

from mmcli.backends.base import Backend
from mmcli.errors import DisplayError, UsageError, closest
from mmcli.model import Recording
from mmcli.params import Values


def check_geometry(recording: Recording, backend: Backend) -> None:
    if not recording.steps:
        return
    fp = recording.steps[0].fingerprint
    size = backend.size()
    if (fp.width, fp.height) != size:
        raise DisplayError(
            f"screen is {size[0]}x{size[1]} but {recording.name!r} was recorded at "
            f"{fp.width}x{fp.height}; replay on a screen of the recorded size"
        )


def check_values(recording: Recording, values: Values) -> None:
    missing = values.missing(recording.params)
    if missing:
        flags = " ".join(
            f"--secret {k}" if k in recording.secrets else f"--param {k}=..." for k in missing
        )
        # A key given that is no param of the recording, close to a missing one: a typo.
        typos = [
            f"unknown param {k!r}, did you mean {close!r}? "
            for k in values.all
            if k not in recording.params and (close := closest(k, missing)) is not None
        ]
        raise UsageError(f"{''.join(typos)}recording {recording.name!r} needs {flags}")
