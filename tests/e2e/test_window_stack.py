"""The window system's stack, read while windows close.

A window manager lists its clients on the root window (`_NET_CLIENT_LIST_STACKING`) and
updates the list some time after a client closes: an app restarted between two checks
leaves an id there that is no window any more. Here the list is written by hand on a
bare Xvfb (no window manager to correct it), naming a live window and one destroyed:
the stack is the live one, never an error (`mm doctor` said "a bug of mm" after the
README's `--before-each ./restart-app.sh`, and replay would have had no window structure).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from Xlib import X, Xatom
from Xlib import display as xlib_display

from mmcli.backends import x11windows

pytestmark = pytest.mark.e2e


@pytest.fixture
def conn(xdisplay: str) -> Iterator[xlib_display.Display]:
    c = xlib_display.Display(xdisplay)
    try:
        yield c
    finally:
        c.close()


def _window(conn: xlib_display.Display, x: int, name: str) -> object:
    root = conn.screen().root
    w = root.create_window(x, 40, 120, 80, 0, conn.screen().root_depth, X.InputOutput)
    w.set_wm_class(name, name.capitalize())
    w.map()
    return w


def test_a_listed_window_that_closed_is_left_out_of_the_stack(conn: xlib_display.Display) -> None:
    live, closed = _window(conn, 40, "live"), _window(conn, 300, "closed")
    conn.sync()
    listed = [live.id, closed.id]  # type: ignore[attr-defined]
    closed.destroy()  # type: ignore[attr-defined]
    conn.sync()
    root = conn.screen().root
    atom = conn.intern_atom("_NET_CLIENT_LIST_STACKING")
    root.change_property(atom, Xatom.WINDOW, 32, listed)
    conn.sync()
    try:
        stack = x11windows.stacked_windows(conn)
        assert stack is not None
        assert [w.ref.wm_class for w in stack if w.ref.wm_class] == ["live.Live"]
    finally:
        root.delete_property(atom)
        live.destroy()  # type: ignore[attr-defined]
        conn.sync()
