"""The recorded exchanges as a tree, and the walk that finds a request's answer.

Each exchange is a node: `prompt` holds the turns the agent added since its parent's
answer (the first node of a conversation: all of them), `answer` what the model said.
A request's turns are walked from the root: a child whose prompt matches the next turns
as history and whose answer is the next (assistant) turn is followed; a child whose
prompt matches the last turns, screenshots judged as screens, is a hit. On a miss the
walk says where the request departs (the parent and position a new exchange hangs from)
and why the closest child did not match.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from mmcli.llm.conversation import (
    IdMap,
    LiveImage,
    normalize,
    same_message,
    same_turns,
)
from mmcli.llm.screens import Screen, judge
from mmcli.llm.shapes import Shape
from mmcli.screen.matcher import Policy


@dataclass
class Node:
    id: int
    parent: int | None
    api: str
    setup: str
    prompt: list[Any]
    answer: dict[str, Any]
    created: datetime
    streamed: bool = False


@dataclass
class Conversation:
    """A request in comparable form."""

    api: str
    setup: dict[str, Any]
    digest: str
    turns: list[Any]
    ids: IdMap
    stream: bool


KEYED_HEADERS = ("anthropic-beta", "anthropic-version", "openai-beta")
"""Headers that select the API's behaviour (beta features, the API's version): part of the
cache key. No other header is (API keys, user agents, retry counts)."""


def conversation(
    shape: Shape,
    body: dict[str, Any],
    values: Mapping[str, str],
    headers: Iterable[tuple[str, str]] = (),
    query: str = "",
) -> Conversation:
    """`body` in comparable form. Its setup, the cache key besides the turns, is every
    field but the conversation and `shape.unkeyed`, the `KEYED_HEADERS` among `headers`
    and every parameter of the `query` string."""
    ids = IdMap()
    setup, turns = shape.split(body)
    keyed = _keyed_headers(headers)
    if keyed:
        setup["$headers"] = keyed
    if query:
        setup["$query"] = sorted(parse_qsl(query, keep_blank_values=True))
    setup = normalize(setup, ids, values)
    text = json.dumps(
        {"api": shape.name, **setup},
        sort_keys=True,
        separators=(",", ":"),
        default=lambda image: "$image",  # an image in a system prompt: compared as present
    )
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return Conversation(
        shape.name, setup, digest, normalize(turns, ids, values), ids, body.get("stream") is True
    )


def _keyed_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The `KEYED_HEADERS` a request carries; a list's order does not count (`a,b` = `b,a`)."""
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in KEYED_HEADERS:
            items = [v.strip() for v in value.split(",") if v.strip()]
            out[key] = ",".join(sorted({*out.get(key, "").split(","), *items} - {""}))
    return out


@dataclass
class Walk:
    hit: Node | None
    parent: int | None
    position: int
    """How many of the request's turns the tree already holds (the new prompt starts here)."""
    reason: str = ""


@dataclass
class Tree:
    nodes: dict[int, Node] = field(default_factory=dict)
    setups: dict[str, dict[str, Any]] = field(default_factory=dict)
    screens: dict[str, Screen] = field(default_factory=dict)

    def children(self, parent: int | None) -> list[Node]:
        return [n for n in self.nodes.values() if n.parent == parent]

    def next_id(self) -> int:
        return max(self.nodes, default=0) + 1

    def branches(self) -> int:
        """Exchanges that start a branch: a second (third...) child of the same parent."""
        count: dict[int | None, int] = {}
        for n in self.nodes.values():
            count[n.parent] = count.get(n.parent, 0) + 1
        return sum(c - 1 for p, c in count.items() if p is not None)

    def find(self, conv: Conversation, policy: Policy) -> Walk:
        reasons: list[str] = []
        best = Walk(None, None, 0)

        def visit(parent: int | None, position: int) -> Walk | None:
            nonlocal best
            if position > best.position or best.parent is None:
                best = Walk(None, parent, position)
            rest = len(conv.turns) - position
            for child in self.children(parent):
                if child.setup != conv.digest:
                    continue
                size = len(child.prompt)
                if size == rest:
                    screen_ok = self._judge(policy, reasons)
                    if same_turns(child.prompt, conv.turns[position:], screen_ok):
                        return Walk(child, parent, position)
                elif (
                    size < rest
                    and same_turns(child.prompt, conv.turns[position : position + size], None)
                    and same_message(child.answer["message"], conv.turns[position + size], None)
                ):
                    found = visit(child.id, position + size + 1)
                    if found is not None:
                        return found
            return None

        found = visit(None, 0)
        if found is not None:
            return found
        if not reasons:
            reasons.append(
                "no recorded exchange continues this conversation"
                if self.nodes
                else "nothing recorded yet"
            )
        best.reason = reasons[0]
        return best

    def _judge(
        self, policy: Policy, reasons: list[str]
    ) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
        def screen_ok(recorded: dict[str, Any], live: dict[str, Any]) -> bool:
            screen = self.screens.get(str(recorded.get("$screen")))
            image = live.get("$image")
            if screen is None or not isinstance(image, LiveImage):
                return False
            verdict = judge(screen, image, policy)
            if verdict is None:
                reasons.append("a screenshot in the request is not a readable image")
                return False
            if not verdict.ok:
                reasons.append(f"the screenshot differs: {verdict.summary()}")
            return verdict.ok

        return screen_ok

    def add(
        self,
        conv: Conversation,
        walk: Walk,
        answer: dict[str, Any],
        prompt: list[Any],
    ) -> Node:
        node = Node(
            self.next_id(),
            walk.parent,
            conv.api,
            conv.digest,
            prompt,
            answer,
            datetime.now(UTC).replace(microsecond=0),
            conv.stream,
        )
        self.nodes[node.id] = node
        self.setups.setdefault(conv.digest, conv.setup)
        return node
