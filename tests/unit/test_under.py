"""The screen under a covering window, painted from each window's own pixels
(`screen.under`): what is painted, in which order, and what is told as not seen."""

from __future__ import annotations

import numpy as np
from PIL import Image

from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.under import SHADE, Layer, compose, shaded

SIZE = (200, 120)
CARD = Rect(60, 40, 80, 30)
"""The covering window's place (a notification)."""


def _screen(colour: tuple[int, int, int] = (200, 200, 200)) -> Frame:
    return Frame.from_image(Image.new("RGB", SIZE, colour))


def _layer(frame: Rect, place: Rect, bgra: tuple[int, int, int, int], **kw: bool) -> Layer:
    inner = frame.intersection(place)
    assert inner is not None
    pixels = np.empty((inner.h, inner.w, 4), np.uint8)
    pixels[...] = bgra
    return Layer(frame, inner, pixels, **kw)


def _hidden_mask(hidden: tuple[Rect, ...]) -> np.ndarray:
    mask = np.zeros((SIZE[1], SIZE[0]), bool)
    for r in hidden:
        mask[r.y : r.bottom, r.x : r.right] = True
    return mask


def test_the_place_is_painted_from_the_windows_bottom_to_top() -> None:
    """A window under all of the card, another over its right half: each pixel is the
    topmost window's own; nothing is hidden but the shade around the upper window."""
    place = shaded(CARD)
    lower = Rect(0, 0, 200, 120)
    upper = Rect(100, 0, 100, 120)
    seen = compose(
        _screen(),
        [place],
        [_layer(lower, place, (0, 0, 255, 255)), _layer(upper, place, (255, 0, 0, 255))],
    )
    pixels = seen.frame.pixels
    assert tuple(pixels[50, 70, :3]) == (0, 0, 255)
    assert tuple(pixels[50, 120, :3]) == (255, 0, 0)
    assert tuple(pixels[5, 5, :3]) == (200, 200, 200)  # outside the place: as it was
    mask = _hidden_mask(seen.hidden)
    assert mask[50, 100 - SHADE] and mask[50, 99]  # the upper window's shade, left of it
    assert not mask[50, 100 - SHADE - 1] and not mask[50, 100]
    assert not mask[50, 60]


def test_where_no_window_reaches_is_hidden_exactly() -> None:
    """A window under the card's left part only: its right part, over no window's pixels
    (the desktop), is hidden, and is left as the screen showed it."""
    place = CARD
    window = Rect(0, 0, 100, 120)
    seen = compose(_screen((9, 9, 9)), [place], [_layer(window, place, (0, 255, 0, 255))])
    mask = _hidden_mask(seen.hidden)
    unseen = np.zeros_like(mask)
    unseen[CARD.y : CARD.bottom, 100 : CARD.right] = True
    shade = np.zeros_like(mask)
    shade[CARD.y : CARD.bottom, 100 : min(CARD.right, 100 + SHADE)] = True
    assert np.array_equal(mask, unseen | shade)
    assert tuple(seen.frame.pixels[50, 130, :3]) == (9, 9, 9)
    assert tuple(seen.frame.pixels[50, 70, :3]) == (0, 255, 0)


def test_a_translucent_window_is_drawn_over_what_is_under_it() -> None:
    """A 32-bit window at half alpha (premultiplied) over an opaque one: blended; where
    nothing is under it, what it lets through is not known: hidden."""
    place = CARD
    under = Rect(0, 0, 100, 120)
    glass = Rect(0, 0, 200, 120)
    seen = compose(
        _screen(),
        [place],
        [
            _layer(under, place, (0, 0, 200, 255), shade=False),
            _layer(glass, place, (50, 0, 0, 128), alpha=True, shade=False),
        ],
    )
    b, g, r = seen.frame.pixels[50, 70, :3]
    assert (int(b), int(g)) == (50, 0) and abs(int(r) - 100) <= 1
    mask = _hidden_mask(seen.hidden)
    assert not mask[50, 70]
    assert mask[50, 130]  # over the desktop: the glass's pixels alone do not tell


def test_the_wallpaper_casts_no_shade() -> None:
    place = CARD
    screen = Rect(0, 0, *SIZE)
    seen = compose(_screen(), [place], [_layer(screen, place, (1, 2, 3, 255), shade=False)])
    assert seen.hidden == ()
    assert tuple(seen.frame.pixels[50, 70, :3]) == (1, 2, 3)


def test_a_place_past_the_screen_s_edge_is_cut_at_it() -> None:
    place = Rect(150, 90, 100, 60)
    seen = compose(_screen(), [place], [])
    assert seen.hidden == (Rect(150, 90, 50, 30),)


def test_a_window_over_another_s_shade_is_seen_there() -> None:
    """A small window beside a larger one, within its shade: the compositing manager
    draws the larger one's shade under it, never over it, so the small window's own
    pixels there are compared (an app's error badge by its form is not left out)."""
    place = CARD
    form = Rect(0, 0, 100, 120)
    badge = Rect(102, 45, 6, 6)  # 2 px right of the form: inside its shade
    seen = compose(
        _screen(),
        [place],
        [
            _layer(form, place, (0, 0, 200, 255)),
            _layer(badge, place, (0, 0, 255, 255), shade=False),
        ],
    )
    mask = _hidden_mask(seen.hidden)
    assert not mask[badge.y : badge.bottom, badge.x : badge.right].any()
    assert mask[50, 101] and mask[60, 105]  # the form's shade beside the badge
    assert tuple(seen.frame.pixels[47, 104, :3]) == (0, 0, 255)
