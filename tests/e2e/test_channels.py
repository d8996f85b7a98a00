"""Agents that act through `xdotool` command lines or paste from the clipboard, recorded
unchanged on a desktop with a window manager, against a third-party GTK app (zenity)."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop import Desktop, need, zenity_form
from tests.e2e.conftest import mm

pytestmark = pytest.mark.e2e

FIELDS = ["Name", "Email"]
WHERE = """eval "$(xdotool search --sync --name '^Signup$' getwindowgeometry --shell)"
name_at="$((X + 151)) $((Y + 33))"
email_at="$((X + 151)) $((Y + 73))"
"""
XDOTOOL_AGENT = (
    "set -e\n"
    + WHERE
    + """xdotool mousemove --sync $name_at click 1
name="${MM_PARAM_NAME:-Ada Lovelace}"
# the reference agent's way: the text in chunks, one xdotool per chunk
for ((i = 0; i < ${#name}; i += 5)); do
  xdotool type --delay 5 -- "${name:i:5}"
done
xdotool mousemove --sync $email_at click 1
xdotool type --delay 5 -- "ada@x.org"
# an agent looks at the screen between actions: GTK fades the focus ring meanwhile
xdotool key Tab sleep 0.4 key Tab sleep 0.4 key Return
"""
)
PASTING_AGENT = (
    "set -e\n"
    + WHERE
    + """xdotool mousemove --sync $name_at click 1
printf %s "$MM_PARAM_NAME" | xclip -selection clipboard >/dev/null 2>&1
xdotool key ctrl+v
xdotool mousemove --sync $email_at click 1
xdotool type -- "zoe@x.org"
# an agent looks at the screen between actions: GTK fades the focus ring meanwhile
xdotool key Tab sleep 0.4 key Tab sleep 0.4 key Return
"""
)

PYPERCLIP_LIKE_AGENT = """import os, subprocess, sys, time
import pyautogui

where = subprocess.run(
    ["xdotool", "search", "--sync", "--name", "^Signup$", "getwindowgeometry", "--shell"],
    capture_output=True, text=True, check=True,
).stdout
geometry = dict(line.split("=", 1) for line in where.split())
x, y = int(geometry["X"]), int(geometry["Y"])
pyautogui.PAUSE = 0.1
pyautogui.click(x + 151, y + 33)
# what pyperclip.copy does on X11
subprocess.run(["xclip", "-selection", "clipboard"], input=os.environ["MM_PARAM_NAME"].encode(),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
pyautogui.hotkey("ctrl", "v")
pyautogui.click(x + 151, y + 73)
pyautogui.write("zoe@x.org")
for key in ("tab", "tab", "enter"):
    time.sleep(0.4)
    pyautogui.press(key)
"""


@pytest.fixture(scope="module")
def desktop() -> Iterator[Desktop]:
    with Desktop() as d:
        yield d


@pytest.fixture
def on_desktop(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> Desktop:
    monkeypatch.setenv("DISPLAY", desktop.display)
    need("zenity", "xclip")
    return desktop


def agent(tmp: Path, script: str) -> list[str]:
    path = tmp / "agent.sh"
    path.write_text(script)
    return ["bash", str(path)]


def steps(store: Path, name: str) -> list[dict[str, object]]:
    doc = tomllib.loads((store / f"{name}.toml").read_text())
    return [s["action"] for s in doc["steps"]]


def kinds(actions: list[dict[str, object]]) -> list[object]:
    return [a["kind"] for a in actions]


@pytest.fixture(scope="module")
def signup(desktop: Desktop, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The xdotool agent recorded once (name typed in chunks, as a param)."""
    need("zenity")
    root = tmp_path_factory.mktemp("signup")
    store = root / "store"
    command = agent(root, XDOTOOL_AGENT)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DISPLAY", desktop.display)
        with zenity_form(desktop, "Signup", FIELDS) as form:
            result = mm("--store", str(store), "record", "signup", "--observe", "0",
                        "--param", "name=Ada Lovelace", "--", *command)  # fmt: skip
            assert result.returncode == 0, result.stderr
            assert form.submitted() == "Ada Lovelace|ada@x.org"
    return store, command


def copy_of(signup: tuple[Path, list[str]], isolated_store: Path) -> Path:
    shutil.copytree(signup[0], isolated_store, dirs_exist_ok=True)
    return isolated_store


def test_xdotool_agent_is_recorded_with_chunks_as_one_param_and_replays_another_value(
    signup: tuple[Path, list[str]], on_desktop: Desktop, isolated_store: Path
) -> None:
    store = copy_of(signup, isolated_store)
    actions = steps(store, "signup")
    assert kinds(actions) == ["click", "type", "click", "type", "press", "press", "press"]
    assert actions[1]["text"] == "{{name}}"  # three chunks, one typed text, a placeholder
    assert [a.get("keys") for a in actions[4:]] == [["tab"], ["tab"], ["enter"]]
    assert "Lovelace" not in (store / "signup.toml").read_text()

    with zenity_form(on_desktop, "Signup", FIELDS) as form:
        result = mm("replay", "signup", "--no-agent", "--param", "name=Grace Hopper")
        assert result.returncode == 0, result.stderr
        assert form.submitted() == "Grace Hopper|ada@x.org"


def test_xdotool_agent_heals_a_moved_window_and_the_branch_replays_without_it(
    signup: tuple[Path, list[str]], on_desktop: Desktop, isolated_store: Path
) -> None:
    store = copy_of(signup, isolated_store)
    with zenity_form(on_desktop, "Signup", FIELDS) as form:
        form.move(300, 200)
        result = mm("replay", "signup", "--param", "name=Alan Turing", "--timeout", "3", "--json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["outcome"] == "healed" and report["agent_steps"] == 7, report
        assert form.submitted() == "Alan Turing|ada@x.org"
    assert len(steps(store, "signup")) == 14  # the trunk and a branch the agent learned

    with zenity_form(on_desktop, "Signup", FIELDS) as form:
        form.move(300, 200)
        result = mm("replay", "signup", "--param", "name=Alan Kay", "--timeout", "3", "--json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["agent_returncode"] is None and report["steps_replayed"] == 7, report
        assert "handing over" not in result.stderr
        assert form.submitted() == "Alan Kay|ada@x.org"


@pytest.mark.parametrize("channel", ["xdotool", "pyautogui"])
def test_pasted_text_is_recorded_as_typed_text_with_its_param_and_replayed(
    on_desktop: Desktop, isolated_store: Path, tmp_path: Path, channel: str
) -> None:
    if channel == "xdotool":
        command = agent(tmp_path, PASTING_AGENT)
    else:
        (tmp_path / "agent.py").write_text(PYPERCLIP_LIKE_AGENT)
        command = [sys.executable, str(tmp_path / "agent.py")]
    with zenity_form(on_desktop, "Signup", FIELDS) as form:
        result = mm("record", "paste", "--observe", "0", "--param", "name=Zoë Ada",
                    "--", *command)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert form.submitted() == "Zoë Ada|zoe@x.org"
    assert "(pasted from the clipboard)" in result.stderr
    actions = steps(isolated_store, "paste")
    assert kinds(actions) == ["click", "type", "click", "type", "press", "press", "press"]
    assert actions[1]["text"] == "{{name}}"

    with zenity_form(on_desktop, "Signup", FIELDS) as form:
        result = mm("replay", "paste", "--no-agent", "--param", "name=Émile Zola")
        assert result.returncode == 0, result.stderr
        assert form.submitted() == "Émile Zola|zoe@x.org"


def test_unsupported_xdotool_input_fails_the_recording_loudly(
    on_desktop: Desktop, isolated_store: Path, tmp_path: Path
) -> None:
    command = agent(tmp_path, "xdotool mousemove 5 5 keydown shift keyup shift\n")
    result = mm("record", "held", "--observe", "0", "--", *command)
    assert result.returncode == 1
    assert "xdotool keydown shift" in result.stderr and "nothing was saved" in result.stderr
    assert not (isolated_store / "held.toml").exists()
