"""A small GTK 4 form (PyGObject with Debian's gir1.2-gtk-4.0: run it with
/usr/bin/python3): Name, City, Save, laid out as qt_form.py lays its form out.

Save appends the record "NAME|CITY" to --out. Perturbations: --prefill TEXT (Name holds
TEXT at start), --error (a red error line), --variant delete (same layout, another page),
--autofill (City filled by the app 50 ms after the name is first typed), --title,
--own-window KIND (a small window of the form's own, open at start: a modal "dialog"
transient for the form, or a second "normal" window; titled "KIND (GTK4)", put at
900,500). GTK 4 places no window itself on X11, so the form's own window is moved there
with xdotool once mapped.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import gi

gi.require_version("Gtk", "4.0")
gi.require_version("GdkX11", "4.0")
from gi.repository import GdkX11, GLib, Gtk  # noqa: E402

CSS = b"""
window.form { background: #e4e8ee; }
label.error { color: #c01010; font-weight: bold; }
"""


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--title", default="Person (GTK4)")
    p.add_argument("--prefill", default="")
    p.add_argument("--error", action="store_true")
    p.add_argument("--variant", default="new")
    p.add_argument("--autofill", action="store_true")
    p.add_argument("--own-window", choices=("dialog", "normal"))
    args = p.parse_args()

    style = Gtk.CssProvider()
    style.load_from_data(CSS)
    loop = GLib.MainLoop()
    win = Gtk.Window(title=args.title)
    Gtk.StyleContext.add_provider_for_display(
        win.get_display(), style, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION
    )
    win.add_css_class("form")
    win.set_default_size(400, 230)
    win.set_resizable(False)
    win.connect("close-request", lambda _w: (loop.quit(), False)[1])
    fixed = Gtk.Fixed()
    win.set_child(fixed)

    def put(widget: Gtk.Widget, x: int, y: int, w: int, h: int) -> Gtk.Widget:
        widget.set_size_request(w, h)
        fixed.put(widget, x, y)
        return widget

    heading = "Delete a person" if args.variant == "delete" else "New person"
    put(Gtk.Label(label=heading, xalign=0), 20, 12, 360, 24)
    put(Gtk.Label(label="Name", xalign=0), 20, 50, 60, 28)
    name = put(Gtk.Entry(text=args.prefill), 90, 50, 280, 28)
    put(Gtk.Label(label="City", xalign=0), 20, 95, 60, 28)
    city = put(Gtk.Entry(), 90, 95, 280, 28)
    if args.error:
        err = Gtk.Label(label="Error: server unreachable, nothing will be saved", xalign=0)
        err.add_css_class("error")
        put(err, 20, 140, 360, 24)
    label = "Delete" if args.variant == "delete" else "Save"
    save = put(Gtk.Button(label=label), 270, 180, 100, 32)

    def write(record: str) -> None:
        with args.out.open("a") as f:
            f.write(record + "\n")

    def submit(_button: Gtk.Button) -> None:
        prefix = "DELETE " if args.variant == "delete" else ""
        write(prefix + f"{name.get_text()}|{city.get_text()}")
        save.set_sensitive(False)

    save.connect("clicked", submit)

    if args.autofill:
        done: list[int] = []

        def fill(_entry: Gtk.Entry) -> None:
            if not done:
                done.append(1)
                GLib.timeout_add(50, lambda: (city.set_text("Berlin"), False)[1])

        name.connect("changed", fill)

    kept: list[Gtk.Window] = []

    def open_own() -> bool:
        kept.append(own_window(args.own_window, win))
        return False  # once

    if args.own_window:
        GLib.timeout_add(200, open_own)

    win.present()
    loop.run()
    return 0


def own_window(kind: str, form: Gtk.Window) -> Gtk.Window:
    """A small window of the form's own app (`--own-window`), moved to 900,500."""
    window = Gtk.Window(title=f"{kind} (GTK4)")
    window.set_default_size(160, 64)
    window.set_resizable(False)
    box = Gtk.Fixed()
    window.set_child(box)
    label = Gtk.Label(label="Draft saved.", xalign=0)
    label.set_size_request(140, 24)
    box.put(label, 10, 6)
    if kind == "dialog":
        window.set_transient_for(form)
        window.set_modal(True)
        ok = Gtk.Button(label="OK")
        ok.set_size_request(60, 26)
        box.put(ok, 90, 34)
    window.connect("map", lambda w: GLib.timeout_add(50, _move, w, 900, 500))
    window.present()
    return window


def _move(window: Gtk.Window, x: int, y: int) -> bool:
    """Move `window` to x, y through the window manager (xdotool), once."""
    surface = window.get_surface()
    if isinstance(surface, GdkX11.X11Surface):
        xid = str(surface.get_xid())
        subprocess.run(["xdotool", "windowmove", xid, str(x), str(y)], check=False)
    return False


if __name__ == "__main__":
    sys.exit(main())
