"""A small window of another app, for the hostile matrix (benchmarks/desktop/hostile.py):
a normal window, an override-redirect window (placed by itself, as a popup is), or a
tooltip (override-redirect, EWMH type TOOLTIP, pale yellow). It stays until killed.

    python hostile_window.py --kind normal|override|tooltip --title NAME [--size WxH]
        [--at X,Y] [--text TEXT]

The text is its title unless given.
"""

from __future__ import annotations

import argparse
import tkinter as tk

COLOURS = {"normal": "#e8e0f0", "override": "#d0e8d8", "tooltip": "#ffffe0"}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=sorted(COLOURS), required=True)
    p.add_argument("--title", required=True)
    p.add_argument("--size", default="150x50")
    p.add_argument("--at", default="900,500")
    p.add_argument("--text", default="")
    args = p.parse_args()
    root = tk.Tk(className="Hostile")
    root.withdraw()  # the type and override-redirect are set before the window maps
    root.title(args.title)
    x, y = args.at.split(",")
    root.geometry(f"{args.size}+{x}+{y}")
    root.configure(background=COLOURS[args.kind], borderwidth=1, relief="solid")
    if args.kind != "normal":
        root.overrideredirect(True)
    if args.kind == "tooltip":
        root.attributes("-type", "tooltip")
    tk.Label(root, text=args.text or args.title, background=COLOURS[args.kind]).place(
        relx=0.5, rely=0.5, anchor="center"
    )
    root.deiconify()
    keep_signals_responsive(root)
    root.mainloop()
    return 0


def keep_signals_responsive(root: tk.Tk) -> None:
    """SIGTERM is handled between Tk events; a timer makes sure some arrive."""
    root.after(200, keep_signals_responsive, root)


if __name__ == "__main__":
    raise SystemExit(main())
