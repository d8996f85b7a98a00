"""A window that says what it is, as a desktop's notification daemon or an app would open
it (python-xlib): its EWMH type set before it is mapped, override-redirect like the
notifications of dunst or xfce4-notifyd, or managed and transient for another window.

    python -m tests.e2e.notifier --kind NOTIFICATION --override --at 700,130,300,90 \\
        --ready READY_FILE [--transient-for WID] [--until-grows FILE [--linger S]]
        [--take-focus KEYS]

It paints a coloured card with a few bars (what a notification's text looks like to the
pixels), touches READY_FILE once it is on the screen, and stays until terminated, or
(`--until-grows`) until FILE grows (and `--linger` seconds more): a notification that
expires once the task saved.
With `--take-focus`, it takes the X input focus itself once shown (as a window manager's
active window never shows) and appends a line to KEYS for each key it receives.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from Xlib import X, Xatom, display


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--kind", default="NOTIFICATION", help="_NET_WM_WINDOW_TYPE_<KIND>")
    p.add_argument("--override", action="store_true", help="override-redirect")
    p.add_argument("--at", required=True, help="X,Y,W,H")
    p.add_argument("--transient-for", type=lambda v: int(v, 0), default=None)
    p.add_argument("--ready", type=Path, required=True)
    p.add_argument("--until-grows", type=Path, default=None)
    p.add_argument("--linger", type=float, default=0.0, help="seconds it stays once FILE grew")
    p.add_argument("--take-focus", type=Path, default=None, metavar="KEYS")
    args = p.parse_args(argv)
    x, y, w, h = (int(v) for v in args.at.split(","))
    d = display.Display()
    screen = d.screen()
    colormap = screen.default_colormap
    card = colormap.alloc_named_color("#3b4252").pixel
    ink = colormap.alloc_named_color("#eceff4").pixel
    window = screen.root.create_window(
        x, y, w, h, 0, screen.root_depth, X.InputOutput, X.CopyFromParent,
        background_pixel=card, override_redirect=args.override,
        event_mask=X.ExposureMask | X.StructureNotifyMask | X.KeyPressMask,
    )  # fmt: skip
    window.set_wm_class("notifier", "Notifier")
    window.set_wm_name(f"notifier {args.kind.lower()}")
    # Where a window manager places it: exactly where asked.
    window.set_wm_normal_hints(flags=1 | 4, min_width=w, min_height=h)  # USPosition|USSize
    kind = d.intern_atom(f"_NET_WM_WINDOW_TYPE_{args.kind}")
    window.change_property(d.intern_atom("_NET_WM_WINDOW_TYPE"), Xatom.ATOM, 32, [kind])
    if args.transient_for is not None:
        window.change_property(
            d.intern_atom("WM_TRANSIENT_FOR"), Xatom.WINDOW, 32, [args.transient_for]
        )
    gc = window.create_gc(foreground=ink, background=card)
    window.map()
    d.sync()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    watched = args.until_grows
    size = watched.stat().st_size if watched is not None and watched.exists() else 0
    drawn = False
    while True:
        while d.pending_events():
            event = d.next_event()
            if event.type == X.Expose:
                for i, width in enumerate((w - 60, w - 110, w - 90)):
                    window.fill_rectangle(gc, 16, 16 + 20 * i, max(width, 1), 8)
                d.flush()
                drawn = True
            elif event.type == X.KeyPress and args.take_focus is not None:
                with args.take_focus.open("a") as keys:
                    keys.write(f"{event.detail}\n")
        if drawn and not args.ready.exists():
            if args.take_focus is not None:
                args.take_focus.touch()
                window.set_input_focus(X.RevertToParent, X.CurrentTime)
            d.sync()
            args.ready.touch()
        if watched is not None and watched.exists() and watched.stat().st_size != size:
            time.sleep(args.linger)
            return 0
        time.sleep(0.02)


if __name__ == "__main__":
    raise SystemExit(main())
