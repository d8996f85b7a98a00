"""Ready-made screen checks, on the fake display (the X11 proof is in tests/e2e)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from mmcli import Engine, ScreenCheck
from mmcli.backends import FakeBackend
from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Rect
from mmcli.sdk.screen import no_target, pointer_target


def screen(label: str, count: int) -> Image.Image:
    image = Image.new("RGB", (640, 360), "#d9d9d9")
    draw = ImageDraw.Draw(image)
    draw.rectangle((100, 80, 300, 110), fill="white", outline="black")
    draw.text((110, 88), label, fill="black")
    draw.rectangle((100, 150, 180, 180), fill="#c0c0c0", outline="black")
    draw.text((115, 158), f"+1 ({count})", fill="black")
    return image


class App:
    """A fake app: clicking the button increments a counter shown on it."""

    def __init__(self, label: str) -> None:
        self.backend = FakeBackend(screen(label, 0), self.on_action)
        self.restart(label)

    def restart(self, label: str) -> None:
        self.label, self.count = label, 0
        self.backend.screen = screen(label, 0)

    def on_action(self, backend: FakeBackend, action: Action) -> None:
        if action.point is not None and 100 <= action.point[0] <= 180:
            self.count += 1
            backend.screen = screen(self.label, self.count)


def make_engine(app: App, **options: Any) -> tuple[Engine, list[tuple[int, int]]]:
    engine = Engine()
    clicks: list[tuple[int, int]] = []
    check = ScreenCheck(backend=app.backend, timeout=0.3, **options)

    @engine.function(pre_check=check)
    def click(x: int, y: int) -> None:
        clicks.append((x, y))
        app.backend.perform(Action(ActionKind.CLICK, x=x, y=y))

    engine.set_agent(lambda: [click(140, 165), click(140, 165)]).finalize()
    return engine, clicks


def test_hit_on_the_same_screen_miss_when_a_label_differs(isolated_store: Path) -> None:
    app = App("Name: Ann")
    engine, clicks = make_engine(app)
    assert engine() is False
    app.restart("Name: Ann")
    assert engine() is True and app.count == 2
    app.restart("Name: Bob")
    assert engine() is False  # the agent ran: the label differs
    assert app.count == 2 and len(clicks) == 6


def test_an_ignored_region_is_not_compared(isolated_store: Path) -> None:
    app = App("Name: Ann")
    engine, _ = make_engine(app, ignore=[Rect(100, 80, 200, 30)])
    assert engine() is False
    app.restart("Name: Bob")
    assert engine() is True


def test_a_screen_snapshot_is_stored_as_a_fingerprint(isolated_store: Path) -> None:
    app = App("Name: Ann")
    engine, _ = make_engine(app)
    engine()
    text = (isolated_store / "sdk.toml").read_text()
    assert '[trajectories.steps.pre."$screen".fingerprint]' in text
    assert "target = [\n    140,\n    165,\n]" in text


@pytest.mark.parametrize(
    "args, kwargs, target",
    [
        ((10, 20), {}, (10, 20)),
        ((10.6, 20.2, "left"), {}, (10, 20)),
        ((), {"x": 5, "y": 6}, (5, 6)),
        (((7, 8),), {}, (7, 8)),
        ((object(), 3, 4), {}, (3, 4)),
        (("hello",), {}, None),
        ((3,), {}, None),
        ((True, False), {}, None),
    ],
)
def test_pointer_target(args: tuple[Any, ...], kwargs: dict[str, Any], target: Any) -> None:
    assert pointer_target(args, kwargs) == target
    assert no_target(args, kwargs) is None


@pytest.mark.parametrize("label", ["Name: Amn", "Name: Ana"])
def test_one_changed_character_is_noticed(isolated_store: Path, label: str) -> None:
    app = App("Name: Ann")
    engine, _ = make_engine(app)
    assert engine() is False
    app.restart(label)
    assert engine() is False


def test_without_a_reference_only_the_fingerprint_is_stored(isolated_store: Path) -> None:
    app = App("Name: Ann")
    engine, _ = make_engine(app, keep_reference=False)
    engine()
    text = (isolated_store / "sdk.toml").read_text()
    assert "reference" not in text and '"$screen"' in text
    app.restart("Name: Ann")
    assert engine() is True
