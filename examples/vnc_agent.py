"""A plan-following agent that acts only through a VNC client (vncdotool), as an agent
driving a remote desktop (a Windows VM, a container) does.

It connects to `MM_VNC_ADDRESS` (HOST:PORT) with the password in `MM_VNC_PASSWORD`:
under `mm record --display vnc://...` that is mm's endpoint for the run. The plan is a
JSON list of actions, each one of

    {"click": [x, y]}   {"type": "text"}   {"key": "enter"}   {"hotkey": ["ctrl", "s"]}

A dialog it knows how to dismiss is described by a JSON file (`--dialog FILE`, written by
the app that shows it: {"ok": [x, y]}); when the file exists the agent clicks OK first,
as an agent that reads the screen would. Run by a replay's fallback it starts at
`MM_RESUME_STEP` (the steps before it are done).

    python examples/vnc_agent.py --plan plan.json [--dialog dialog.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

KEYS = {"enter": "enter", "backspace": "bsp", "tab": "tab", "esc": "esc"}
PAUSE = 0.3
"""Seconds between actions (an agent's think time, short)."""
KEY_PAUSE = 0.012


def connect() -> Any:
    from vncdotool import api

    address = os.environ.get("MM_VNC_ADDRESS")
    if not address:
        sys.exit("vnc_agent: MM_VNC_ADDRESS (HOST:PORT) is not set")
    host, _, port = address.rpartition(":")
    return api.connect(f"{host}::{port}", password=os.environ.get("MM_VNC_PASSWORD"))


def act(client: Any, step: dict[str, Any]) -> None:
    if "click" in step:
        x, y = step["click"]
        client.mouseMove(int(x), int(y))
        client.mousePress(1)
    elif "type" in step:
        for char in str(step["type"]):
            client.keyPress(char)
            time.sleep(KEY_PAUSE)
    elif "key" in step:
        client.keyPress(KEYS.get(step["key"], step["key"]))
    elif "hotkey" in step:
        client.keyPress("-".join(KEYS.get(k, k) for k in step["hotkey"]))
    else:
        raise ValueError(f"unknown step {step!r}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Follow a plan of actions through a VNC client.")
    p.add_argument("--plan", type=Path, required=True, help="JSON list of actions")
    p.add_argument("--dialog", type=Path, help="JSON file a dialog to dismiss is described in")
    args = p.parse_args(argv)
    plan = json.loads(args.plan.read_text())
    start = int(os.environ.get("MM_RESUME_STEP", "0"))
    client = connect()
    try:
        if args.dialog is not None and args.dialog.exists():
            print("vnc_agent: dismissing the dialog", file=sys.stderr)
            act(client, {"click": json.loads(args.dialog.read_text())["ok"]})
            deadline = time.monotonic() + 10
            while args.dialog.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        for step in plan[start:]:
            time.sleep(PAUSE)
            print(f"vnc_agent: {step}", file=sys.stderr)
            act(client, step)
        time.sleep(PAUSE)
    finally:
        client.disconnect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
