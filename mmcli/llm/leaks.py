"""Keeping secret values out of a model-API recording: what the model typed.

A secret the model types whole is a `{{key}}` placeholder by the time an answer is stored;
one typed in pieces (`type 4711`, then `type -XYZ`) is not. As for screen recordings
(`mmcli.capture.secrets`, with the same `params.leaked_in`), what is left is checked
before a recording is saved: a piece of a secret of at least `params.FRAGMENT` characters
in the text of a computer-use `type` action, or in the text typed by consecutive such
answers, stops the save.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmcli.errors import SecretLeak
from mmcli.llm.conversation import said
from mmcli.llm.document import LLMRecording
from mmcli.params import leaked_in


def typed_texts(message: Any) -> tuple[list[str], bool]:
    """The texts the answer's tool calls type, and whether typing is all it does (its
    text then runs on with the next answer's, as keys typed one after another)."""
    texts, only_typing = [], True
    calls = [item for item in said(message) if item[0] == "call"]
    for _, _, _, args in calls:
        if (
            isinstance(args, dict)
            and args.get("action") == "type"
            and isinstance(args.get("text"), str)
        ):
            texts.append(args["text"])
        else:
            only_typing = False
    return texts, only_typing and bool(calls)


def find_leak(rec: LLMRecording, new: list[int], secrets: Mapping[str, str]) -> None:
    """Raise `SecretLeak` (naming the secret's key, never its value) when the exchanges
    `new` of `rec` keep a piece of a secret the model typed."""
    if not secrets:
        return
    runs: dict[int, str] = {}

    def run_of(node_id: int | None) -> str:
        """What consecutive typing-only answers typed, up to and including `node_id`."""
        if node_id is None or node_id not in rec.tree.nodes:
            return ""
        if node_id not in runs:
            node = rec.tree.nodes[node_id]
            texts, only_typing = typed_texts(node.answer.get("message"))
            runs[node_id] = run_of(node.parent) + "".join(texts) if only_typing else ""
        return runs[node_id]

    for node_id in sorted(new):
        texts, _ = typed_texts(rec.tree.nodes[node_id].answer.get("message"))
        for text in [*texts, run_of(node_id)]:
            key = leaked_in(text, secrets)
            if key is not None:
                raise SecretLeak(
                    f"exchange {node_id} of {rec.name!r} types (part of) the secret {key!r} "
                    "in pieces mm could not replace with a placeholder; nothing was saved"
                )
