"""Fast tests of request matching: ids, params, history with dropped screenshots,
screenshots judged as screens, and the stored document."""

from __future__ import annotations

import base64
import copy
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from mmcli.errors import RecordingCorrupt
from mmcli.llm.conversation import IdMap, denormalize, normalize, same, same_message
from mmcli.llm.document import LLMRecording, dumps, load, loads, save
from mmcli.llm.proxy import Session
from mmcli.llm.shapes import SHAPES
from mmcli.llm.tree import conversation
from mmcli.screen.matcher import Policy
from mmcli.store.recordings import Store

ANTHROPIC = SHAPES["anthropic"]


def screenshot(box_at: tuple[int, int] = (200, 150), fmt: str = "PNG") -> str:
    image = Image.new("RGB", (1280, 800), (217, 217, 217))
    draw = ImageDraw.Draw(image)
    x, y = box_at
    draw.rectangle((x, y, x + 300, y + 24), fill=(255, 255, 255), outline=(90, 90, 90))
    draw.text((20, 20), "Acme Loan Intake", fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, fmt)
    return base64.b64encode(out.getvalue()).decode("ascii")


def image_block(data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def tool_use(call_id: str, **action: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "computer", "input": action}


def result(call_id: str, *content: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": list(content)}


def body(*turns: Any, system: str = "You use a computer.") -> dict[str, Any]:
    return {
        "model": "claude-x",
        "max_tokens": 100,
        "system": system,
        "tools": [{"type": "computer_20250124", "name": "computer"}],
        "messages": list(turns),
    }


def answer(*content: Any) -> dict[str, Any]:
    return ANTHROPIC.answer_of(
        {"content": list(content), "stop_reason": "tool_use", "model": "claude-x"}
    )


TASK = {"role": "user", "content": "Type John Smith into the form"}


def recorded_session(values: dict[str, str] | None = None) -> Session:
    """Three exchanges of a computer-use loop: screenshot, click, type."""
    session = Session(LLMRecording("t", datetime_now()), values or {}, replay=True)
    shot = screenshot()
    steps = [
        (body(TASK), answer(tool_use("toolu_A", action="screenshot"))),
        (
            body(
                TASK,
                {"role": "assistant", "content": [tool_use("toolu_A", action="screenshot")]},
                {"role": "user", "content": [result("toolu_A", image_block(shot))]},
            ),
            answer(tool_use("toolu_B", action="left_click", coordinate=[350, 162])),
        ),
    ]
    for request, reply in steps:
        conv = conversation(ANTHROPIC, request, session.values)
        session.learn(ANTHROPIC, conv, session.recording.tree.find(conv, Policy.DEFAULT), reply)
    return session


def datetime_now() -> Any:
    from mmcli.llm.document import now

    return now()


def second_request(shot: str, ids: tuple[str, str] = ("toolu_A", "toolu_B")) -> dict[str, Any]:
    return body(
        TASK,
        {"role": "assistant", "content": [tool_use(ids[0], action="screenshot")]},
        {"role": "user", "content": [result(ids[0], image_block(shot))]},
    )


def test_tool_ids_are_numbered_in_order_of_appearance() -> None:
    a, b = IdMap(), IdMap()
    one = normalize([tool_use("toolu_X", action="a"), result("toolu_X")], a, {})
    two = normalize([tool_use("call_Y", action="a"), result("call_Y")], b, {})
    assert one == two
    assert one[0]["id"] == one[1]["tool_use_id"] == "#1"


def test_an_answer_gets_fresh_ids_used_consistently_afterwards() -> None:
    ids = IdMap()
    normalize([tool_use("toolu_live", action="a")], ids, {})
    stored = {"content": [tool_use("#1", action="b"), tool_use("#2", action="c")]}
    fresh = iter(["toolu_new1", "toolu_new2"])
    live = denormalize(stored, ids, lambda: next(fresh), {})
    assert [b["id"] for b in live["content"]] == ["toolu_live", "toolu_new1"]
    again = normalize([result("toolu_new1")], ids, {})
    assert again[0]["tool_use_id"] == "#2"


def test_params_are_placeholders_and_rendered_back() -> None:
    stored = normalize({"text": "Type John Smith now"}, IdMap(), {"name": "John Smith"})
    assert stored == {"text": "Type {{name}} now"}
    assert denormalize(stored, IdMap(), str, {"name": "Jane Doe"}) == {"text": "Type Jane Doe now"}


def test_cache_control_and_nulls_do_not_count() -> None:
    plain = normalize({"type": "text", "text": "hi"}, IdMap(), {})
    marked = normalize(
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}, "citations": None},
        IdMap(),
        {},
    )
    assert same(plain, marked, lambda r, live: True)


