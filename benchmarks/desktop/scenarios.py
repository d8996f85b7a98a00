"""Labelled scenarios of the real-desktop benchmark.

A scenario starts the app in some state (its `variant`: what the app shows itself) and
changes the desktop around it (`setup`: a notification, a window taking the focus...),
then replays a recording of the task. Harmless: replay must complete the right record.
Unsafe: replay must not submit a wrong record (a divergence, exit 3, is correct).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from benchmarks.desktop.apps import App, Variant


class Label(StrEnum):
    HARMLESS = "harmless"
    UNSAFE = "unsafe"


class Setup(StrEnum):
    """Changes made to the desktop after the app started, before replay."""

    POINTER_FAR = "pointer-far"
    IDLE = "idle"
    CLOCK = "clock"
    NOTIFY = "notify"
    FOCUS_STOLEN = "focus-stolen"
    MODAL_DIALOG = "modal-dialog"
    WINDOW_IN_FRONT = "window-in-front"
    DIALOG_ASIDE = "dialog-aside"
    WINDOW_IN_FRONT_ASIDE = "window-in-front-aside"
    MOVED = "moved"


@dataclass(frozen=True)
class Scenario:
    key: str
    label: Label
    description: str
    setup: tuple[Setup, ...] = ()
    prefill: str = ""
    """"same": the value the task types; "other": other text (see App.prefill_other)."""
    error: bool = False
    other_page: bool = False
    autofill: bool = False
    dialog_after: bool = False
    other_value: bool = False
    """Replay with another value of the param than the one recorded."""
    relocate: bool = False
    under_window: bool = False
    """Another window is over the task: acting at all (exit 0 or 6) is a wrong action, even
    when the record happens to be right."""
    own_window: str = ""
    """The app opens a window of its own of this kind at start (`App.own_windows`)."""
    needs: frozenset[str] = field(default=frozenset())

    def variant(self, app: App, recording_index: int) -> Variant:
        prefill = {"same": app.value, "other": app.prefill_other, "": ""}[self.prefill]
        delay = DIALOG_DELAYS_MS[recording_index % len(DIALOG_DELAYS_MS)]
        return Variant(
            prefill=prefill,
            error=self.error,
            other_page=self.other_page,
            autofill=self.autofill,
            dialog_after_ms=delay if self.dialog_after else 0,
            own_window=self.own_window,
        )

    def applies_to(self, app: App) -> bool:
        needed = {
            name
            for name, on in (
                ("error", self.error),
                ("other_page", self.other_page),
                ("autofill", self.autofill),
                ("dialog_after_ms", self.dialog_after),
            )
            if on
        }
        return app.supports(needed) and (not self.own_window or self.own_window in app.own_windows)


DIALOG_DELAYS_MS = (150, 250, 350, 200, 300, 400, 120, 500, 180, 280)
"""After the last key typed into the last field, when the app opens its dialog over the
submit button: spread over runs, so some land just after replay's check."""

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("plain", Label.HARMLESS, "the app as recorded"),
    Scenario(
        "params", Label.HARMLESS, "replayed with another value of the param", other_value=True
    ),
    Scenario(
        "pointer-elsewhere",
        Label.HARMLESS,
        "the pointer parked far from the task",
        setup=(Setup.POINTER_FAR,),
    ),
    Scenario(
        "idle",
        Label.HARMLESS,
        "12 s idle before replay (carets stop blinking)",
        setup=(Setup.IDLE,),
    ),
    Scenario("clock", Label.HARMLESS, "the panel clock shows other seconds", setup=(Setup.CLOCK,)),
    Scenario(
        "notification",
        Label.HARMLESS,
        "a desktop notification in the top-right corner",
        setup=(Setup.NOTIFY,),
    ),
    Scenario(
        "focus-stolen",
        Label.HARMLESS,
        "a small window far away takes the focus; the task starts with a click into it",
        setup=(Setup.FOCUS_STOLEN,),
    ),
    Scenario(
        "moved-relocate",
        Label.HARMLESS,
        "the window moved by 60 px, --relocate",
        setup=(Setup.MOVED,),
        relocate=True,
    ),
    Scenario(
        "modal-dialog",
        Label.UNSAFE,
        "a dialog window over the task window",
        setup=(Setup.MODAL_DIALOG,),
        under_window=True,
    ),
    Scenario(
        "window-in-front",
        Label.UNSAFE,
        "a terminal window in front of the task",
        setup=(Setup.WINDOW_IN_FRONT,),
        under_window=True,
    ),
    Scenario(
        "dialog-aside",
        Label.UNSAFE,
        "another app's dialog over the task window, not over the first target",
        setup=(Setup.DIALOG_ASIDE,),
        under_window=True,
    ),
    Scenario(
        "window-in-front-aside",
        Label.UNSAFE,
        "a terminal in front of the task window, not over the first target",
        setup=(Setup.WINDOW_IN_FRONT_ASIDE,),
        under_window=True,
    ),
    Scenario(
        "moved", Label.UNSAFE, "the window moved by 60 px (no --relocate)", setup=(Setup.MOVED,)
    ),
    Scenario("error-text", Label.UNSAFE, "the app shows an error text", error=True),
    Scenario(
        "prefilled-other", Label.UNSAFE, "the first field already holds other text", prefill="other"
    ),
    Scenario(
        "prefilled-same",
        Label.UNSAFE,
        "the first field already holds the very text the task types",
        prefill="same",
    ),
    Scenario(
        "app-fills",
        Label.UNSAFE,
        "the app fills the next field 50 ms after the name is typed",
        autofill=True,
    ),
    Scenario(
        "other-page", Label.UNSAFE, "another page with the same layout (Delete)", other_page=True
    ),
    Scenario(
        "dialog-after-check",
        Label.UNSAFE,
        "a dialog opens over the submit button shortly after the last key",
        dialog_after=True,
    ),
)

BY_KEY = {s.key: s for s in SCENARIOS}
