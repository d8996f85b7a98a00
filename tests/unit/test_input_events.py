"""Input events -> actions, and the accounting of observed presses against reported actions,
on synthetic event lists (no display)."""

from __future__ import annotations

from mmcli.backends.xrecord import key_names, remapped
from mmcli.desktop.input_events import (
    ActionBuilder,
    EventKind,
    InputEvent,
    Ledger,
    expected_presses,
    misspelling,
    summarize,
)
from mmcli.desktop.input_watch import InputWatch
from mmcli.model import Action, ActionKind
from mmcli.screen.fingerprint import Frame

K, KU, P, R = EventKind.KEY, EventKind.KEY_UP, EventKind.PRESS, EventKind.RELEASE


def key(name: str, char: str = "", at: float = 0.0) -> list[InputEvent]:
    """Press and release of one key."""
    return [InputEvent(K, 0, 0, at, key=name, char=char), InputEvent(KU, 0, 0, at, key=name)]


def typed(text: str, at: float = 0.0) -> list[InputEvent]:
    out: list[InputEvent] = []
    for c in text:
        if c.isupper():
            out += [InputEvent(K, 0, 0, at, key="shift")]
            out += key(c.lower(), c, at)
            out += [InputEvent(KU, 0, 0, at, key="shift")]
        else:
            out += key(c, c, at)
    return out


def click(x: int, y: int, at: float = 0.0, button: int = 1) -> list[InputEvent]:
    return [InputEvent(P, x, y, at, button=button), InputEvent(R, x, y, at, button=button)]


def build(events: list[InputEvent], stop: bool = False) -> tuple[list[Action], ActionBuilder]:
    builder = ActionBuilder(stop_chord=stop)
    for e in events:
        builder.feed(e)
    return builder.finish(), builder


# ---- building actions ------------------------------------------------------------------------


def test_clicks_and_typed_text_merge_into_type_actions() -> None:
    actions, _ = build([*click(10, 20), *typed("John Smith"), *click(10, 60), *typed("j@x.com")])
    assert actions == [
        Action(ActionKind.CLICK, x=10, y=20),
        Action(ActionKind.TYPE, text="John Smith"),
        Action(ActionKind.CLICK, x=10, y=60),
        Action(ActionKind.TYPE, text="j@x.com"),
    ]


def test_feed_says_when_an_action_starts() -> None:
    builder = ActionBuilder()
    starts = [builder.feed(e) for e in [*click(1, 1), *typed("ab")]]
    assert starts == [True, False, True, False, False, False]


def test_double_click_is_one_click_action_with_two_clicks() -> None:
    actions, _ = build([*click(50, 50, at=1.0), *click(51, 50, at=1.2)])
    assert actions == [Action(ActionKind.CLICK, x=50, y=50, clicks=2)]


def test_two_clicks_far_apart_in_time_or_place_stay_two() -> None:
    slow, _ = build([*click(50, 50, at=1.0), *click(50, 50, at=2.0)])
    apart, _ = build([*click(50, 50, at=1.0), *click(90, 50, at=1.1)])
    assert len(slow) == 2 and len(apart) == 2


def test_a_second_press_the_screen_says_is_apart_is_a_click_of_its_own() -> None:
    asked: list[tuple[float, float]] = []

    def apart(first: InputEvent, event: InputEvent) -> bool:
        asked.append((first.at, event.at))
        return event.at > 5  # the second pair: the first click closed a dialog

    builder = ActionBuilder(apart=apart)
    for e in [*click(50, 50, at=1.0), *click(51, 50, at=1.2), *click(50, 50, at=6.0)]:
        builder.feed(e)
    for e in click(50, 50, at=6.2):
        assert builder.feed(e) == (e.kind is P)  # a new action: its screen is kept
    assert builder.finish() == [
        Action(ActionKind.CLICK, x=50, y=50, clicks=2),
        Action(ActionKind.CLICK, x=50, y=50),
        Action(ActionKind.CLICK, x=50, y=50),
    ]
    assert asked == [(1.0, 1.2), (6.0, 6.2)]  # only of presses that would join a click