def test_history_tolerates_dropped_or_replaced_screenshots() -> None:
    shot = {"$screen": "s1"}
    recorded = [{"type": "tool_result", "tool_use_id": "#1", "content": [shot]}]
    dropped = [{"type": "tool_result", "tool_use_id": "#1", "content": []}]
    replaced = [
        {"type": "tool_result", "tool_use_id": "#1", "content": [{"type": "text", "text": "[x]"}]}
    ]
    assert same(recorded, dropped, None)
    assert same(recorded, replaced, None)
    assert not same(recorded, dropped, lambda r, live: True)  # the last turns: exact
    extra = [{"type": "tool_result", "tool_use_id": "#1", "content": [shot, shot]}]
    assert not same(recorded, extra, None)


def test_an_echoed_assistant_turn_compares_by_what_it_said_and_did() -> None:
    recorded = {"role": "assistant", "content": [tool_use("#1", action="screenshot")]}
    echoed = {
        "role": "assistant",
        "content": [{**tool_use("#1", action="screenshot"), "caller": {"type": "direct"}}],
    }
    other = {"role": "assistant", "content": [tool_use("#1", action="left_click")]}
    assert same_message(recorded, echoed, None)
    assert not same_message(recorded, other, None)


def test_the_same_screen_with_fresh_ids_is_answered_from_memory() -> None:
    session = recorded_session()
    conv = conversation(ANTHROPIC, second_request(screenshot(), ("toolu_Q", "x")), {})
    walk = session.recording.tree.find(conv, Policy.DEFAULT)
    assert walk.hit is not None
    live = session.answer(ANTHROPIC, conv, walk)
    call = live["message"]["content"][0]
    assert call["input"] == {"action": "left_click", "coordinate": [350, 162]}
    assert call["id"].startswith("toolu_") and call["id"] != "toolu_Q"


def test_a_jpeg_of_the_same_screen_matches() -> None:
    session = recorded_session()
    conv = conversation(ANTHROPIC, second_request(screenshot(fmt="JPEG")), {})
    assert session.recording.tree.find(conv, Policy.DEFAULT).hit is not None


def test_a_changed_screen_misses_at_that_step_and_says_why() -> None:
    session = recorded_session()
    conv = conversation(ANTHROPIC, second_request(screenshot(box_at=(600, 400))), {})
    walk = session.recording.tree.find(conv, Policy.DEFAULT)
    assert walk.hit is None
    assert walk.parent == 1 and walk.position == 2
    assert "screenshot differs" in walk.reason


@pytest.mark.parametrize(
    "change",
    [
        {"system": "You are another agent."},
        {"model": "other-model"},
        {"tools": []},
    ],
)
def test_model_system_prompt_and_tools_must_be_the_same(change: dict[str, Any]) -> None:
    session = recorded_session()
    request = {**second_request(screenshot()), **change}
    conv = conversation(ANTHROPIC, request, {})
    assert session.recording.tree.find(conv, Policy.DEFAULT).hit is None


def test_a_different_task_text_misses() -> None:
    session = recorded_session()
    request = body({"role": "user", "content": "Type Jane Doe into the form"})
    conv = conversation(ANTHROPIC, request, {})
    assert session.recording.tree.find(conv, Policy.DEFAULT).hit is None


def test_a_param_in_the_task_matches_another_value() -> None:
    session = recorded_session({"name": "John Smith"})
    session.values = {"name": "Jane Doe"}
    request = body({"role": "user", "content": "Type Jane Doe into the form"})
    conv = conversation(ANTHROPIC, request, session.values)
    assert session.recording.tree.find(conv, Policy.DEFAULT).hit is not None


def test_document_round_trip_through_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    session = recorded_session()
    rec = session.recording
    save(store, rec, list(rec.tree.nodes))
    loaded = load(store, "t")
    assert len(loaded.tree.nodes) == 2
    assert all(s.reference is not None for s in loaded.tree.screens.values())
    conv = conversation(ANTHROPIC, second_request(screenshot()), {})
    assert loaded.tree.find(conv, Policy.DEFAULT).hit is not None
    assert "$image" not in store.path("t").read_text()  # no image data stored
    assert len(store.path("t").read_text()) < 20_000


