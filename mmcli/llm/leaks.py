"""Keeping secret values out of a model-API recording: what the model typed, and the
screenshots that may show it.

A secret the model types whole is a `{{key}}` placeholder by the time an answer is stored;
one typed in pieces (`type 4711`, then `type -XYZ`) is not. As for screen recordings
(`mmcli.capture.secrets`, with the same `params.leaked_in`), what is left is checked
before a recording is saved: a piece of a secret of at least `params.FRAGMENT` characters
anywhere in what an answer says or passes to a tool (its text, every string of every tool
call's input, whatever the tool), or in the text typed by consecutive answers that only
type (computer-use `type` actions, and `key` actions of one character), stops the save.

A screenshot sent after the model typed a secret may show it: `shown_regions` says where,
and the proxy paints those regions in the thumbnail it keeps (and masks them in the
fingerprint) before anything is stored, as `mm record` does for its screens.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmcli.errors import SecretLeak
from mmcli.llm.conversation import images, said
from mmcli.llm.document import LLMRecording
from mmcli.llm.screens import frame_of
from mmcli.llm.tree import Tree
from mmcli.model import PLACEHOLDER
from mmcli.params import leaked_in
from mmcli.screen.analysis import changed_regions, grow_to_text_run, merge_rects
from mmcli.screen.fingerprint import SCALE, Rect
from mmcli.screen.paint import text_mask


def typed_texts(message: Any) -> tuple[list[str], bool]:
    """The texts the answer's tool calls type (a `type` action's text, a `key` action's
    when it is one character), and whether typing is all it does (its text then runs on
    with the next answer's, as keys typed one after another)."""
    texts, only_typing = [], True
    calls = [item for item in said(message) if item[0] == "call"]
    for _, _, _, args in calls:
        text = args.get("text") if isinstance(args, dict) else None
        action = args.get("action") if isinstance(args, dict) else None
        if isinstance(text, str) and (action == "type" or (action == "key" and len(text) == 1)):
            texts.append(text)
        else:
            only_typing = False
    return texts, only_typing and bool(calls)


OPAQUE_KEYS = frozenset({"type", "id", "role", "tool_use_id", "tool_call_id", "signature", "data"})
"""Fields of an answer that name its parts or carry provider-opaque bytes (a thinking
block's signature, redacted thinking), not text the model wrote."""


def answer_strings(message: Any) -> list[str]:
    """Every text of an answer that is stored: what it says (thinking included) and every
    string of every tool call's input, also an OpenAI call's JSON arguments parsed."""
    out = list(_strings(message, None))
    for item in said(message):
        if item[0] == "call":
            out += _strings(item[3], None)
    return out


def _strings(value: Any, key: str | None) -> list[str]:
    if isinstance(value, str):
        return [] if key in OPAQUE_KEYS else [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, str(k))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, key)]
    return []


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
        texts = answer_strings(rec.tree.nodes[node_id].answer.get("message"))
        for text in [*texts, run_of(node_id)]:
            key = leaked_in(text, secrets)
            if key is not None:
                raise SecretLeak(
                    f"exchange {node_id} of {rec.name!r} types or says (part of) the secret "
                    f"{key!r} in a way mm could not replace with a placeholder; nothing was saved"
                )


def types_secret(message: Any, secrets: Collection[str]) -> bool:
    """Whether an answer (or an assistant turn echoed back) types one of `secrets`, as
    the placeholder its value became."""
    texts, _ = typed_texts(message)
    return any(k in secrets for text in texts for k in PLACEHOLDER.findall(text))


@dataclass
class Shown:
    """What may show a secret, as of a point of a conversation."""

    typed: bool = False
    """A secret was typed before this point."""
    hidden: list[Rect] = field(default_factory=list)
    """The regions painted so far."""
    last: np.ndarray | None = None
    """The last screenshot's `small` luma image (painted where it was kept painted)."""


def shown_before(tree: Tree, parent: int | None, secrets: Collection[str]) -> Shown:
    """The state a new exchange below `parent` starts from, read from the tree: whether an
    answer on the path typed a secret, and the regions painted in the path's last kept
    screenshot, with its thumbnail to compare the next one with (the agent may have
    dropped the screenshots themselves from the history it sends)."""
    state = Shown()
    node = tree.nodes.get(parent) if parent is not None else None
    while node is not None:
        state.typed = state.typed or types_secret(node.answer.get("message"), secrets)
        if state.last is None:
            kept = [tree.screens.get(str(m.get("$screen"))) for m in images(node.prompt)]
            found = [s for s in kept if s is not None and s.reference is not None]
            if found:
                state.last = found[-1].reference
                state.hidden = list(found[-1].fingerprint.masks)
        node = tree.nodes.get(node.parent) if node.parent is not None else None
    return state


def shown_regions(
    turns: list[Any], secrets: Collection[str], state: Shown
) -> dict[int, list[Rect]]:
    """The regions to paint in each screenshot of a request's new `turns` (by `id` of its
    image marker) sent after a secret was typed (before them: `state`, or in them): every
    region that changed since the screenshot before it, widened to its run of text as a
    typed field's mask is (the field the secret went into, a status line repeating it, a
    dialog), and every region painted before. A screenshot with no earlier one of its
    size to compare with is painted whole."""
    out: dict[int, list[Rect]] = {}
    if not secrets:
        return out
    typed, hidden, last = state.typed, list(state.hidden), state.last
    for turn in turns:
        if isinstance(turn, dict) and turn.get("role") == "assistant":
            typed = typed or types_secret(turn, secrets)
            continue
        for marker in images(turn):
            frame = frame_of(marker["$image"]) if "$image" in marker else None
            if frame is None:
                continue  # not an image: nothing of it is kept
            if typed:
                if last is None or last.shape != frame.small.shape:
                    hidden.append(Rect(0, 0, frame.width, frame.height))
                else:
                    for r in changed_regions(last, frame.small):
                        if not any(r.inside(h.grow(SCALE)) for h in hidden):
                            hidden.append(text_mask(grow_to_text_run(frame.small, r)))
                hidden = merge_rects(hidden, margin=0)
                out[id(marker)] = list(hidden)
            last = frame.small
    return out