def test_press_moved_before_release_is_a_drag() -> None:
    events = [
        InputEvent(P, 10, 10, button=1),
        InputEvent(EventKind.MOTION, 60, 40),
        InputEvent(R, 100, 80, button=1),
    ]
    actions, _ = build(events)
    assert actions == [Action(ActionKind.DRAG, x=10, y=10, x2=100, y2=80)]


def test_special_keys_are_presses_and_repeats_merge() -> None:
    actions, _ = build([*typed("ab"), *key("backspace"), *key("backspace"), *key("enter")])
    assert actions == [
        Action(ActionKind.TYPE, text="ab"),
        Action(ActionKind.PRESS, keys=("backspace",), clicks=2),
        Action(ActionKind.PRESS, keys=("enter",)),
    ]


def test_modifiers_and_a_key_make_a_hotkey() -> None:
    ctrl_a = [InputEvent(K, 0, 0, key="ctrl"), *key("a", "a"), InputEvent(KU, 0, 0, key="ctrl")]
    shift_tab = [InputEvent(K, 0, 0, key="shift"), *key("tab"), InputEvent(KU, 0, 0, key="shift")]
    ctrl_shift_t = [
        InputEvent(K, 0, 0, key="ctrl"),
        InputEvent(K, 0, 0, key="shift"),
        *key("t", "T"),
        InputEvent(KU, 0, 0, key="shift"),
        InputEvent(KU, 0, 0, key="ctrl"),
    ]
    actions, _ = build([*ctrl_a, *shift_tab, *ctrl_shift_t, *typed("Hi")])
    assert actions == [
        Action(ActionKind.HOTKEY, keys=("ctrl", "a")),
        Action(ActionKind.HOTKEY, keys=("shift", "tab")),
        Action(ActionKind.HOTKEY, keys=("ctrl", "shift", "t")),
        Action(ActionKind.TYPE, text="Hi"),
    ]


def test_wheel_presses_merge_into_one_scroll() -> None:
    wheel = [InputEvent(P, 5, 5, button=5), InputEvent(R, 5, 5, button=5)] * 3
    actions, _ = build(wheel)
    assert actions == [Action(ActionKind.SCROLL, x=5, y=5, amount=-3)]


def test_the_stop_chord_ends_the_demonstration_and_is_never_recorded() -> None:
    chord = [
        InputEvent(K, 0, 0, key="ctrl"),
        InputEvent(K, 0, 0, key="alt"),
        *key("end"),
        InputEvent(KU, 0, 0, key="alt"),
        InputEvent(KU, 0, 0, key="ctrl"),
    ]
    actions, builder = build([*click(1, 2), *typed("x"), *chord, *typed("after")], stop=True)
    assert builder.stopped
    assert actions == [Action(ActionKind.CLICK, x=1, y=2), Action(ActionKind.TYPE, text="x")]
    paused, builder = build([*typed("x"), *key("pause")], stop=True)
    assert builder.stopped and paused == [Action(ActionKind.TYPE, text="x")]


def test_end_without_the_chord_is_an_ordinary_key() -> None:
    actions, builder = build(key("end"), stop=True)
    assert not builder.stopped and actions == [Action(ActionKind.PRESS, keys=("end",))]


def test_input_that_cannot_be_replayed_is_named() -> None:
    hscroll = [InputEvent(P, 3, 4, button=6), InputEvent(R, 3, 4, button=6)]
    ctrl_click = [InputEvent(K, 0, 0, key="ctrl"), *click(7, 8), InputEvent(KU, 0, 0, key="ctrl")]
    held = [InputEvent(P, 9, 9, button=1)]
    sent = [InputEvent(EventKind.SENT, 0, 0, key="j")]
    _, builder = build([*hscroll, *ctrl_click, *sent, *held])
    assert builder.unrecordable == [
        "a horizontal scroll at (3, 4)",
        "a click at (7, 8) (button 1) with ctrl held",
        "a key press (a character) sent to a window with XSendEvent",
        "a mouse button held down at (9, 9)",
    ]


