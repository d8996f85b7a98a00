"""The recording `xdotool`: how its command lines become reports to the recorder."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mmcli.capture import shim as front
from mmcli.hook import _mm_xdotool as shim


def plan(line: str) -> list[tuple[list[dict[str, Any]], list[str]]]:
    return shim.batches(shim.parse(shlex.split(line)))


def reports(line: str) -> list[dict[str, Any]]:
    return [m for messages, _ in plan(line) for m in messages]


def actions(line: str) -> list[dict[str, Any]]:
    return [m["action"] for m in reports(line)]


def unsupported(line: str) -> list[str]:
    return [m["name"] for m in reports(line) if m["op"] == "unsupported"]


def test_mousemove_alone_is_a_move() -> None:
    assert actions("mousemove --sync 100 200") == [{"kind": "move", "x": 100, "y": 200}]
    assert plan("mousemove --sync 100 200")[0][1] == ["mousemove", "--sync", "100", "200"]


def test_click_buttons_and_repeat() -> None:
    assert actions("click 1") == [{"kind": "click", "button": "left", "clicks": 1}]
    assert actions("click 3")[0]["button"] == "right"
    assert actions("click 2")[0]["button"] == "middle"
    assert actions("click --repeat 2 --delay 10 1")[0]["clicks"] == 2
    assert actions("click --clearmodifiers --repeat=3 1")[0]["clicks"] == 3


def test_wheel_buttons_are_scrolls_at_the_pointer() -> None:
    assert actions("click 4") == [{"kind": "scroll", "amount": 1}]
    assert actions("click --repeat 5 5") == [{"kind": "scroll", "amount": -5}]
    assert actions("mousemove --sync 10 20 click --repeat 3 4") == [
        {"kind": "scroll", "amount": 3, "x": 10, "y": 20}
    ]
    assert unsupported("click 6") and unsupported("click --repeat 2 7")


def test_move_then_click_on_one_line_is_one_click_there_run_as_one_command() -> None:
    line = "mousemove --sync 300 400 click 1"
    assert actions(line) == [{"kind": "click", "button": "left", "clicks": 1, "x": 300, "y": 400}]
    assert plan(line)[0][1] == shlex.split(line)
    assert len(plan(line)) == 1


def test_press_moves_release_is_a_button_down_and_up_with_their_points() -> None:
    line = "mousemove 10 20 mousedown 1 mousemove --sync 200 220 mouseup 1"
    assert reports(line) == [
        {"op": "button", "state": "down", "button": "left", "x": 10, "y": 20},
        {"op": "button", "state": "up", "button": "left", "x": 200, "y": 220},
    ]
    # The release is reported after the press and moves have happened.
    assert [argv for _, argv in plan(line)] == [
        ["mousemove", "10", "20", "mousedown", "1", "mousemove", "--sync", "200", "220"],
        ["mouseup", "1"],
    ]


def test_reference_agent_drag_and_separate_presses() -> None:
    assert reports("mousedown 1 mousemove --sync 50 60 mouseup 1") == [
        {"op": "button", "state": "down", "button": "left"},
        {"op": "button", "state": "up", "button": "left", "x": 50, "y": 60},
    ]
    assert reports("mousedown 1") == [{"op": "button", "state": "down", "button": "left"}]
    assert reports("mouseup 1") == [{"op": "button", "state": "up", "button": "left"}]


def test_type_with_options_and_double_dash() -> None:
    def typed(text: str, ms: int = 12) -> list[dict[str, object]]:
        return [{"kind": "type", "text": text, "key_ms": ms}]

    assert actions("type --delay 30 -- 'Ada Love'") == typed("Ada Love", 30)
    assert actions("type -- --not-an-option") == typed("--not-an-option")
    assert actions("type --clearmodifiers hello") == typed("hello")
    assert actions("type -delay 5 hi there") == typed("hithere", 5)
    assert plan("type ''") == [([], ["type", ""])]  # nothing typed, nothing recorded
    assert plan("type --delay 12 -- 'a b'")[0][1] == ["type", "--delay", "12", "--", "a b"]


def test_chunks_are_separate_reports_joined_by_the_recorder() -> None:
    chunks = ["type --delay 12 -- 'Ada Lo'", "type --delay 12 -- 'velace'"]
    assert [actions(c)[0]["text"] for c in chunks] == ["Ada Lo", "velace"]


def test_keys_map_to_mm_key_names() -> None:
    assert actions("key Return") == [{"kind": "press", "keys": ["enter"], "clicks": 1}]
    assert actions("key KP_Enter")[0]["keys"] == ["enter"]
    assert actions("key --clearmodifiers ctrl+s") == [{"kind": "hotkey", "keys": ["ctrl", "s"]}]
    assert actions("key -- super")[0]["keys"] == ["win"]
    assert actions("key ctrl+shift+Tab")[0]["keys"] == ["ctrl", "shift", "tab"]
    assert actions("key Page_Down BackSpace Escape F5")[3]["keys"] == ["f5"]
    assert actions("key ctrl+plus")[0]["keys"] == ["ctrl", "+"]
    assert actions("key --repeat 3 Down") == [{"kind": "press", "keys": ["down"], "clicks": 3}]


def test_several_keys_run_one_by_one_each_after_its_report() -> None:
    p = plan("key --delay 20 Tab Return")
    assert [argv for _, argv in p] == [
        ["key", "--delay", "20", "--", "Tab"],
        ["key", "--delay", "20", "--", "Return"],
    ]
    assert [m["action"]["keys"] for messages, _ in p for m in messages] == [["tab"], ["enter"]]


def test_chained_commands_each_recorded_in_order() -> None:
    line = "mousemove --sync 5 6 click 1 key ctrl+a type hello"
    assert [a["kind"] for a in actions(line)] == ["click", "hotkey", "type"]
    assert [argv for _, argv in plan(line)] == [
        ["mousemove", "--sync", "5", "6", "click", "1"],
        ["key", "--", "ctrl+a"],
        ["type", "hello"],
    ]


def test_key_stops_at_the_next_command() -> None:
    assert [a["kind"] for a in actions("key Tab sleep 0.1 key Return")] == ["press", "press"]


@pytest.mark.parametrize(
    "line",
    [
        "getmouselocation --shell",
        "search --name Foo",
        "getactivewindow",
        "windowactivate --sync 1234",
        "windowfocus 1234",
        "getdisplaygeometry",
        "--version",
    ],
)
def test_other_commands_pass_through_unrecorded(line: str) -> None:
    assert plan(line) == [([], shlex.split(line))]


def test_window_commands_chained_with_input_run_whole_after_the_reports() -> None:
    line = "search --name Notes windowactivate --sync %@ type hi"
    assert plan(line) == [([{"op": "act", "action": {"kind": "type", "text": "hi", "key_ms": 12}}],
                           shlex.split(line))]  # fmt: skip


@pytest.mark.parametrize(
    "line, name",
    [
        ("keydown shift", "keydown shift"),
        ("keyup ctrl", "keyup ctrl"),
        ("type --window 1234 hello", "type --window"),
        ("key --window 1234 Return", "key --window"),
        ("click --window 1234 1", "click --window"),
        ("mousemove --window 1234 5 5", "mousemove --window"),
        ("mousemove_relative 5 5", "mousemove_relative"),
        ("key XF86AudioMute", "key XF86AudioMute"),
        ("mousemove restore", "mousemove restore"),
        ("click 8", "click 8"),
    ],
)
def test_input_that_cannot_be_recorded_is_reported_unsupported(line: str, name: str) -> None:
    assert [u for u in unsupported(line) if name in u], unsupported(line)
    assert plan(line)[-1][1] == shlex.split(line)  # and still runs as written


def test_a_script_file_is_unsupported() -> None:
    assert unsupported("/tmp/script.xdo") == ["xdotool a script (/tmp/script.xdo)"]


def test_real_xdotool_is_the_next_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own, other = tmp_path / "own", tmp_path / "other"
    for d in (own, other):
        d.mkdir()
        (d / "xdotool").write_text("#!/bin/sh\n")
        (d / "xdotool").chmod(0o755)
    monkeypatch.setenv("PATH", f"{own}:{other}")
    assert shim.real_xdotool(str(own)) == str(other / "xdotool")
    monkeypatch.setenv("PATH", str(own))
    assert shim.real_xdotool(str(own)) is None


def test_messages_are_written_as_json_dumps_writes_them() -> None:
    for message in [
        {"op": "act", "action": {"kind": "type", "text": 'Zoë "A"\\\n\t\x01 <ada@x.org>'}},
        {"op": "act", "action": {"kind": "hotkey", "keys": ["ctrl", "v"], "clicks": -3}},
        {"op": "button", "state": "down", "button": "left", "x": None, "ok": False, "y": True},
    ]:
        assert shim.dumps(message) == json.dumps(message)


def test_the_shim_loads_no_module_beyond_two_c_ones(tmp_path: Path) -> None:
    # Each action starts it: `json`, `socket`, `dataclasses` would cost 20-70 ms each time.
    code = (
        "import sys; before = set(sys.modules); sys.path.insert(0, sys.argv[1]); "
        "import _mm_xdotool; print(' '.join(sorted(set(sys.modules) - before)))"
    )
    hook = str(Path(shim.__file__).parent)
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, hook], capture_output=True,
                          text=True, check=True)  # fmt: skip
    loaded = set(done.stdout.split()) - {"_mm_xdotool", "__future__"}
    assert loaded <= {"_json", "_socket", "os", "os.path", "posixpath", "genericpath", "stat",
                      "_stat", "_collections_abc"}, loaded  # fmt: skip


def test_the_shell_front_knows_every_xdotool_command_as_input_or_passing() -> None:
    assert not set(front.INPUT) & set(front.PASSING)
    assert set(front.INPUT) | set(front.PASSING) == shim.COMMANDS


def test_a_line_without_input_runs_the_real_xdotool_from_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, log = tmp_path / "real", tmp_path / "ran"
    real.mkdir()
    (real / "xdotool").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit 3\n')
    (real / "xdotool").chmod(0o755)
    monkeypatch.setattr(front.sys, "executable", "/bin/false")  # Python would fail: exit 1
    front.write(str(tmp_path / "bin"))
    env = {"PATH": f"{tmp_path / 'bin'}:{real}:/usr/bin:/bin", "MM_RECORD_SOCKET": "/nowhere"}

    def run(line: str) -> int:
        return subprocess.run(["xdotool", *shlex.split(line)], env=env).returncode

    assert run("getmouselocation --shell") == 3
    assert run("search --name '^typed' windowactivate") == 3
    assert log.read_text() == "getmouselocation --shell\nsearch --name ^typed windowactivate\n"
    for line in [
        "search --name x windowactivate type hi",
        "search --name 'a type b'",  # a word spaced as an input command: Python tells
        "mousemove 1 2",
        "/tmp/s.xdo",
        "",
    ]:
        assert run(line) == 1, line  # through Python
