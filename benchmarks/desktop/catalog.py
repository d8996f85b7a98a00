"""Every app the desktop benchmarks drive, by the key `--apps` takes."""

from __future__ import annotations

from benchmarks.desktop.apps import FORMS, App
from benchmarks.desktop.office import Gimp, GimpFill, Writer

APPS: dict[str, type[App]] = {**FORMS, "writer": Writer, "gimp": Gimp, "gimp-fill": GimpFill}