def test_reported_presses_are_not_built_and_end_a_run_of_typing() -> None:
    builder = ActionBuilder()
    events = typed("ab")
    for e in events[:2]:
        builder.feed(e)
    builder.feed(InputEvent(K, 0, 0, key="c", char="c"), accounted=True)
    for e in events[2:]:
        builder.feed(e)
    assert builder.finish() == [
        Action(ActionKind.TYPE, text="a"),
        Action(ActionKind.TYPE, text="b"),
    ]


def test_key_names_from_keysyms() -> None:
    assert key_names(ord("a"), ord("A"), True, "a") == ("a", "A")
    assert key_names(ord("2"), ord("@"), True, "2") == ("2", "@")
    assert key_names(0xFF0D, 0, False, "Return") == ("enter", "")
    assert key_names(0x20, 0x20, False, "space") == ("space", " ")
    assert key_names(0xFFE1, 0, False, "Shift_L") == ("shift", "")
    assert key_names(0xFFC2, 0, False, "F5") == ("f5", "")


# ---- accounting --------------------------------------------------------------------------------


def test_expected_presses_per_action() -> None:
    assert expected_presses(Action(ActionKind.CLICK, x=1, y=1, clicks=2)) == (1, 2)
    assert expected_presses(Action(ActionKind.CLICK, x=1, y=1, button="right")) == (3, 1)
    assert expected_presses(Action(ActionKind.TYPE, text="abc")) == (0, 3)
    assert expected_presses(Action(ActionKind.HOTKEY, keys=("ctrl", "shift", "t"))) == (0, 1)
    assert expected_presses(Action(ActionKind.PRESS, keys=("enter",), clicks=3)) == (0, 3)
    assert expected_presses(Action(ActionKind.SCROLL, amount=-2)) == (5, 2)
    assert expected_presses(Action(ActionKind.MOVE, x=1, y=1)) == (0, 0)


def presses(events: list[InputEvent]) -> list[InputEvent]:
    return [e for e in events if e.needs_account]


def test_reported_actions_account_for_their_presses_count_by_count() -> None:
    ledger = Ledger()
    ledger.report(Action(ActionKind.CLICK, x=10, y=10, clicks=2), now=0.0)
    ledger.report(Action(ActionKind.TYPE, text="aB"), now=0.1)
    ledger.report(Action(ActionKind.HOTKEY, keys=("ctrl", "a")), now=0.2)
    seen = [
        *click(10, 10),
        *click(11, 10),
        *typed("aB"),
        InputEvent(K, 0, 0, key="ctrl"),
        *key("a", "a"),
    ]
    assert all(ledger.account(e, now=0.3) for e in seen)
    # Everything reported is used up: one more of anything is unaccounted for.
    assert not ledger.account(InputEvent(P, 10, 10, button=1), now=0.4)
    assert not ledger.account(InputEvent(K, 0, 0, key="x", char="x"), now=0.4)


def spelled_by(text: str, events: list[InputEvent]) -> list[str]:
    ledger = Ledger()
    ledger.report(Action(ActionKind.TYPE, text=text), now=0.0)
    for event in events:
        ledger.account(event, now=0.1)
    return ledger.misspelled()


def test_typed_text_whose_keys_spell_it_is_as_the_agent_typed_it() -> None:
    assert spelled_by("Ada Lovelace", typed("Ada Lovelace")) == []
    assert spelled_by("a\tb\n", [*key("a", "a"), *key("tab"), *key("b", "b"), *key("enter")]) == []


def test_typed_text_that_lost_characters_on_the_way_is_told_without_its_text() -> None:
    """pyautogui drops what it cannot type on X11: "José Núñez" reached the app as "Jos Nez"."""
    (why,) = spelled_by("José Núñez", typed("Jos Nez"))
    assert (
        "10 characters" in why
        and "7 key presses" in why
        and "3 of its characters did not arrive" in why
    )
    assert "pyautogui cannot type characters outside ASCII" in why
    assert "Jos" not in why and "José" not in why


