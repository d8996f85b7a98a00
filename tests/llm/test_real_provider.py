"""Smoke test against the real providers; runs only where an API key is set.

Records a one-call agent written with the official SDK (text only, no screen) and replays
it with no model at all: the answer must come back from memory, and the key must not be
in the store. Needs network access to the provider.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

AGENTS = {
    "anthropic": (
        "import anthropic; r = anthropic.Anthropic().messages.create("
        "model='claude-haiku-4-5', max_tokens=20, "
        "messages=[{'role': 'user', 'content': 'Reply with the single word: pong'}]); "
        "print(r.content[0].text.strip())"
    ),
    "openai": (
        "import openai; r = openai.OpenAI().chat.completions.create(model='gpt-4o-mini', "
        "messages=[{'role': 'user', 'content': 'Reply with the single word: pong'}]); "
        "print(r.choices[0].message.content.strip())"
    ),
}
KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def mm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmcli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("api", sorted(AGENTS))
def test_record_then_replay_without_the_model(api: str, isolated_store: Path) -> None:
    key = os.environ.get(KEYS[api])
    if not key:
        pytest.skip(f"{KEYS[api]} is not set")
    agent = [sys.executable, "-c", AGENTS[api]]
    recorded = mm("record", "smoke", "--llm", "--", *agent)
    assert recorded.returncode == 0, recorded.stderr
    replayed = mm("replay", "smoke", "--no-agent")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout
    stored = "".join(p.read_text(errors="replace") for p in isolated_store.rglob("*.toml"))
    assert key not in stored
