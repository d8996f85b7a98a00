"""Hand-edited recordings that ask for what no real recording holds: refused as a whole at
load, one line naming the file and the problem, exit 1, nothing done. And big but honest
recordings: shown without a recursion limit, their long actions stopped by Ctrl-C."""

from __future__ import annotations

import copy
import json
import re
import signal
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from PIL import Image
from typer.testing import CliRunner, Result

from mmcli.backends.fake import FakeBackend
from mmcli.cli.app import app
from mmcli.errors import Aborted, RecordingCorrupt
from mmcli.model import Action, ActionKind, Recording, Step
from mmcli.params import Values
from mmcli.replay.replayer import Replayer
from mmcli.replay.report import ReplayOptions
from mmcli.screen.fingerprint import Fingerprint, Grid
from mmcli.store import codec
from mmcli.store.recordings import Store
from mmcli.verbs.replay import replay_named as replay
from tests.faults.conftest import mm, one_line_error
from tests.helpers import CREATED, form_screen, sample_recording

runner = CliRunner()
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
DOC = tomllib.loads(codec.dumps(sample_recording("x")))
"""Steps: 0 click (100, 200); 1 type; 2 hotkey; 3 right double-click (300, 400); 4 press."""


def edited(**changes: Any) -> dict[str, Any]:
    """The sample document with `changes`: "steps.N.action.clicks" style paths."""
    doc = copy.deepcopy(DOC)
    for path, value in changes.items():
        node = doc
        *parents, last = path.split("__")
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return doc


def whole_screen_masks(doc: dict[str, Any]) -> dict[str, Any]:
    for step in doc["steps"]:
        step["screen"]["masks"] = [[0, 0, 1920, 1080]]
    return doc


HOSTILE: dict[str, tuple[dict[str, Any], str]] = {
    "click-off-left": (
        edited(steps__0__action__x=-1, steps__0__action__y=-1),
        "steps[0] (id 0).action.x is off the recorded screen (-1, screen side 1920)",
    ),
    "click-off-right": (
        edited(steps__0__action__x=30000, steps__0__action__y=30000),
        "action.x is off the recorded screen (30000",
    ),
    "a-billion-clicks": (edited(steps__0__action__clicks=10**9), "clicks must be 1 to 10"),
    "huge-scroll": (
        edited(steps__0__action__kind="scroll", steps__0__action__amount=2**62),
        "amount must be within ±10000",
    ),
    "ten-million-characters": (
        edited(steps__1__action__text="a" * 10_000_000),
        "action.text: 10000000 characters (at most 100000)",
    ),
    "no-target-patch": (
        edited(steps__0__screen__patch=None, steps__0__screen__target=None),
        "steps[0] (id 0).screen: a pointer step needs its target patch",
    ),
    "masks-over-everything": (
        whole_screen_masks(edited()),
        "masks leave out 100% of the screen (at most 50%)",
    ),
    "zero-size": (
        edited(steps__0__screen__size=[0, 0]),
        "steps[0] (id 0).screen.size 0x0 is no screen",
    ),
    "pointer-off-screen": (edited(steps__0__screen__pointer=[5, 2000]), "pointer is off"),
    "too-many-keys": (edited(steps__2__action__keys=["a"] * 11), "at most 10 keys"),
    "hostile-param-name": (edited(params=["a\nb"]), "is not a param name"),
}


def save_hostile(store: Path, name: str) -> Path:
    doc, _ = HOSTILE[name]
    store.mkdir(exist_ok=True)
    path = store / f"{name}.toml"
    path.write_text(tomli_w.dumps({**doc, "name": name}))
    return path


def one_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("mm: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], result.stderr
    assert "Traceback" not in result.stderr
    return errors[0]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_recordings_are_refused_whole(name: str, isolated_store: Path) -> None:
    path = save_hostile(isolated_store, name)
    before = path.read_bytes()
    for args in (["show", name], ["show", name, "--html", str(isolated_store / "r.html")]):
        result = runner.invoke(app, args, env=ENV)
        assert result.exit_code == 1, result.output
        message = one_line(result)
        assert message.startswith(f"mm: error: {path}: "), message
        assert HOSTILE[name][1] in message
    assert not (isolated_store / "r.html").exists()
    # `mm ls` skims a document it has not indexed (its header and step lines: thousands
    # of recordings are listed in seconds), so it lists this one; opening it refuses it.
    listed = json.loads(runner.invoke(app, ["ls", "--json"], env=ENV).stdout)
    assert [row["name"] for row in listed] == [name]
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["click-off-left", "a-billion-clicks", "masks-over-everything"])
def test_replay_of_a_hostile_recording_does_nothing(name: str, isolated_store: Path) -> None:
    save_hostile(isolated_store, name)
    backend = FakeBackend(form_screen())
    with pytest.raises(RecordingCorrupt, match=re.escape(HOSTILE[name][1])):
        replay(Store(), backend, name, Values({"name": "Ann"}), ReplayOptions(timeout=0.1))
    assert backend.performed == [] and backend.grabs == 0


