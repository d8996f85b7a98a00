"""Each top-level window's own pixels, as a compositing manager keeps them (X Composite):
the layers `screen.under` paints a covered place from.

Where no compositing manager runs (openbox, IceWM, a bare Xvfb), `keep` asks the server
to keep them itself (automatic redirection: the server still draws the screen as before,
from the windows' own pixels; measured, the screen stays the same to the pixel and DAMAGE
still reports each change). What a window showed under another before that is the
screen's until its app draws it again (at once, on the exposure the server sends): a
read then shows the covering window's pixels there, which differ from any outcome."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mmcli.backends.x11windows import viewable
from mmcli.screen.fingerprint import Rect
from mmcli.screen.under import Layer


def compositing(display: Any) -> str | None:
    """The class of the compositing manager that keeps each window's pixels on this
    screen (the owner of `_NET_WM_CM_Sn`, as EWMH has it; "" when it names none); None
    where none runs."""
    from Xlib import X

    atom = display.get_atom(f"_NET_WM_CM_S{display.get_default_screen()}")
    owner = display.get_selection_owner(atom)
    if owner == X.NONE:
        return None
    try:
        named = owner.get_wm_class()
    except Exception:  # a manager's selection window need not say what it is
        named = None
    return named[1] if named else ""


def keep(display: Any) -> bool:
    """Have the server keep every top-level window's own pixels from now on, where no
    compositing manager does; True once it does (`let_go` ends it; so does closing the
    connection)."""
    from Xlib import error
    from Xlib.ext import composite

    if not display.has_extension("Composite"):
        return False
    caught = error.CatchError()
    display.screen().root.composite_redirect_subwindows(composite.RedirectAutomatic, caught)
    display.sync()
    return caught.get_error() is None


def let_go(display: Any) -> None:
    """End what `keep` began."""
    from Xlib import error
    from Xlib.ext import composite

    display.screen().root.composite_unredirect_subwindows(
        composite.RedirectAutomatic, error.CatchError()
    )
    display.sync()


def layers(display: Any, places: Sequence[Rect], skip: set[int]) -> list[Layer] | None:
    """What each viewable top-level window but `skip`'s shows inside `places`, bottom to
    top, from its own contents; None where a window there has none kept (no compositing
    manager redirects it: it is drawn straight to the screen, under the covering window
    nothing of it is kept) or the server has no Composite."""
    from Xlib import X, error

    if not display.has_extension("Composite"):
        return None
    root = display.screen().root
    found = _wallpaper(display, root, places)
    for top, attrs, frame in viewable(display, list(root.query_tree().children)):
        if top.id in skip or attrs.win_class == X.InputOnly:
            continue
        inside = [inner for place in places if (inner := frame.intersection(place))]
        if not inside:
            continue
        caught = error.CatchError()
        pixmap = top.composite_name_window_pixmap(onerror=caught)
        try:
            for inner in inside:
                image = pixmap.get_image(
                    inner.x - frame.x, inner.y - frame.y, inner.w, inner.h, X.ZPixmap, 0xFFFFFFFF
                )
                data = np.frombuffer(image.data, np.uint8)
                if data.size != inner.w * inner.h * 4:  # not 32 bits a pixel: not read here
                    return None
                pixels = data.reshape(inner.h, inner.w, 4)
                found.append(Layer(frame, inner, pixels, alpha=image.depth == 32))
        except (error.BadDrawable, error.BadMatch, error.BadWindow):
            return None  # not redirected (no compositing manager), or it went meanwhile
        finally:
            pixmap.free(onerror=error.CatchError())
        if caught.get_error() is not None:
            return None
    return found


def _wallpaper(display: Any, root: Any, places: Sequence[Rect]) -> list[Layer]:
    """The desktop's wallpaper inside `places`, from the pixmap its setter names on the
    root window (`_XROOTPMAP_ID`: feh, xfdesktop, nitrogen), under every window; none
    where no pixmap is named."""
    from Xlib import X, error

    prop = root.get_full_property(display.get_atom("_XROOTPMAP_ID"), X.AnyPropertyType)
    if prop is None or prop.format != 32 or not len(prop.value):
        return []
    pixmap = display.create_resource_object("pixmap", int(prop.value[0]))
    try:
        size = pixmap.get_geometry()
    except (error.BadDrawable, error.BadMatch):
        return []
    found = []
    for place in places:
        inner = Rect(0, 0, size.width, size.height).intersection(place)
        if inner is None:
            continue
        try:
            image = pixmap.get_image(inner.x, inner.y, inner.w, inner.h, X.ZPixmap, 0xFFFFFFFF)
        except (error.BadDrawable, error.BadMatch):
            return []
        data = np.frombuffer(image.data, np.uint8)
        if data.size != inner.w * inner.h * 4 or image.depth == 32:
            return []
        screen = Rect(0, 0, size.width, size.height)
        found.append(Layer(screen, inner, data.reshape(inner.h, inner.w, 4), shade=False))
    return found