def test_typed_text_whose_keys_typed_other_characters_is_told() -> None:
    """The same number of keys, one of them another character ('<' arriving as '>')."""
    (why,) = spelled_by("a<b", [*key("a", "a"), *key("greater", ">"), *key("b", "b")])
    assert "1 of its characters did not arrive" in why
    assert "ASCII" not in why


def test_a_keymap_change_is_read_from_its_request_and_unicode_keysyms_name_characters() -> None:
    """xdotool binds a character missing from the keymap to a spare key for its press: the
    recorded ChangeKeyboardMapping request gives the new binding."""
    import struct

    keysyms = (0x10000E9, 0x10000C9, 0x20AC, 0)  # é, É (Unicode keysyms); €, none
    request = struct.pack("=BBHBBH4I", 100, 2, 2 + 4, 200, 2, 0, *keysyms)
    assert remapped(request) == {200: [0x10000E9, 0x10000C9], 201: [0x20AC, 0]}
    assert remapped(b"\x19" + request[1:]) == {}  # another request
    assert key_names(0x10000E9, 0x10000C9, True, "") == ("é", "É")
    assert key_names(0x20AC, 0, False, "EuroSign") == ("€", "€")


def test_a_key_whose_character_the_keymap_does_not_tell_stands_for_the_one_typed() -> None:
    """A key bound to a keysym mm cannot name (a legacy Latin-2 one) is not a difference;
    a key too many is."""
    assert spelled_by("Łódź", [*key("", "\ufffd"), *typed("ódź")]) == []
    why = misspelling(Action(ActionKind.TYPE, text="ab"), "abc")
    assert why == "typed text of 2 characters reached the display as 3 key presses"


def test_a_click_elsewhere_or_with_another_button_is_not_accounted_for() -> None:
    ledger = Ledger()
    ledger.report(Action(ActionKind.CLICK, x=100, y=100), now=0.0)
    assert not ledger.account(InputEvent(P, 300, 100, button=1), now=0.1)
    assert not ledger.account(InputEvent(P, 100, 100, button=3), now=0.1)
    assert ledger.account(InputEvent(P, 102, 99, button=1), now=0.1)


def test_what_is_left_of_a_report_expires() -> None:
    ledger = Ledger(hold=5.0)
    ledger.report(Action(ActionKind.TYPE, text="abc"), now=0.0)
    assert ledger.account(InputEvent(K, 0, 0, key="a", char="a"), now=4.0)
    assert ledger.account(InputEvent(K, 0, 0, key="b", char="b"), now=8.5)  # 4.5 s after "a"
    assert not ledger.account(InputEvent(K, 0, 0, key="c", char="c"), now=20.0)


def test_motion_releases_and_modifiers_need_no_account() -> None:
    ledger = Ledger()
    for e in [
        InputEvent(EventKind.MOTION, 5, 5),
        InputEvent(R, 5, 5, button=1),
        InputEvent(K, 0, 0, key="shift"),
    ]:
        assert ledger.account(e, now=0.0)


class ListSource:
    def start(self, on_event: object) -> None:
        pass

    def stop(self) -> None:
        pass


def test_the_watch_notes_only_what_no_channel_reported() -> None:
    watch = InputWatch(ListSource())
    watch.report(Action(ActionKind.CLICK, x=10, y=10))
    watch.report(Action(ActionKind.TYPE, text="hi"))
    for e in [*click(10, 10), *typed("hi"), *click(724, 353), *typed("xy"), *key("enter")]:
        watch.handle(e)
    watch.close()
    seen = [e.describe() for e in watch.unaccounted]
    assert seen == [
        "a click at (724, 353) (button 1)",
        "a key press (a character)",  # never which: it may be a secret's
        "a key press (a character)",
        "a key press (enter)",
    ]
    assert summarize(seen) == (
        "a click at (724, 353) (button 1), a key press (a character) (x2), a key press (enter)"
    )
    assert summarize(seen, limit=1) == "a click at (724, 353) (button 1) and 3 more"