def test_a_hostile_thumbnail_name_is_refused(tmp_path: Path) -> None:
    rec = recorded_session().recording
    text = dumps(rec)
    name = next(iter(rec.tree.screens.values())).thumbnail
    with pytest.raises(RecordingCorrupt, match=r"plain \.png file name"):
        loads(text.replace(name, "../../etc/passwd.png"), "t.toml")


def test_a_newer_format_is_refused() -> None:
    text = dumps(recorded_session().recording).replace("format_version = 2", "format_version = 9")
    with pytest.raises(RecordingCorrupt, match="newer"):
        loads(text, "t.toml")


def test_a_version_1_document_loads_with_its_command_s_placeholders() -> None:
    rec = recorded_session().recording
    rec.command = ["agent", "--pin", "{{pin}}"]
    text = dumps(rec).replace("format_version = 2", "format_version = 1")
    loaded = loads(text, "t.toml")
    assert loaded.command == ["agent", "--pin", "{{pin}}"]  # filled at a replay, as before
    assert "format_version = 2" in dumps(loaded)


def test_an_exchange_whose_parent_is_missing_is_refused() -> None:
    text = dumps(recorded_session().recording).replace("parent = 1", "parent = 7")
    with pytest.raises(RecordingCorrupt, match="parent 7"):
        loads(text, "t.toml")


def test_a_secret_never_reaches_the_document() -> None:
    session = recorded_session({"password": "hunter2"})
    request = body({"role": "user", "content": "Log in with hunter2"})
    conv = conversation(ANTHROPIC, request, session.values)
    reply = answer(tool_use("toolu_Z", action="type", text="hunter2"))
    session.learn(ANTHROPIC, conv, session.recording.tree.find(conv, Policy.DEFAULT), reply)
    text = dumps(session.recording)
    assert "hunter2" not in text and "{{password}}" in text
    assert copy.deepcopy(session.values) == {"password": "hunter2"}


def test_a_history_whose_older_screenshots_were_dropped_still_matches() -> None:
    session = recorded_session()
    shot = screenshot()
    click = tool_use("toolu_B", action="left_click", coordinate=[350, 162])
    third = body(
        TASK,
        {"role": "assistant", "content": [tool_use("toolu_A", action="screenshot")]},
        {"role": "user", "content": [result("toolu_A", image_block(shot))]},
        {"role": "assistant", "content": [click]},
        {"role": "user", "content": [result("toolu_B", image_block(shot))]},
    )
    conv = conversation(ANTHROPIC, third, {})
    reply = answer(tool_use("toolu_C", action="type", text="John Smith"))
    session.learn(ANTHROPIC, conv, session.recording.tree.find(conv, Policy.DEFAULT), reply)
    for older in ([], [{"type": "text", "text": "[screenshot removed]"}]):
        trimmed = copy.deepcopy(third)
        trimmed["messages"][2]["content"][0]["content"] = older
        walk = session.recording.tree.find(conversation(ANTHROPIC, trimmed, {}), Policy.DEFAULT)
        assert walk.hit is not None and walk.hit.id == 3
    changed = copy.deepcopy(third)
    changed["messages"][3]["content"][0]["input"]["coordinate"] = [10, 10]
    walk = session.recording.tree.find(conversation(ANTHROPIC, changed, {}), Policy.DEFAULT)
    assert walk.hit is None and walk.parent == 1  # departs after the first answer


def test_an_unreadable_screenshot_is_saved_and_never_matches(tmp_path: Path) -> None:
    session = recorded_session()
    broken = second_request(base64.b64encode(b"not an image").decode())
    broken["messages"][0] = {"role": "user", "content": "Another task"}
    conv = conversation(ANTHROPIC, broken, {})
    reply = answer(tool_use("toolu_Z", action="screenshot"))
    session.learn(ANTHROPIC, conv, session.recording.tree.find(conv, Policy.DEFAULT), reply)
    store = Store(tmp_path / "store")
    rec = session.recording
    save(store, rec, list(rec.tree.nodes))
    again = conversation(ANTHROPIC, broken, {})
    assert load(store, "t").tree.find(again, Policy.DEFAULT).hit is None
