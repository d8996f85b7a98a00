"""`--relocate` with each of the task's windows at its own offset (`screen.placement`)."""

from __future__ import annotations

import numpy as np

from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.placement import Composed, along, compose, place
from mmcli.screen.windows import Over, StackedWindow, WindowRef

MAIN = Rect(100, 100, 300, 200)
DIALOG = Rect(250, 150, 200, 100)


def window(cls: str, frame: Rect, kind: str = "") -> StackedWindow:
    return StackedWindow(WindowRef(cls, frame), frame, kind)


def screen(main_at: Rect, dialog_at: Rect | None, main_shadow: bool = False) -> Frame:
    """A desktop (grey) with the main window (its left half 60, right half 120) and the
    dialog (200, a dark bar at its top) over it, with a compositor's shadow below (and
    below the main window too, `main_shadow`)."""
    pixels = np.full((400, 600, 4), 30, np.uint8)
    m = main_at
    if main_shadow:
        pixels[m.bottom : m.bottom + 8, m.x - 6 : m.right + 6] = 10
    pixels[m.y : m.bottom, m.x : m.x + m.w // 2] = 60
    pixels[m.y : m.bottom, m.x + m.w // 2 : m.right] = 120
    if dialog_at is not None:
        d = dialog_at
        pixels[d.bottom : d.bottom + 6, d.x - 4 : d.right + 4] = 10  # its shadow
        pixels[d.y : d.bottom, d.x : d.right] = 200
        pixels[d.y : d.y + 10, d.x : d.right] = 90
    return Frame(pixels.tobytes(), 600, 400)


def test_the_apps_other_windows_at_offsets_of_their_own_are_placed() -> None:
    own = [Over("app.Main", MAIN)]
    moved = window("app.Main", MAIN.moved(60, 0))
    dialog = window("app.Dialog", DIALOG)
    placed = place(own, (0, 0), [moved, dialog])
    assert [p.offset for p in placed] == [(60, 0)]
    assert place(own, (60, 0), [moved, dialog]) == []  # moved with the step's window
    twin = window("app.Main", Rect(0, 0, 300, 200))
    assert place(own, (0, 0), [moved, twin, dialog]) == []  # which one: not told
    resized = window("app.Main", Rect(160, 100, 320, 200))
    assert place(own, (0, 0), [resized, dialog]) == []


def main_moved(main_shadow: bool = False) -> tuple[Frame, Frame, Composed]:
    """The main window moved 60 px right, the dialog (the step's window) stayed: the
    recorded screen, the live one, and the live one composed."""
    recorded = screen(MAIN, DIALOG, main_shadow)
    live = screen(MAIN.moved(60, 0), DIALOG, main_shadow)
    main = window("app.Main", MAIN.moved(60, 0))
    dialog = window("app.Dialog", DIALOG)
    placed = place([Over("app.Main", MAIN)], (0, 0), [main, dialog])
    return recorded, live, compose(live, (0, 0), placed, [main, dialog], dialog)


def test_each_window_is_painted_where_it_was_recorded_and_what_it_hides_is_left_out() -> None:
    recorded, live, composed = main_moved()
    differs = np.abs(composed.view.pixels.astype(int) - recorded.pixels.astype(int)).max(axis=2)
    ys, xs = np.nonzero(differs)
    # What differs is only what the dialog hides of the main window now and did not
    # hide when recorded: the strip of the main window right of the dialog, moved back.
    assert composed.hidden, composed.hidden
    for y, x in zip(ys, xs, strict=True):
        assert any(r.holds(int(x), int(y)) for r in composed.hidden), (x, y)
    # The shifted screen alone (the dialog's offset) differs where nothing is left out.
    plain = np.abs(live.pixels.astype(int) - recorded.pixels.astype(int)).max(axis=2)
    ys, xs = np.nonzero(plain)
    seen = [(x, y) for y, x in zip(ys, xs, strict=True) if not any(
        r.holds(int(x), int(y)) for r in composed.hidden)]  # fmt: skip
    assert len(seen) > 1000


def test_a_change_in_the_moved_window_is_seen() -> None:
    recorded = screen(MAIN, DIALOG)
    live = screen(MAIN.moved(60, 0), DIALOG)
    pixels = live.pixels.copy()
    pixels[120:130, 170:220] = 255  # an error label in the moved main window
    live = Frame(pixels.tobytes(), 600, 400)
    main = window("app.Main", MAIN.moved(60, 0))
    dialog = window("app.Dialog", DIALOG)
    placed = place([Over("app.Main", MAIN)], (0, 0), [main, dialog])
    composed = compose(live, (0, 0), placed, [main, dialog], dialog)
    differs = np.abs(composed.view.pixels.astype(int) - recorded.pixels.astype(int)).max(axis=2)
    assert differs[120:130, 110:160].all()  # where it stands in the recording's coordinates
    assert not any(r.intersects(Rect(110, 120, 50, 10)) for r in composed.hidden)


def test_the_dialogs_shadow_as_recorded_is_left_out_where_the_dialog_moved_apart() -> None:
    """The dialog moved 100 px right, the main window stayed: the recorded shadow on the
    main window is gone from there (the lower window's live pixels show none)."""
    recorded = screen(MAIN, DIALOG)
    live = screen(MAIN, DIALOG.moved(100, 0))
    main = window("app.Main", MAIN)
    dialog = window("app.Dialog", DIALOG.moved(100, 0))
    placed = place([Over("app.Main", MAIN)], (100, 0), [main, dialog])
    assert [p.offset for p in placed] == [(0, 0)]
    composed = compose(live, (100, 0), placed, [main, dialog], dialog)
    differs = np.abs(composed.view.pixels.astype(int) - recorded.pixels.astype(int)).max(axis=2)
    ys, xs = np.nonzero(differs[:, :400])  # the main window's side of the screen
    assert len(ys)
    for y, x in zip(ys, xs, strict=True):
        assert any(r.holds(int(x), int(y)) for r in composed.hidden), (x, y)


def test_the_moved_windows_shadow_moves_with_it() -> None:
    """GIMP on Xfce: the main window moved 60 px right, the export dialog stayed. The
    main window's shadow as recorded (below its frame, left of where it stands now) is
    gone from there, and its shadow now stands beside what the shift drew: neither is
    judged; the main window itself is."""
    recorded, _, composed = main_moved(main_shadow=True)
    differs = np.abs(composed.view.pixels.astype(int) - recorded.pixels.astype(int)).max(axis=2)
    ys, xs = np.nonzero(differs)
    assert any(y >= MAIN.bottom for y in ys)  # the shadows differ below the window
    for y, x in zip(ys, xs, strict=True):
        assert any(r.holds(int(x), int(y)) for r in composed.hidden), (x, y)
    assert not any(r.intersects(Rect(110, 120, 50, 10)) for r in composed.hidden)


def test_a_window_under_one_that_stayed_with_the_step_is_painted_under_it() -> None:
    """GIMP's PNG options (the step's window) over the export dialog, over the image
    window: the image window moved 60 px right, both dialogs stayed. Painted back where
    it was recorded, the image window stays under the export dialog."""
    options = Rect(300, 180, 80, 50)

    def shown(main_at: Rect) -> Frame:
        pixels = screen(main_at, DIALOG).pixels.copy()
        pixels[options.y : options.bottom, options.x : options.right] = 250
        return Frame(pixels.tobytes(), 600, 400)

    recorded, live = shown(MAIN), shown(MAIN.moved(60, 0))
    main = window("app.Main", MAIN.moved(60, 0))
    export = window("app.Dialog", DIALOG)
    step = window("plugin.App", options)
    stack = [main, export, step]
    own = [Over("app.Main", MAIN), Over("app.Dialog", DIALOG)]
    placed = place(own, (0, 0), stack)
    assert [p.offset for p in placed] == [(60, 0)]
    moved_along = along(own, (0, 0), stack)
    assert moved_along == [export]
    composed = compose(live, (0, 0), placed, stack, step, moved_along)
    view = composed.view.pixels.astype(int)
    d = DIALOG
    assert (
        view[d.y : d.bottom, d.x : d.right] == recorded.pixels[d.y : d.bottom, d.x : d.right]
    ).all()
    # Without the dialog that stayed, the image window is painted over it.
    over = compose(live, (0, 0), placed, stack, step).view.pixels.astype(int)
    assert not (
        over[d.y : d.bottom, d.x : d.right] == recorded.pixels[d.y : d.bottom, d.x : d.right]
    ).all()
