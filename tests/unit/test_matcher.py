"""The matcher on synthetic screens (the real-screen evidence is in benchmarks/ and e2e)."""

from __future__ import annotations

import numpy as np
import pytest

from mmcli.screen.analysis import fingerprint_of, grid_of
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Policy, compare
from tests.helpers import form_screen, fp_of

NAME_FIELD = (250, 185)
SUBMIT = (160, 415)


def verdict(
    recorded_kwargs: dict, live_kwargs: dict, target=SUBMIT, policy=Policy.DEFAULT, ignore=()
):
    recorded = fp_of(form_screen(**recorded_kwargs), target)
    return compare(recorded, Frame.from_image(form_screen(**live_kwargs)), policy, ignore)


def test_identical_screens_match() -> None:
    assert verdict({}, {}).ok


@pytest.mark.parametrize(
    "live",
    [{"popup": True}, {"error": True}, {"offset": (50, 0)}, {"button_color": "#888888"}],
    ids=["popup", "error-label", "window-moved", "button-restyled"],
)
def test_dangerous_changes_do_not_match(live: dict) -> None:
    v = verdict({}, live)
    assert not v.ok
    assert v.differences[0].amount > v.differences[0].tolerance


def test_caret_blink_in_a_field_is_tolerated() -> None:
    assert verdict({"text": "John", "caret": True}, {"text": "John"}, target=NAME_FIELD).ok


def test_strict_policy_refuses_the_caret() -> None:
    assert not verdict(
        {"text": "John", "caret": True}, {"text": "John"}, target=NAME_FIELD, policy=Policy.STRICT
    ).ok


def test_ignored_region_is_not_compared() -> None:
    live = {"error": True}
    assert not verdict({}, live).ok
    assert verdict({}, live, ignore=[Rect(100, 440, 400, 40)]).ok


def test_divergence_says_where_and_by_how_much() -> None:
    v = verdict({}, {"popup": True})
    text = v.summary()
    assert "tile" in text and ">" in text and "at (" in text


def test_masks_blank_regions_before_hashing() -> None:
    a = Frame.from_image(form_screen(text=""))
    b = Frame.from_image(form_screen(text="Jonathan Smith"))
    field = [Rect(200, 170, 320, 30)]
    assert grid_of(a.small) != grid_of(b.small)
    assert grid_of(a.small, field) == grid_of(b.small, field)


def test_screen_of_another_size_is_a_geometry_difference() -> None:
    recorded = fp_of(form_screen(), SUBMIT)
    small = Frame.from_image(form_screen().resize((1280, 720)))
    v = compare(recorded, small)
    assert [d.matcher for d in v.differences] == ["geometry"]


def _fields() -> np.ndarray:
    """A downscaled screen: grey window, two white fields stacked, one beside the first."""
    small = np.full((120, 200), 210, np.uint8)
    for x0, x1, y0, y1 in ((20, 80, 20, 28), (20, 80, 40, 48), (90, 150, 20, 28)):
        small[y0:y1, x0:x1] = 120  # border
        small[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1] = 255
    return small


@pytest.mark.parametrize(
    "caret, focus, expected",
    [
        ((22, 21), (40, 24), True),  # in the focused field, left of the click point
        ((40, 21), (40, 24), True),  # at the click point
        ((22, 41), (40, 24), False),  # in the field below
        ((92, 21), (40, 24), False),  # in the field beside it, across two borders
    ],
    ids=["focused-field", "at-focus", "field-below", "field-beside"],
)
def test_a_caret_counts_only_in_the_focused_field(
    caret: tuple[int, int], focus: tuple[int, int], expected: bool
) -> None:
    """Coordinates in downscaled pixels; the caret is 1 x 6 of them."""
    recorded, live = _fields(), _fields()
    live[caret[1] : caret[1] + 6, caret[0]] = 0
    from mmcli.screen.analysis import changed_regions
    from mmcli.screen.carets import in_focused_field
    from mmcli.screen.fingerprint import SCALE

    (region,) = changed_regions(recorded, live)
    point = (focus[0] * SCALE, focus[1] * SCALE)
    assert in_focused_field(region, point, recorded, live) is expected


def _patch_screen(changed: int) -> Frame:
    """A white screen whose first `changed` target-patch cells (4 x 4 px each, row by row
    from the patch's corner) are black: `changed` cells differing by all 15 levels."""
    from PIL import Image, ImageDraw

    from mmcli.screen.fingerprint import PATCH_CELLS, PATCH_SIZE

    img = Image.new("RGB", (640, 480), "white")
    d = ImageDraw.Draw(img)
    x0, y0 = PATCH_TARGET[0] - PATCH_SIZE // 2, PATCH_TARGET[1] - PATCH_SIZE // 2
    side = PATCH_SIZE // PATCH_CELLS
    for i in range(changed):
        r, c = divmod(i, PATCH_CELLS)
        d.rectangle([x0 + c * side, y0 + r * side, x0 + c * side + side - 1,
                     y0 + r * side + side - 1], fill="black")  # fmt: skip
    return Frame.from_image(img)


