"""The proxy in-process with the official SDKs as clients and the fake model upstream:
event streams passed through and re-synthesized, refusals surfaced, `mm proxy` routing."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mmcli.llm.document import LLMRecording, load, now
from mmcli.llm.proxy import Serving, Session, single_route, upstreams
from mmcli.llm.run import Router
from mmcli.llm.shapes import SHAPES, parse_sse
from mmcli.params import Values
from mmcli.screen.matcher import Policy
from mmcli.store.recordings import Store
from tests.llm.fake_model import FakeModel

TASK = "Please type Ann Lee into the first field of the form."
TOOLS: list[Any] = [{"type": "computer_20250124", "name": "computer"}]
OPENAI_TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "computer", "parameters": {"type": "object"}}}
]


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def serve(session: Session) -> Serving:
    return Serving(single_route(session))


def new_session(model: FakeModel | None) -> Session:
    up = upstreams({}, model.url) if model is not None else None
    return Session(LLMRecording("t", now()), {}, upstream=up)


def ask_anthropic(root: str, stream: bool) -> Any:
    client = anthropic.Anthropic(base_url=root, api_key="k", max_retries=0)
    kwargs: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": TASK}],
    }
    if stream:
        with client.messages.stream(**kwargs) as s:
            events = [e.type for e in s]
            return s.get_final_message(), events
    return client.messages.create(**kwargs), []


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_answer_from_memory_is_what_the_model_said(
    model: FakeModel, stream: bool
) -> None:
    session = new_session(model)
    with serve(session) as server:
        first, first_events = ask_anthropic(server.base, stream)
        second, second_events = ask_anthropic(server.base, stream)
    assert model.calls == 1
    assert session.stats.hits == 1
    assert second.content[0].input == first.content[0].input == {"action": "screenshot"}
    assert second.stop_reason == "tool_use"
    assert second.content[0].id != first.content[0].id
    assert kinds(second_events) == kinds(first_events)  # a stream of the same shape


def kinds(events: list[str]) -> list[str]:
    """Event types in order of first appearance, pings left out (chunking may differ)."""
    return [e for e in dict.fromkeys(events) if e != "ping"]


def ask_openai(root: str, stream: bool) -> tuple[str, str, str]:
    client = openai.OpenAI(base_url=root + "/v1", api_key="k", max_retries=0)
    messages: Any = [{"role": "user", "content": TASK}]
    if not stream:
        r = client.chat.completions.create(model="m", messages=messages, tools=OPENAI_TOOLS)
        call = r.choices[0].message.tool_calls[0]  # type: ignore[index]
        return call.id, call.function.arguments, str(r.choices[0].finish_reason)  # type: ignore[union-attr]
    chunks = client.chat.completions.create(
        model="m",
        messages=messages,
        tools=OPENAI_TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    call_id, args, finish = "", "", ""
    for chunk in chunks:
        for choice in chunk.choices:
            for part in choice.delta.tool_calls or []:
                call_id = part.id or call_id
                args += (part.function.arguments or "") if part.function else ""
            finish = choice.finish_reason or finish
    return call_id, args, finish


@pytest.mark.parametrize("stream", [True, False])
def test_openai_answer_from_memory_is_what_the_model_said(model: FakeModel, stream: bool) -> None:
    session = new_session(model)
    with serve(session) as server:
        first = ask_openai(server.base, stream)
        second = ask_openai(server.base, stream)
    assert model.calls == 1
    assert second[1:] == first[1:] == ('{"action": "screenshot"}', "tool_calls")
    assert second[0].startswith("call_") and second[0] != first[0]


def test_a_miss_without_a_model_is_an_error_the_sdk_raises() -> None:
    session = new_session(None)
    with serve(session) as server, pytest.raises(anthropic.UnprocessableEntityError) as e:
        ask_anthropic(server.base, stream=False)
    assert "no recorded answer" in str(e.value)
    assert session.stats.refused == 1


def test_an_unreachable_model_is_a_bad_gateway() -> None:
    session = Session(LLMRecording("t", now()), {}, upstream=upstreams({}, "http://127.0.0.1:9"))
    with serve(session) as server, pytest.raises(anthropic.InternalServerError):
        ask_anthropic(server.base, stream=False)


def test_mm_proxy_routes_by_name_and_saves_each_answer(model: FakeModel, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    router = Router(store, Values(), Policy.DEFAULT, upstreams({}, model.url))
    with Serving(router) as server:
        ask_anthropic(server.base + "/r/one", stream=False)
        assert len(load(store, "one").tree.nodes) == 1  # saved before the answer ended
        ask_anthropic(server.base + "/r/one", stream=True)
        ask_openai(server.base + "/r/two", stream=False)
    assert model.calls == 2
    fresh = Router(store, Values(), Policy.DEFAULT, None)  # no model: memory only
    with Serving(fresh) as server:
        ask_openai(server.base + "/r/two", stream=True)
        with pytest.raises(anthropic.NotFoundError):
            ask_anthropic(server.base + "/r/../etc", stream=False)
    assert model.calls == 2


def test_event_streams_round_trip() -> None:
    answers = {
        "anthropic": {
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Clicking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "computer", "input": {"a": 1}},
                ],
            },
            "stop": "tool_use",
            "model": "m",
            "usage": {"input_tokens": 3, "output_tokens": 4},
        },
        "openai": {
            "message": {
                "role": "assistant",
                "content": "Clicking.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "computer", "arguments": '{"a": 1}'},
                    }
                ],
            },
            "stop": "tool_calls",
            "model": "m",
            "usage": {},
        },
    }
    for name, answer in answers.items():
        shape = SHAPES[name]
        lines = b"".join(shape.stream(answer, {})).splitlines(keepends=True)
        assert shape.collect_stream(parse_sse(lines)) == answer


def test_mm_proxy_refuses_a_screen_recording_by_name(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.root.mkdir()
    store.path("screen").write_text('format_version = 1\nname = "screen"\n')
    router = Router(store, Values(), Policy.DEFAULT, None)
    with Serving(router) as server, pytest.raises(anthropic.BadRequestError) as e:
        ask_anthropic(server.base + "/r/screen", stream=False)
    assert "not a model-API recording" in str(e.value)


def test_the_query_string_reaches_the_model(model: FakeModel) -> None:
    session = new_session(model)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": TASK}]})
    with serve(session) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        conn.request("POST", f"/t/{server.token}/v1/messages?beta=true", body, {"x-api-key": "k"})
        assert conn.getresponse().status == 200
        conn.close()
    assert model.paths == ["/v1/messages?beta=true"]
