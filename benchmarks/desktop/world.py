"""What differs from one recording to the next besides its timing: where the task window
stands, the window manager's theme and the GTK theme. Each recording draws its world from
its index; the replays judged against it run in the same world (a scenario that moves the
window moves it from there).

    world = World.drawn(3, wm="openbox")   # the same for every run of the benchmark
    world = World()                        # the fixed world: HOME, the default themes
"""

from __future__ import annotations

import random
from dataclasses import dataclass

HOME = (80, 90)
"""Where the task window's client area is put in the fixed world."""
MOVE_BY = 60
"""How far the `moved` scenarios move the window to the right."""
LEFT = (40, 360)
TOP = (60, 170)
"""The ranges a drawn world's window position comes from (the client area's top-left);
the app keeps its window on the screen and clear of the panels within them."""

WM_THEMES = {
    "openbox": ("Clearlooks", "Onyx", "Natura", "Nightmare", "Mikachu", "Bear2"),
    "icewm": ("default", "CrystalBlue", "NanoBlue", "Helix", "icedesert", "win95"),
}
"""Themes Debian ships with each window manager (openbox's: /usr/share/themes/*/openbox-3;
IceWM's: /usr/share/icewm/themes)."""
GTK_THEMES = ("Adwaita", "Adwaita:dark", "HighContrast")
"""Themes built into GTK 3: the same widgets in other colours, borders and contrast."""


@dataclass(frozen=True)
class World:
    home: tuple[int, int] = HOME
    wm_theme: str = ""
    """The window manager's theme; "" keeps the distribution's default."""
    gtk_theme: str = ""
    """GTK_THEME for the apps started; "" keeps GTK's default."""

    @classmethod
    def drawn(cls, index: int, wm: str) -> World:
        rng = random.Random(f"world-{index}")
        return cls(
            home=(rng.randint(*LEFT), rng.randint(*TOP)),
            wm_theme=rng.choice(WM_THEMES.get(wm, ("",))),
            gtk_theme=rng.choice(GTK_THEMES),
        )

    def describe(self) -> str:
        return (
            f"window at {self.home[0]},{self.home[1]}, "
            f"wm theme {self.wm_theme or 'default'}, GTK theme {self.gtk_theme or 'default'}"
        )
