"""An in-memory display for fast unit tests: a PIL image, a pointer, a log of actions;
optionally change reports, as X11's DAMAGE gives them (`repaint`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PIL import Image

from mmcli.backends.base import Backend, ChangeLog
from mmcli.model import Action
from mmcli.readback.field import FieldText, NotRead
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.under import Layer, SeenUnder, compose, shaded
from mmcli.screen.windows import StackedWindow, WindowRef


class FakeBackend(Backend):
    def __init__(
        self,
        screen: Image.Image,
        on_action: Callable[[FakeBackend, Action], None] | None = None,
        reports: bool = False,
    ) -> None:
        self.screen = screen.convert("RGB")
        self.log = ChangeLog() if reports else None
        """With `reports`, `settle` waits on the changes `repaint` reports."""
        self.position = (screen.width // 2, screen.height // 2)
        self.performed: list[Action] = []
        self.on_action = on_action
        self.grabs = 0
        self.window_list: list[WindowRef] | None = None
        """What `windows` answers (None: a desktop with no window manager)."""
        self.keyboard: WindowRef | None = None
        """What `keyboard_window` answers: the window that has the keyboard."""
        self.stacked: list[StackedWindow] | None = None
        """What `stack` answers, bottom to top (None: the window system says nothing)."""
        self.work_area: Rect | None = None
        """What `workarea` answers: the screen less the desktop's panels (None: not known)."""
        self.field: str | None = None
        """What `read_field` reads in the field that has the focus, as an accessibility
        tree would give it (None: no field can be read)."""
        self.under: Image.Image | None = None
        """What the windows' own pixels show under any covering window (`seen_under`), as
        a compositing manager keeps them (None: nothing is kept)."""
        self.released = 0
        """How many times what `seen_under` kept was let go (`release_kept`)."""

    def size(self) -> tuple[int, int]:
        return self.screen.size

    def workarea(self) -> Rect | None:
        return self.work_area

    def grab(self) -> Frame:
        self.grabs += 1
        return Frame.from_image(self.screen)

    def pointer(self) -> tuple[int, int]:
        return self.position

    def move(self, x: int, y: int) -> None:
        self.position = (x, y)
        self.input_at = time.monotonic()

    def changes(self) -> ChangeLog | None:
        return self.log

    def windows(self) -> list[WindowRef] | None:
        return None if self.window_list is None else list(self.window_list)

    def keyboard_window(self) -> WindowRef | None:
        return self.keyboard

    def stack(self) -> list[StackedWindow] | None:
        return None if self.stacked is None else list(self.stacked)

    def seen_under(self, frame: Frame, covering: Sequence[StackedWindow]) -> SeenUnder | None:
        if self.under is None:
            return None
        screen = Rect(0, 0, frame.width, frame.height)
        places = [shaded(w.frame) for w in covering]
        kept = Frame.from_image(self.under).pixels
        layers = [
            Layer(screen, p, kept[p.y : p.bottom, p.x : p.right])
            for place in places
            if (p := place.intersection(screen))
        ]
        return compose(frame, places, layers)

    def release_kept(self) -> None:
        self.released += 1

    def window_at(self, x: int, y: int) -> WindowRef | None:
        for window in reversed(self.window_list or []):  # topmost last, as X stacks them
            if window.rect.holds(x, y):
                return window
        return None

    def read_field(
        self, box: Rect | None, frame: Frame | None = None, prefer: str = ""
    ) -> FieldText | NotRead:
        if self.field is None:
            return NotRead("accessibility", "the fake display reads no field")
        return FieldText(self.field, "accessibility", rect=box)

    def repaint(self, screen: Image.Image | None = None) -> None:
        """Show `screen` (or redraw the same), reported as a change."""
        if screen is not None:
            self.screen = screen.convert("RGB")
        if self.log is not None:
            self.log.note()

    def perform(self, action: Action) -> None:
        if action.point is not None:
            self.position = action.point
        self.performed.append(action)
        self.input_at = time.monotonic()
        if self.on_action is not None:
            self.on_action(self, action)
