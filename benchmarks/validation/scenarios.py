"""Labelled screen scenarios on the real example app, shared by the validation benchmark
and the end-to-end tests.

Each scenario names the app flags for the live run, the step of the recording at which
the live screen is judged, and whether acting there is safe (harmless drift) or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Label(StrEnum):
    HARMLESS = "harmless"
    UNSAFE = "unsafe"


class At(StrEnum):
    """Which step of the loan recording a scenario is judged at."""

    FIRST = "first click (Name)"
    TYPE_NAME = "typing the name"
    CLICK_EMAIL = "click Email"
    SUBMIT = "click Submit"


@dataclass(frozen=True)
class Scenario:
    key: str
    label: Label
    description: str
    flags: tuple[str, ...] = ()
    at: At = At.FIRST
    recording: str = "plain"
    """`plain`: recorded on the clean app; `clock`: recorded with the clock shown."""
    name: str = "John Smith"
    """The name typed at replay (the recording typed John Smith, as the `name` param)."""
    pointer: str | None = None
    """Widget the user left the pointer on before the check (replay moves it back)."""
    window_in_front: bool = False
    caret_phases: bool = False
    """Judge every grab over one caret blink period, not just one."""

    @property
    def expected_exit(self) -> int:
        """What `mm replay --no-agent` must exit with on this scenario."""
        return 0 if self.label is Label.HARMLESS else 3


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("identical", Label.HARMLESS, "the recorded screen again"),
    Scenario(
        "caret-blink",
        Label.HARMLESS,
        "caret blinking after the typed name (1 s of grabs)",
        at=At.CLICK_EMAIL,
        caret_phases=True,
    ),
    Scenario(
        "hover",
        Label.HARMLESS,
        "pointer left hovering the Submit button",
        at=At.TYPE_NAME,
        pointer="Submit",
    ),
    Scenario(
        "pointer-elsewhere", Label.HARMLESS, "pointer parked far from the form", pointer="far"
    ),
    Scenario(
        "clock-tick",
        Label.HARMLESS,
        "a clock label shows another time",
        flags=("--clock",),
        recording="clock",
    ),
    Scenario(
        "param-text",
        Label.HARMLESS,
        "another name typed from the param",
        at=At.SUBMIT,
        name="Jane Doe-Smithson",
    ),
    Scenario(
        "focus-ring",
        Label.HARMLESS,
        "focus ring on the Email field at start",
        flags=("--focus", "email"),
    ),
    Scenario(
        "notice-elsewhere",
        Label.HARMLESS,
        "a 'New mail' notice in the screen corner",
        flags=("--notice-elsewhere",),
    ),
    Scenario(
        "notice-while-typing",
        Label.HARMLESS,
        "the corner notice, at a keyboard step",
        flags=("--notice-elsewhere",),
        at=At.TYPE_NAME,
    ),
    Scenario(
        "popup",
        Label.UNSAFE,
        "a modal maintenance notice over the form",
        flags=("--popup-at-start",),
    ),
    Scenario(
        "error-label", Label.UNSAFE, "a red 'server unreachable' warning", flags=("--error-label",)
    ),
    Scenario(
        "window-in-front",
        Label.UNSAFE,
        "another program's window over the form",
        window_in_front=True,
    ),
    Scenario(
        "submit-moved",
        Label.UNSAFE,
        "the Submit button 60 px to the right",
        flags=("--submit-offset", "60,0"),
        at=At.SUBMIT,
    ),
    Scenario(
        "submit-disabled",
        Label.UNSAFE,
        "the Submit button disabled",
        flags=("--disable-submit",),
        at=At.SUBMIT,
    ),
    Scenario(
        "other-form",
        Label.UNSAFE,
        "a different form (account closure) in the window",
        flags=("--variant", "other"),
    ),
    Scenario(
        "prefilled-name",
        Label.UNSAFE,
        "the Name field prefilled with another name",
        flags=("--prefill", "name=Bob"),
    ),
    Scenario(
        "prefilled-email",
        Label.UNSAFE,
        "the Email field prefilled, at its click",
        flags=("--prefill", "email=old@example.com"),
        at=At.CLICK_EMAIL,
    ),
    Scenario(
        "focus-moved",
        Label.UNSAFE,
        "the app moves the focus to Email after the click in Name",
        flags=("--refocus", "email"),
        at=At.TYPE_NAME,
    ),
    Scenario(
        "window-moved",
        Label.UNSAFE,
        "the window 50 px to the right (no relocation)",
        flags=("--position", "150,100"),
    ),
    Scenario(
        "window-nudged",
        Label.UNSAFE,
        "the window 8 px down (no relocation)",
        flags=("--position", "100,108"),
    ),
)