PATCH_TARGET = (320, 240)


@pytest.mark.parametrize(
    "policy, cells", [(Policy.STRICT, 0), (Policy.DEFAULT, 6), (Policy.LOOSE, 24)]
)
def test_each_policy_tolerates_its_number_of_target_cells_and_no_more(
    policy: Policy, cells: int
) -> None:
    recorded = fingerprint_of(_patch_screen(0), PATCH_TARGET)

    def target_ok(changed: int) -> bool:
        live = _patch_screen(changed)
        return compare(recorded, live, policy, matchers=("target",)).ok

    assert target_ok(cells)
    assert not target_ok(cells + 1)


TILE_TOLERANCES = {
    Policy.STRICT: {"bits": 0, "tone": 0, "detail": 0},
    Policy.DEFAULT: {"bits": 4, "tone": 3, "detail": 1},
    Policy.LOOSE: {"bits": 8, "tone": 6, "detail": 3},
}


@pytest.mark.parametrize("policy", list(Policy))
@pytest.mark.parametrize("measure", ["bits", "tone", "detail"])
def test_each_policy_tolerates_its_tile_distances_and_no_more(policy: Policy, measure: str) -> None:
    """The `grid` matcher (a step without a thumbnail): one tile differing by exactly the
    policy's tolerance in one measure matches; by one more, it does not, and says so."""
    from mmcli.screen.fingerprint import Fingerprint, Grid
    from mmcli.screen.matcher import Context, Live, match_grid

    tol = policy.tolerance
    allowed = TILE_TOLERANCES[policy][measure]
    recorded_grid = Grid(2, 1, (0, 0), (100, 100), (50, 50))
    recorded = Fingerprint(640, 480, recorded_grid)

    def differences(amount: int) -> list:
        live_grid = Grid(
            2,
            1,
            ((1 << amount) - 1 if measure == "bits" else 0, 0),
            (100 + (amount if measure == "tone" else 0), 100),
            (50 + (amount if measure == "detail" else 0), 50),
        )
        live = Live(_patch_screen(0), recorded)
        live.__dict__["grid"] = live_grid  # the live screen's grid, as computed
        return match_grid(recorded, live, Context(tol))

    assert differences(allowed) == []
    (found,) = differences(allowed + 1)
    assert found.measure == f"tile {measure}" and found.amount == allowed + 1
    assert found.tolerance == allowed and found.region == Rect(0, 0, 320, 480)


def test_a_longer_param_value_relaxes_the_target_patch_at_a_keyboard_step() -> None:
    """At a keyboard step the target is the field the keys go to: a param's text there,
    longer at replay than recorded, is masked in the patch as in the grid. A click's
    target stays strict, and so does what the mask does not cover."""
    field = Rect(200, 175, 300, 20)  # the Name field's box, the param's text mask
    recorded = fingerprint_of(Frame.from_image(form_screen(text="Ann")), NAME_FIELD, [field])
    longer = Frame.from_image(form_screen(text="Hannah Hannah"))
    assert compare(recorded, longer, pointer_step=False).ok
    clicked = compare(recorded, longer, pointer_step=True)
    assert [d.matcher for d in clicked.differences] == ["target"]
    unmasked = fingerprint_of(Frame.from_image(form_screen(text="Ann")), NAME_FIELD)
    assert not compare(unmasked, longer, pointer_step=False).ok
    popup = Frame.from_image(form_screen(text="Hannah Hannah", popup=True))
    assert not compare(recorded, popup, pointer_step=False).ok


def test_a_click_beside_a_param_is_judged_strictly_but_for_what_the_mask_covers() -> None:
    """A click just below the field a param went into (the line under a name): the
    longer name reaches into the patch around the click, where the mask covers it; the
    rest of the patch stays strict."""
    field = Rect(200, 175, 300, 20)
    below = (240, 202)
    recorded = fingerprint_of(Frame.from_image(form_screen(text="Ann")), below, [field])
    longer = Frame.from_image(form_screen(text="Hannah Hannah"))
    assert compare(recorded, longer, pointer_step=True).ok
    popup = Frame.from_image(form_screen(text="Hannah Hannah", popup=True))
    assert not compare(recorded, popup, pointer_step=True).ok