@pytest.mark.e2e
def test_real_replay_refuses_a_click_off_the_screen(xdisplay: str, isolated_store: Path) -> None:
    path = save_hostile(isolated_store, "click-off-left")

    def pointer() -> str:
        out = subprocess.run(["xdotool", "getmouselocation"], capture_output=True, text=True)
        return out.stdout.split(" screen:")[0]

    before = pointer()
    result = mm("replay", "click-off-left", "--no-agent", "--param", "name=Ann", timeout=60)
    assert result.returncode == 1
    assert one_line_error(result.stderr) == (
        f"mm: error: {path}: steps[0] (id 0).action.x is off the recorded screen "
        "(-1, screen side 1920)"
    )
    assert pointer() == before


def test_a_pathological_toml_key_is_refused_quickly(isolated_store: Path) -> None:
    # One 100,000-part dotted key: Python's TOML reader takes minutes on it.
    isolated_store.mkdir()
    path = isolated_store / "dotted.toml"
    path.write_text("a" + ".a" * 100_000 + " = 1\n")
    started = time.monotonic()
    result = mm("ls", "--json", timeout=30)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 20
    (row,) = json.loads(result.stdout)
    assert row["error"] == f"{path}: a dotted key of more than 64 parts; not an mm recording"


# ---- big honest recordings --------------------------------------------------------------


def long_recording(name: str, steps: int) -> Recording:
    """A chain of `steps` key presses, each with a tiny screen check."""
    fp = Fingerprint(1920, 1080, Grid(1, 1, (5,), (1,), (2,)), None, None, ())
    chain = [
        Step(i, i - 1 if i else None, Action(ActionKind.PRESS, keys=("tab",)), fp)
        for i in range(steps)
    ]
    return Recording(name=name, steps=chain, created=CREATED)


@pytest.mark.parametrize("steps", [1_000, 10_000])
def test_show_walks_a_long_recording(steps: int, tmp_path: Path) -> None:
    Store().save(long_recording("long", steps))
    result = runner.invoke(app, ["show", "long"], env=ENV)
    assert result.exit_code == 0, result.output[-2000:]
    assert f"{steps:>3}. press tab" in result.stdout
    page = tmp_path / "long.html"
    result = runner.invoke(app, ["show", "long", "--html", str(page)], env=ENV)
    assert result.exit_code == 0, result.output[-2000:]
    assert page.read_text().count("class='step") == steps


@pytest.mark.parametrize(
    "action",
    [
        Action(ActionKind.TYPE, text="x" * 5_000),
        Action(ActionKind.PRESS, keys=("down",), clicks=1_000),
        Action(ActionKind.SCROLL, x=100, y=200, amount=-10_000),
    ],
    ids=["type", "press", "scroll"],
)
def test_ctrl_c_stops_a_long_action_between_two_pieces(action: Action) -> None:
    base = sample_recording("long")
    rec = Recording(
        name="long", steps=[Step(0, None, action, base.steps[0].fingerprint)], created=CREATED
    )
    screen = Image.new("RGB", (1920, 1080), "black")
    backend = FakeBackend(screen)
    replayer = Replayer(Store(), backend, rec, Values(), ReplayOptions(timeout=0.5))
    replayer.judge.first_match = (  # type: ignore[method-assign]
        lambda children, frame, offset, stack=None: _match(children[0], frame)
    )

    def interrupted(fake: FakeBackend, done: Action) -> None:
        replayer.interrupt.signum = signal.SIGINT  # Ctrl-C while the first piece runs

    backend.on_action = interrupted
    with pytest.raises(Aborted, match="interrupted"):
        replayer.run()
    assert len(backend.performed) == 1
    assert backend.performed[0].kind is action.kind


def _match(step: Step, frame: Any) -> Any:
    from mmcli.replay.judge import Match

    return Match(step, None, frame)
