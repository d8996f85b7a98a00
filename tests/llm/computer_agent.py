"""A computer-use loop written with the official SDKs, as such agents are written: it asks
the model, performs the tool calls on the real screen (screenshots with mss, input with
xdotool), sends back a screenshot after each, until the model stops calling tools.

    python computer_agent.py --api anthropic|openai [--stream] --task "type John Smith into
    the first field of the form"

It knows nothing of mm: its SDK reads ANTHROPIC_BASE_URL / OPENAI_BASE_URL as usual.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import subprocess
import sys
import time
from typing import Any

import mss
from PIL import Image

MAX_TURNS = 12


def screenshot() -> str:
    with getattr(mss, "MSS", mss.mss)() as grab:
        shot = grab.grab(grab.monitors[1])
    out = io.BytesIO()
    Image.frombytes("RGB", shot.size, shot.rgb).save(out, "PNG", compress_level=1)
    return base64.b64encode(out.getvalue()).decode("ascii")


def perform(action: dict[str, Any]) -> None:
    kind = action.get("action")
    if kind == "left_click":
        x, y = action["coordinate"]
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=True)
    elif kind == "type":
        subprocess.run(["xdotool", "type", "--delay", "20", action["text"]], check=True)
    elif kind == "key":
        subprocess.run(["xdotool", "key", action["text"]], check=True)
    if kind != "screenshot":
        settle()


def settle(limit: float = 3.0) -> None:
    """Wait until two grabs 0.1 s apart are equal: the app has repainted (under CPU load a
    fixed sleep would sometimes photograph half-typed text)."""
    time.sleep(0.2)
    deadline = time.monotonic() + limit
    with getattr(mss, "MSS", mss.mss)() as grab:
        before = grab.grab(grab.monitors[1]).rgb
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = grab.grab(grab.monitors[1]).rgb
            if now == before:
                return
            before = now


def run_anthropic(task: str, stream: bool) -> str:
    import anthropic

    client = anthropic.Anthropic(max_retries=0)
    tools: list[Any] = [
        {
            "type": "computer_20250124",
            "name": "computer",
            "display_width_px": 1280,
            "display_height_px": 800,
        }
    ]
    messages: list[Any] = [{"role": "user", "content": task}]
    for _ in range(MAX_TURNS):
        kwargs: dict[str, Any] = {
            "model": "claude-opus-4-5",
            "max_tokens": 1024,
            "system": "You operate a computer through the computer tool.",
            "tools": tools,
            "messages": messages,
        }
        if stream:
            with client.messages.stream(**kwargs) as s:
                response = s.get_final_message()
        else:
            response = client.messages.create(**kwargs)
        content = [b.model_dump(exclude_none=True) for b in response.content]
        messages.append({"role": "assistant", "content": content})
        calls = [b for b in response.content if b.type == "tool_use"]
        if not calls:
            return "".join(b.text for b in response.content if b.type == "text")
        results = []
        for call in calls:
            perform(dict(call.input))  # type: ignore[call-overload]
            image = {"type": "base64", "media_type": "image/png", "data": screenshot()}
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": [{"type": "image", "source": image}],
                }
            )
        messages.append({"role": "user", "content": results})
    raise SystemExit("too many turns")


def run_openai(task: str, stream: bool) -> str:
    import openai

    client = openai.OpenAI(max_retries=0)
    tools: list[Any] = [
        {
            "type": "function",
            "function": {
                "name": "computer",
                "description": "Act on the screen: screenshot, left_click, type, key.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string"},
                        "coordinate": {"type": "array", "items": {"type": "integer"}},
                        "text": {"type": "string"},
                    },
                    "required": ["action"],
                },
            },
        }
    ]
    messages: list[Any] = [
        {"role": "system", "content": "You operate a computer through the computer tool."},
        {"role": "user", "content": task},
    ]
    for _ in range(MAX_TURNS):
        if stream:
            text, calls = "", {}
            chunks = client.chat.completions.create(
                model="gpt-4o", messages=messages, tools=tools, stream=True
            )
            for chunk in chunks:
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                text += delta.content or ""
                for part in delta.tool_calls or []:
                    call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.id or call["id"]
                    if part.function is not None:
                        call["name"] += part.function.name or ""
                        call["arguments"] += part.function.arguments or ""
            tool_calls = [calls[i] for i in sorted(calls)]
        else:
            response = client.chat.completions.create(
                model="gpt-4o", messages=messages, tools=tools
            )
            message = response.choices[0].message
            text = message.content or ""
            tool_calls = [
                {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                for c in message.tool_calls or []
                if c.type == "function"
            ]
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
        if tool_calls:
            assistant["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in tool_calls
            ]
        messages.append(assistant)
        if not tool_calls:
            return text
        for c in tool_calls:
            perform(json.loads(c["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": "done"})
        url = "data:image/png;base64," + screenshot()
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "The screen now:"},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
        )
    raise SystemExit("too many turns")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--api", choices=("anthropic", "openai"), required=True)
    p.add_argument("--stream", action="store_true")
    p.add_argument("--task", required=True)
    a = p.parse_args()
    run = run_anthropic if a.api == "anthropic" else run_openai
    try:
        print(run(a.task, a.stream), file=sys.stderr)
    except Exception as e:  # the SDK's error for a refused call: say it, exit 1
        print(f"agent: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