class StillScreen:
    """A grabber of one unchanging screen."""

    def __init__(self) -> None:
        from PIL import Image

        self.frame = Frame.from_image(Image.new("RGB", (320, 240), "white"))

    def grab(self) -> Frame:
        return self.frame

    def close(self) -> None:
        pass


def test_an_observed_click_is_checked_with_the_pointer_where_its_screen_was_grabbed() -> None:
    watch = InputWatch(ListSource(), StillScreen, build=True, pointer=(5, 5))
    assert watch._keeper is not None
    frame = StillScreen().frame
    # The screen settled at t=10 with the pointer still at (5, 5); the agent moved onto
    # the target at t=11 and clicked at once: replay must compare with the pointer at (5, 5).
    watch._keeper._settled = (frame, 10.0)
    for e in [InputEvent(EventKind.MOTION, 30, 20, 11.0), *click(30, 20, at=11.05)]:
        watch.handle(e)
    # Then it rested on the next target until the screen settled (t=12.5) before clicking.
    watch.handle(InputEvent(EventKind.MOTION, 90, 60, 12.0))
    watch._keeper._settled = (frame, 12.5)
    for e in click(90, 60, at=13.0):
        watch.handle(e)
    watch.close()
    (first, seen1), (second, seen2) = watch.actions()
    assert (first.point, second.point) == ((30, 20), (90, 60))
    assert seen1 is not None and seen1.pointer == (5, 5)
    assert seen2 is not None and seen2.pointer == (90, 60)


def test_a_watched_second_press_after_a_window_closed_under_it_is_a_click_of_its_own() -> None:
    from tests.helpers import form_screen

    dialog = Frame.from_image(form_screen(popup=True))
    form = Frame.from_image(form_screen())
    watch = InputWatch(ListSource(), StillScreen, build=True)
    assert watch._keeper is not None
    watch._keeper._settled = (dialog, 1.0)
    for e in click(400, 352, at=1.1):  # OK of the dialog
        watch.handle(e)
    watch._keeper._settled = (form, 1.3)  # it closed; the agent clicks there again
    for e in click(400, 352, at=1.4):
        watch.handle(e)
    watch._keeper._settled = (form, 2.0)
    for e in [*click(300, 185, at=2.1), *click(300, 185, at=2.5)]:  # a double click
        watch.handle(e)
    for e in click(400, 352, at=3.0):
        watch.handle(e)
    watch._keeper._settled = (dialog, 3.1)  # grabbed after the next press: its own answer
    for e in click(400, 352, at=3.05):
        watch.handle(e)
    watch._keeper._settled = (form, 3.5)
    for e in click(400, 352, at=4.0):
        watch.handle(e)
    watch._keeper._settled = (dialog, 3.9)  # was there before the press: it met it too
    for e in click(400, 352, at=4.2):
        watch.handle(e)
    watch.close()
    assert [a.clicks for a, _ in watch.actions()] == [1, 1, 2, 2, 2]


def test_a_key_bound_for_one_press_is_read_with_the_binding_recorded_just_before() -> None:
    """The RECORD stream gives the client's ChangeKeyboardMapping before the press it
    serves: the press is read with the new binding, not the keymap read at the start."""
    import struct
    from types import SimpleNamespace

    from Xlib import X
    from Xlib.ext import record

    from mmcli.backends.xrecord import XRecordSource

    source = object.__new__(XRecordSource)
    source._keymap, source._shift = {200: [0, 0]}, set()
    seen: list[InputEvent] = []
    source._on_event = seen.append
    rebind = struct.pack("=BBHBBH2I", 100, 1, 2 + 2, 200, 2, 0, 0x10000F1, 0x10000D1)
    source._receive(SimpleNamespace(category=record.FromClient, client_swapped=False, data=rebind))
    press = SimpleNamespace(type=X.KeyPress, detail=200, root_x=0, root_y=0)
    event = source._convert(press)
    assert event is not None and event.char == "ñ"
