"""The benchmark's agent: performs a plan of screen actions the way real agents act.

    python -m benchmarks.desktop.agent PLAN.json [--style pyautogui|xdotool] [--seed N]

A plan is a JSON list of {"op": "click", "x", "y"} | {"op": "write", "text"} |
{"op": "press", "key"} | {"op": "hotkey", "keys"} | {"op": "drag", "x", "y", "x2", "y2"}
(the left button held from the first point to the second). Between actions the agent "thinks" a
random 0.2-0.9 s (seeded), so recordings of the same task differ in their timing as real
ones do. Styles:
`pyautogui` (calls pyautogui, which `mm record` hooks) and `xdotool` (runs xdotool
command lines, as the widely copied computer-use reference agent does).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import time
from pathlib import Path
from typing import Any

PYAUTOGUI_KEYS = {
    "asterisk": "*",
    "comma": ",",
    "Return": "enter",
    "Tab": "tab",
    "End": "end",
    "Left": "left",
}


def act_pyautogui(step: dict[str, Any]) -> None:
    import pyautogui

    pyautogui.PAUSE = 0
    pyautogui.FAILSAFE = False
    if step["op"] == "click":
        pyautogui.click(step["x"], step["y"])
    elif step["op"] == "write":
        pyautogui.write(step["text"], interval=0.02)
    elif step["op"] == "press":
        pyautogui.press(PYAUTOGUI_KEYS.get(step["key"], step["key"]))
    elif step["op"] == "hotkey":
        pyautogui.hotkey(*(PYAUTOGUI_KEYS.get(key, key) for key in step["keys"]))
    elif step["op"] == "drag":
        pyautogui.moveTo(step["x"], step["y"])
        pyautogui.dragTo(step["x2"], step["y2"], duration=0.4, button="left")


def act_xdotool(step: dict[str, Any]) -> None:
    if step["op"] == "click":
        argv = ["xdotool", "mousemove", str(step["x"]), str(step["y"]), "click", "1"]
    elif step["op"] == "write":
        argv = ["xdotool", "type", "--delay", "20", step["text"]]
    elif step["op"] == "hotkey":
        argv = ["xdotool", "key", "+".join(step["keys"])]
    elif step["op"] == "drag":
        argv = ["xdotool", "mousemove", str(step["x"]), str(step["y"]), "mousedown", "1",
                "mousemove", str(step["x2"]), str(step["y2"]), "mouseup", "1"]  # fmt: skip
    else:
        argv = ["xdotool", "key", step["key"]]
    subprocess.run(argv, check=True)


STYLES = {"pyautogui": act_pyautogui, "xdotool": act_xdotool}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path)
    parser.add_argument("--style", choices=sorted(STYLES), default="pyautogui")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 0.9))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    act = STYLES[args.style]
    for step in json.loads(args.plan.read_text()):
        time.sleep(rng.uniform(*args.think))
        act(step)
    time.sleep(rng.uniform(*args.think))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
