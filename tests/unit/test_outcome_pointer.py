"""The outcome is judged on the screen as found first; the pointer is put back where it
was recorded only when that screen is not the outcome, and then what the pointer's place
shows (GIMP's readout of its coordinates as found, its rulers' mark once put back) is
told from the task's result (`pointer_explains`, `await_outcome`)."""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image

from mmcli.backends import FakeBackend
from mmcli.model import Action, ActionKind, Step
from mmcli.replay.outcome import await_outcome
from mmcli.replay.pointer_place import PointerLook, pointer_explains
from mmcli.screen.fingerprint import Frame, Rect
from mmcli.screen.matcher import Difference, Verdict
from tests.helpers import form_screen, fp_of

READOUT = Rect(596, 520, 8, 8)
"""The status bar's readout of the pointer's coordinates."""
MARK = Rect(296, 120, 8, 8)
"""The ruler's mark at the pointer's x."""
STATUS = Rect(104, 514, 300, 20)
"""The status line ("Upload failed"): the task's result."""
MATCHES = Verdict(())


def differs(*regions: Rect, matcher: str = "regions") -> Verdict:
    return Verdict(
        tuple(Difference(matcher, r, "changed region (px)", r.w * r.h, 0) for r in regions)
    )


def test_the_readout_as_found_and_the_mark_put_back_are_the_pointer_s() -> None:
    assert pointer_explains(differs(READOUT), differs(MARK), [READOUT, MARK])


def test_a_place_that_differs_in_both_looks_is_the_result() -> None:
    """Even where the pointer's move changed it too."""
    both = differs(READOUT, STATUS), differs(MARK, STATUS)
    assert not pointer_explains(*both, [READOUT, MARK, STATUS])


def test_a_difference_where_the_move_changed_nothing_is_not_the_pointer_s() -> None:
    assert not pointer_explains(differs(READOUT), differs(MARK, STATUS), [READOUT, MARK])
    assert not pointer_explains(differs(READOUT, STATUS), differs(MARK), [READOUT, MARK])


def test_more_than_a_readout_s_line_is_not_the_pointer_s() -> None:
    """A message that came as the pointer moved (shown in one look) is the task's."""
    message = Rect(104, 514, 300, 20)
    assert not pointer_explains(differs(READOUT), differs(MARK, message), [READOUT, MARK, message])
    line = Rect(104, 200, 128, 20)
    assert pointer_explains(differs(READOUT), differs(MARK, line), [READOUT, MARK, line])


def test_only_pixels_are_the_pointer_s() -> None:
    grid = differs(MARK, matcher="grid")
    assert not pointer_explains(differs(READOUT), grid, [READOUT, MARK])


def test_two_looks_that_match_explain_nothing() -> None:
    assert not pointer_explains(MATCHES, MATCHES, [READOUT])


END = Step(1, None, Action(ActionKind.CLICK, x=10, y=10), fp_of(form_screen(), None))


class Looks:
    """A screen that differs from the outcome until the pointer has moved (`moved`), and
    a record of what the outcome check asked."""

    def __init__(self, as_found: Verdict, put_back: Verdict, explains: bool) -> None:
        self.backend = FakeBackend(Image.new("RGB", (800, 600), "white"))
        self.as_found, self.put_back, self.explains = as_found, put_back, explains
        self.moved = 0
        self.judged: list[int] = []
        """How many times the pointer had moved at each look."""
        self.asked: list[tuple[Frame, Frame]] = []

    def judge(self, end: Step, frame: Frame, hidden: Sequence[Rect]) -> Verdict:
        self.judged.append(self.moved)
        return self.put_back if self.moved else self.as_found

    def approach(self) -> bool:
        self.moved += 1
        return True

    def pointer_only(self, end: Step, found: Frame, frame: Frame) -> bool:
        self.asked.append((found, frame))
        return self.explains

    def run(self, timeout: float = 0.5) -> tuple[Step | None, bool]:
        seen = await_outcome(
            self.backend, [END], self.judge, timeout, lambda: None,
            pointer=PointerLook(self.approach, self.pointer_only),
        )  # fmt: skip
        return seen.matched, seen.pointer_only


def test_a_screen_as_found_that_shows_the_outcome_is_done_without_moving_the_pointer() -> None:
    looks = Looks(MATCHES, differs(MARK), explains=False)
    assert looks.run() == (END, False)
    assert looks.moved == 0


def test_the_pointer_is_put_back_once_and_the_screen_judged_again() -> None:
    looks = Looks(differs(READOUT), MATCHES, explains=False)
    assert looks.run() == (END, False)
    assert looks.moved == 1
    assert looks.judged == [0, 1]


def test_looks_that_differ_only_in_what_the_pointer_shows_are_the_outcome() -> None:
    looks = Looks(differs(READOUT), differs(MARK), explains=True)
    assert looks.run() == (END, True)
    assert looks.moved == 1 and len(looks.asked) == 1


def test_looks_that_differ_otherwise_are_not_the_outcome() -> None:
    """Asked once, for the first look after the move; the outcome is then waited for as
    before, and the pointer is not moved again."""
    looks = Looks(differs(READOUT, STATUS), differs(MARK, STATUS), explains=False)
    assert looks.run() == (None, False)
    assert looks.moved == 1 and len(looks.asked) == 1
    assert len(looks.judged) > 2
